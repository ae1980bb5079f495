package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/report"
	"faithlab/core/stats"
)

// The report card of a run with tasks missing opens saying so, as its
// REPORT.md does; a complete run's does not.
func TestReportCardOfAnIncompleteRunSaysSo(t *testing.T) {
	test.NewTempApp(t)
	out := reportCard(report.Diagnostics{}, report.Left{Failed: 1, NotRun: 3}, 2)
	l, ok := out[0].(*widget.Label)
	if !ok || !strings.HasPrefix(l.Text, "Incomplete: 4 of 6 tasks are missing (1 failed, 3 not run). The rankings rest on the 2 done") {
		t.Errorf("first line of an incomplete run's card: %#v", out[0])
	}
	for _, o := range reportCard(report.Diagnostics{}, report.Left{}, 6) {
		if l, ok := o.(*widget.Label); ok && strings.Contains(l.Text, "Incomplete") {
			t.Errorf("a complete run's card says %q", l.Text)
		}
	}
}

// Protocols that contradict each other are said on the report card as the
// report says them (report.Contradiction), with each card's own line.
func TestReportCardSaysProtocolsContradictEachOther(t *testing.T) {
	test.NewTempApp(t)
	words := "Deletion and ROAD order ig and gradient oppositely, each order told apart by its own paired test"
	rk := func(p string) report.Ranking {
		return report.Ranking{Dataset: "d", Protocol: p, Methods: []report.RankedMethod{{Method: "ig"}, {Method: "gradient"}}}
	}
	d := report.Diagnostics{Confidence: report.Confidence{
		Rankings:       []report.Ranking{rk("Deletion"), rk("ROAD")},
		Contradictions: []report.Contradiction{{Dataset: "d", First: "Deletion", Second: "ROAD", A: "ig", B: "gradient", Words: words}},
		Card: []report.CardRow{{Dataset: "d", Protocol: "Deletion", CanRank: true, Verdict: "Deletion ranks these methods, with caveats: ROAD orders ig and gradient the other way, each told apart",
			Protocols: report.Finding{Value: 1, Flag: true, Words: "ROAD ranks gradient above ig, which this setting ranks the other way"}}},
	}}
	var all strings.Builder
	for _, o := range reportCard(d, report.Left{}, 4) {
		all.WriteString(labelTexts(o))
	}
	if s := all.String(); !strings.Contains(s, "The protocols contradict each other on d: "+words) || !strings.Contains(s, "⚠ Other protocols") || !strings.Contains(s, "ROAD ranks gradient above ig") {
		t.Errorf("report card:\n%s", s)
	}
}

// A pair the paired test cannot tell apart is inconclusive on the card,
// with the smallest difference the run finds and about how many inputs
// would tell them apart; the card's verdict begins with its outcome, and
// the protocols' agreement with its.
func TestReportCardSaysInconclusiveWithHowManyInputs(t *testing.T) {
	test.NewTempApp(t)
	plan := "inconclusive: this run finds a difference of 0.047 or more 80 % of the time (at Holm's level 0.05); about 79 inputs would tell them apart"
	r := report.Ranking{Dataset: "d", Protocol: "Deletion",
		Methods: []report.RankedMethod{{Method: "ig", CI: stats.Interval{Estimate: 0.33}}, {Method: "gradient", CI: stats.Interval{Estimate: 0.306}}},
		Pairs:   []report.Pair{{A: "ig", B: "gradient", Diff: stats.Interval{Estimate: 0.024, Lo: -0.006, Hi: 0.06}, Outcome: report.Inconclusive, Words: plan}}}
	d := report.Diagnostics{Confidence: report.Confidence{
		Rankings: []report.Ranking{r},
		Card: []report.CardRow{{Dataset: "d", Protocol: "Deletion", Outcome: report.Inconclusive,
			Verdict: "Inconclusive: Deletion cannot yet rank these methods here: …; about 79 inputs would tell them apart"}},
		Agreement: []report.Agreement{{Dataset: "d", Outcome: report.Inconclusive, Words: "the 2 protocols agree strongly, but no more than chance would"}},
	}}
	var all strings.Builder
	for _, o := range reportCard(d, report.Left{}, 2) {
		all.WriteString(labelTexts(o))
	}
	s := all.String()
	for _, want := range []string{"Inconclusive: Deletion cannot yet rank these methods here", "ig − gradient: 0.024 [-0.006, 0.060] — " + plan,
		"; inconclusive: no clear winner — the best, ig, cannot be told apart from the runner-up, gradient; this run finds a difference of 0.047",
		"Do the protocols agree on d? Inconclusive: the 2 protocols agree strongly"} {
		if !strings.Contains(s, want) {
			t.Errorf("report card lacks %q:\n%s", want, s)
		}
	}
}
