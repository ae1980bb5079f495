package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/report"
)

// The answer tab says the answer as REPORT.md does — the headline, the
// combined ranking, each pair, each protocol's admission with what
// decided it, the checks' line — and where protocols contradict, a
// button shows the evidence figure of that dataset.
func TestAnswerTabSaysTheAnswerAndShowsItsEvidence(t *testing.T) {
	test.NewTempApp(t)
	a := report.Answer{Dataset: "d", Outcome: report.DoesNotHold,
		Headline:   "Contradiction: no method is better than the others under the 2 admitted protocols (Deletion and ROAD)",
		Methods:    []report.TrustMethod{{Method: "ig", BeatsRandom: report.Holds}, {Method: "random", Control: true}},
		Pairs:      []report.TrustPair{{A: "ig", B: "gradient", Verdict: report.PairContradiction, Words: "Deletion ranks ig above gradient, ROAD the other way"}},
		Admissions: []report.Admission{{Protocol: "IROF", Admit: report.SetAside, Check: "Random control", Threshold: "told apart", Words: "random ranks above ig"}},
		Divergence: &report.Divergence{Shown: 3, Words: "the test set's input 3"},
		CheckLine:  "Noise resilience holds: …"}
	var shown string
	out := answerView(report.Diagnostics{Confidence: report.Confidence{Trust: []report.Answer{a}}}, func(s string) { shown = s })
	if len(out) != 1 {
		t.Fatalf("%d cards", len(out))
	}
	text := labelTexts(out[0])
	for _, want := range []string{a.Headline, "beats Random", "contradiction: Deletion ranks ig above gradient", "IROF: set aside", "random ranks above ig (Random control: told apart)", "Noise resilience holds"} {
		if !strings.Contains(text, want) {
			t.Errorf("the tab lacks %q:\n%s", want, text)
		}
	}
	var b *widget.Button
	find(out[0], func(o fyne.CanvasObject) bool {
		if x, ok := o.(*widget.Button); ok {
			b = x
		}
		return false
	})
	if b == nil {
		t.Fatal("no button for the evidence")
	}
	test.Tap(b)
	if shown != report.EvidenceName("d") {
		t.Errorf("the button shows %q", shown)
	}
}
