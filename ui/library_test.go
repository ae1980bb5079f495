package ui

import (
	"os"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"

	"faithlab/core/data"
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

// The planted-truth set is offered among the datasets, described with its
// masks, and opens as any dataset, its masks with it.
func TestThePlantedSetOpensWithItsMasks(t *testing.T) {
	if _, err := os.Stat(data.FashionMNISTDir); err != nil {
		t.Skip("Fashion-MNIST is not installed (dataset-fashion-mnist)")
	}
	const id = "fashion-mnist-planted"
	wb, loop, _ := newTestWorkbench(t)
	loop.run(wb.Library.Refresh)
	loop.waitFor(t, "the datasets described", func() bool { return wb.Library.dsInfo[id] != "" })
	loop.run(func() {
		if !slices.Contains(wb.Library.datasets, id) || !strings.Contains(wb.Library.dsInfo[id], "a ground-truth mask per sample") {
			t.Errorf("datasets %q; %s described as %q", wb.Library.datasets, id, wb.Library.dsInfo[id])
		}
		if strings.Contains(wb.Library.dsInfo["fashion-mnist"], "mask") {
			t.Errorf("fashion-mnist described as %q", wb.Library.dsInfo["fashion-mnist"])
		}
		wb.State.OpenData(id)
	})
	loop.waitFor(t, id, func() bool { return wb.State.Data.Ref == id })
	loop.run(func() {
		d := wb.State.Data
		if d.Test.Len() != 10000 || len(d.Test.Masks) != 10000*784 || !slices.Contains(d.Fit, "goar-cnn") {
			t.Errorf("opened %d test samples, %d mask values, architectures %v", d.Test.Len(), len(d.Test.Masks), d.Fit)
		}
	})
}
