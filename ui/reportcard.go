package ui

import (
	"fmt"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/report"
	"faithlab/core/stats"
)

// reportCard is the Report card tab: for each protocol setting of the run,
// its verdict in words beginning with its outcome (holds, does not hold,
// inconclusive, not evaluated; its icon says which), the checks behind it
// (each flagged one marked), and its ranking — every method's score with
// its 95 % interval (‡ where the inputs are too few for it), the letters
// of the methods it cannot tell apart and the chance of ranking first —
// and each pair of methods, told apart or inconclusive with the smallest
// difference the run finds and about how many inputs (or seeds) would
// tell them apart; above them, whether the protocols agree and every two
// that order two methods oppositely (report.Contradiction).
func reportCard(d report.Diagnostics, left report.Left, done int) []fyne.CanvasObject {
	conf := d.Confidence
	var out []fyne.CanvasObject
	if head, rest := left.Incomplete(done); head != "" {
		out = append(out, widget.NewLabelWithStyle(head+" "+rest+".", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
		out[0].(*widget.Label).Wrapping = fyne.TextWrapWord
	}
	if len(conf.Missing) > 0 {
		var names []string
		for _, m := range conf.Missing {
			names = append(names, m.Protocol+" on "+m.Dataset)
		}
		out = append(out, wrapped(fmt.Sprintf("No intervals for %s: these results keep no per-input values (a run from before Faithlab kept them). Run the campaign again, in a new folder, to have them.", strings.Join(names, ", "))))
	}
	if len(conf.Rankings) == 0 {
		if len(out) == 0 {
			out = append(out, wrapped("No report card for this run: it needs a protocol with a headline score evaluated on per-input values."))
		}
		return out
	}
	for _, a := range conf.Agreement {
		out = append(out, widget.NewLabelWithStyle("Do the protocols agree on "+a.Dataset+"? "+capital(a.Says())+".", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
		out[len(out)-1].(*widget.Label).Wrapping = fyne.TextWrapWord
	}
	// Two protocols that order two methods oppositely, each order told
	// apart (report.Contradiction): said as the report says it.
	for _, c := range conf.Contradictions {
		l := wrapped("⚠ The protocols contradict each other on " + c.Dataset + ": " + c.Words + ".")
		l.Importance = widget.WarningImportance
		l.TextStyle.Bold = true
		out = append(out, l)
	}
	for _, r := range conf.Rankings {
		var row *report.CardRow
		for i := range conf.Card {
			if conf.Card[i].Dataset == r.Dataset && conf.Card[i].Protocol == r.Protocol {
				row = &conf.Card[i]
			}
		}
		var body []fyne.CanvasObject
		if row != nil {
			icon := outcomeIcon(row.Outcome)
			if row.Outcome == report.Holds && strings.Contains(row.Verdict, "caveats") {
				icon = theme.NewWarningThemedResource(theme.WarningIcon())
			}
			body = append(body, container.NewBorder(nil, nil, widget.NewIcon(icon), nil, wrapped(row.Verdict)))
			checks := container.New(layout.NewFormLayout())
			for _, f := range row.Findings() {
				name := widget.NewLabel(f.Name)
				if f.F.Flag {
					name.Importance = widget.WarningImportance
					name.SetText("⚠ " + f.Name)
				}
				checks.Add(name)
				checks.Add(wrapped(f.F.Words))
			}
			body = append(body, checks)
		}
		// Every cell whole, the table scrolling sideways where a method's
		// name with its parameters makes it wider than the panel (it must
		// not widen the window past the screen).
		var rows [][]string
		few := false
		for _, m := range r.Methods {
			name := m.Method
			if m.Weak {
				name += " !"
			}
			ci := ciText(m.CI.Estimate, m.CI.Lo, m.CI.Hi)
			if m.CI.Few && !math.IsNaN(m.CI.Lo) {
				ci, few = ci+" ‡", true
			}
			rows = append(rows, []string{name, ci, m.Letters, report.Fixed2(m.PFirst)})
		}
		body = append(body, textTable([]string{"method", "score [95% interval]", "group", "P(ranks first)"}, rows))
		if few {
			body = append(body, wrapped("‡ "+report.FewInputs))
		}
		if len(r.Pairs) > 0 {
			body = append(body, bold("Told apart? (paired test, Holm-corrected, 5 %)"))
			for _, p := range r.Pairs {
				l := wrapped(fmt.Sprintf("%s − %s: %s — %s", p.A, p.B, diffText(p), p.Words))
				if p.Outcome == report.Holds {
					l.TextStyle.Bold = true
				}
				body = append(body, l)
			}
		}
		sub := fmt.Sprintf("%s (%s) over %s × %s", r.Metric, strings.TrimSuffix(betterOf(r), " is better")+" is better", report.Count(r.Units, "input"), report.Count(r.Seeds, "seed"))
		if v := r.Verdict(); v != "" {
			sub += "; " + v
		}
		// The line under the title wraps (a card's subtitle would not, and
		// would widen the tab past the window).
		body = append([]fyne.CanvasObject{wrapped(sub)}, body...)
		out = append(out, widget.NewCard(r.Protocol+" on "+r.Dataset, "", container.NewVBox(body...)))
	}
	return out
}

// outcomeIcon is the icon of a statement's outcome: a tick where it
// holds, an error where it does not, a question where it is
// inconclusive, information where nothing judged it.
func outcomeIcon(o report.Outcome) fyne.Resource {
	switch o {
	case report.Holds:
		return theme.ConfirmIcon()
	case report.DoesNotHold:
		return theme.NewErrorThemedResource(theme.ErrorIcon())
	case report.Inconclusive:
		return theme.NewWarningThemedResource(theme.QuestionIcon())
	}
	return theme.InfoIcon()
}

// diffText is a pair's difference with its interval, or "no input
// differs" where none does.
func diffText(p report.Pair) string {
	if p.Diff.Method == stats.MethodNoneDiffer {
		return report.NoneDiffer
	}
	return ciText(p.Diff.Estimate, p.Diff.Lo, p.Diff.Hi)
}

// capital is s with its first letter a capital.
func capital(s string) string {
	r := []rune(s)
	if len(r) == 0 {
		return s
	}
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

func wrapped(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.Wrapping = fyne.TextWrapWord
	return l
}

func bold(s string) *widget.Label {
	return widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

// captionLabel is a label in the caption size, under an image.
func captionLabel(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.SizeName = theme.SizeNameCaptionText
	return l
}

// ciText writes a score with its interval.
func ciText(v, lo, hi float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	if math.IsNaN(lo) {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", v, lo, hi)
}

func betterOf(r report.Ranking) string {
	if r.Better == "lower" {
		return "lower is better"
	}
	return "higher is better"
}
