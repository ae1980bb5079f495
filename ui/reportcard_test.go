package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/report"
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
