package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"
)

// A short training's time has a decimal, a long one none.
func TestSecondsTextKeepsShortTimes(t *testing.T) {
	for s, want := range map[float64]string{0.31: "0.3", 9.96: "10.0", 12.4: "12", 600: "600"} {
		if got := secondsText(s); got != want {
			t.Errorf("secondsText(%g) = %q, want %q", s, got, want)
		}
	}
}

// A report's words with '_' or '[' read as written in the dialog, not
// "lerf_ minus_ morf" or "[ 0.006, 0.035]".
func TestReportWordsAreNotSplitAtUnderscoresOrBrackets(t *testing.T) {
	rt := widget.NewRichTextFromMarkdown("- Ours: lerf_minus_morf, 0.019 [0.006, 0.035] of no_projection\\n")
	joinSplitWords(rt.Segments)
	var text func(segs []widget.RichTextSegment) string
	text = func(segs []widget.RichTextSegment) (out string) {
		for _, s := range segs {
			switch s := s.(type) {
			case *widget.ParagraphSegment:
				out += text(s.Texts)
			case *widget.ListSegment:
				out += text(s.Items)
			case *widget.TextSegment:
				out += s.Text
			}
		}
		return out
	}
	if got := text(rt.Segments); !strings.Contains(got, "lerf_minus_morf, 0.019 [0.006, 0.035] of no_projection") {
		t.Errorf("%q", got)
	}
}
