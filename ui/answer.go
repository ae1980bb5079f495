package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/report"
)

// answerView is the Which method to trust tab: for each dataset the run's
// answer (report.Answer) — its headline beside its outcome's icon, the
// combined ranking of the methods over the admitted protocols with their
// intervals and whether each beats Random, what the admitted protocols
// say of each pair (a contradiction marked), the input on which two
// contradicting protocols part the most, and each protocol's admission
// with what decided it. The same words as REPORT.md's first section.
// show, when set, shows the run's figure of the given name suffix (the
// evidence of a contradiction) beside the tab.
func answerView(d report.Diagnostics, show func(suffix string)) []fyne.CanvasObject {
	as := d.Confidence.Trust
	if len(as) == 0 {
		return []fyne.CanvasObject{wrapped("No answer for this run: it needs a protocol with a headline score evaluated on per-input values.")}
	}
	var out []fyne.CanvasObject
	for _, a := range as {
		var body []fyne.CanvasObject
		head := wrapped(a.Headline + ".")
		head.TextStyle.Bold = true
		if a.Outcome == report.DoesNotHold {
			head.Importance = widget.WarningImportance
		}
		body = append(body, container.NewBorder(nil, nil, widget.NewIcon(outcomeIcon(a.Outcome)), nil, head))
		if len(a.Methods) > 0 {
			var rows [][]string
			for _, m := range a.Methods {
				beats := "(control)"
				if !m.Control {
					beats = string(m.BeatsRandom)
				}
				rows = append(rows, []string{m.Method, ciText(m.MeanRank.Estimate, m.MeanRank.Lo, m.MeanRank.Hi), report.Fixed2(m.PFirst), beats})
			}
			seeds := ""
			if a.Seeds > 1 {
				seeds = fmt.Sprintf(" and %d seeds", a.Seeds)
			}
			body = append(body, wrapped(fmt.Sprintf("Combined ranking over the admitted protocols: each method's rank on each input under each, averaged (1 is best), with its 95%% interval from resampling the %s%s.", report.Count(a.Units, "input"), seeds)),
				textTable([]string{"method", "mean rank [95% interval]", "P(first)", "beats Random"}, rows))
		}
		if len(a.Pairs) > 0 {
			body = append(body, bold("Each pair across the admitted protocols"))
			for _, p := range a.Pairs {
				l := wrapped(fmt.Sprintf("%s, %s — %s: %s", p.A, p.B, p.Verdict, p.Words))
				if p.Verdict == report.PairContradiction {
					l.Importance, l.TextStyle.Bold = widget.WarningImportance, true
				}
				body = append(body, l)
			}
		}
		if dv := a.Divergence; dv != nil {
			body = append(body, wrapped("Where they diverge most: "+dv.Words+"."))
			if dv.Shown >= 0 && show != nil {
				suffix := report.EvidenceName(a.Dataset)
				b := widget.NewButton("Show that input under each protocol", func() { show(suffix) })
				body = append(body, container.NewHBox(b))
			}
		}
		if a.CheckLine != "" {
			body = append(body, wrapped(a.CheckLine+"."))
		}
		body = append(body, bold("Which protocols are admitted, and why"))
		form := container.New(layout.NewFormLayout())
		for _, ad := range a.Admissions {
			why := ad.Words
			if ad.Admit == report.SetAside && ad.Check != "" {
				why = fmt.Sprintf("%s (%s: %s)", ad.Words, ad.Check, ad.Threshold)
			}
			name := widget.NewLabel(ad.Protocol + ": " + string(ad.Admit))
			if ad.Admit == report.SetAside {
				name.Importance = widget.WarningImportance
			}
			form.Add(name)
			form.Add(wrapped(why))
		}
		body = append(body, form)
		out = append(out, widget.NewCard("Which method to trust on "+a.Dataset, "", container.NewVBox(body...)))
	}
	return out
}

// answerHeadline is the answers' short headlines, one line each, for the
// top of Results: what the run says before anything else.
func answerHeadline(d report.Diagnostics) string {
	var lines []string
	for _, a := range d.Confidence.Trust {
		h := a.Short
		if len(d.Confidence.Trust) > 1 {
			h = a.Dataset + ": " + h
		}
		lines = append(lines, h+".")
	}
	return strings.Join(lines, "\n")
}
