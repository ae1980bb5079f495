package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// Summary is a run's headline scores as a text table, for a terminal:
// per dataset, a row per method and a column per protocol setting with
// the protocol's headline score (↑: higher is better, ↓: lower) and, where
// the results keep their per-input values, its 95 % interval (‡ where
// the inputs are too few for it: FewInputs) and the letters of the
// methods it cannot tell apart (d.Confidence); the star
// goes to a column's best method only where it is told apart from the
// runner-up. Without per-input values (a run from before they were kept),
// the mean over seeds ± its standard deviation, and a note that intervals
// need a re-run. Below: what each column is, whether the protocols
// agree, and every two that order two methods oppositely, each order told
// apart (Contradiction). Empty when no record has a headline score.
func Summary(recs []store.Record, d Diagnostics) string {
	c := newCampaign(recs)
	var b strings.Builder
	for _, ds := range c.datasets {
		type column struct {
			g *group
			m protocol.Metric
		}
		var cols []column
		var all []store.Record
		for _, g := range c.groups {
			if m, ok := g.info.Headline(); ok && g.dataset == ds {
				cols = append(cols, column{g, m})
				all = append(all, g.recs...)
			}
		}
		if len(cols) == 0 {
			continue
		}
		methods, _ := c.methodsOf(all)
		cells := make([][]string, len(methods))
		for i := range cells {
			cells[i] = make([]string, len(cols))
		}
		var notes []string
		anyWeak, anyCI, noCI, anyFew := false, false, false, false
		for j, col := range cols {
			_, by := c.methodsOf(col.g.recs)
			rk, ranked := d.Confidence.Ranking(ds, col.g.title)
			means := make([]float64, len(methods))
			best := -1
			for i, meth := range methods {
				v := present(scalars(by[meth], col.m.Name))
				mean, sd := meanSD(v)
				means[i] = mean
				k := slices.IndexFunc(rk.Methods, func(m RankedMethod) bool { return m.Method == meth })
				switch {
				case math.IsNaN(mean):
					cells[i][j] = "—"
				case ranked && k >= 0:
					cells[i][j] = strings.TrimSpace(cellOf(rk.Methods[k]) + " " + rk.Methods[k].Letters) // a weak method has none
					anyCI = true
					if rk.Methods[k].CI.Few {
						cells[i][j] += " ‡"
						anyFew = true
					}
				case len(v) > 1:
					cells[i][j] = number(mean) + " ± " + number(sd)
				default:
					cells[i][j] = number(mean)
				}
				if slices.ContainsFunc(d.Weak, func(w Weak) bool { return w.Dataset == ds && w.Protocol == col.g.title && w.Method == meth }) {
					cells[i][j] += " !" // ranks nothing: not a candidate for the best
					anyWeak = true
					continue
				}
				if !ranked && !math.IsNaN(mean) && (best < 0 || col.m.Better == protocol.Higher && mean > means[best] || col.m.Better == protocol.Lower && mean < means[best]) {
					best = i
				}
			}
			what := col.m.Name + " — " + col.m.Doc
			switch {
			case ranked && rk.Winner != "":
				cells[slices.Index(methods, rk.Winner)][j] += " *"
			case ranked && len(rk.Methods) > 1:
				what += "; " + rk.Verdict()
			case !ranked && best >= 0 && len(methods) > 1:
				cells[best][j] += " *"
				noCI = true
			}
			notes = append(notes, fmt.Sprintf("%s %s: %s", col.g.title, arrow(col.m.Better), what))
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		w := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
		fmt.Fprint(w, ds)
		for _, col := range cols {
			fmt.Fprintf(w, "\t%s %s", col.g.title, arrow(col.m.Better))
		}
		fmt.Fprintln(w)
		for i, meth := range methods {
			fmt.Fprintf(w, "%s\t%s\n", meth, strings.Join(cells[i], "\t"))
		}
		w.Flush()
		var legend []string
		if anyCI {
			n := seeds(all)
			over := "the test inputs"
			if n > 1 {
				over = fmt.Sprintf("%d seeds' means, the seed the unit", n)
			}
			legend = append(legend, fmt.Sprintf("[95%% interval over %s]; methods sharing a letter cannot be told apart (paired, Holm-corrected, 5%%); * best, told apart from the runner-up", over))
		}
		if anyFew {
			legend = append(legend, "‡ "+FewInputs)
		}
		if noCI {
			legend = append(legend, "* best in its column (no per-input values: intervals need a re-run)")
			if n := seeds(all); n > 1 {
				legend = append(legend, fmt.Sprintf("mean ± s.d. over %d seeds", n))
			}
		}
		if anyWeak {
			legend = append(legend, "! no method's retrained models learned in this setting (see the diagnostics): none is ranked")
		}
		writeNote(&b, strings.Join(legend, "; "))
		for _, n := range notes {
			writeNote(&b, n)
		}
		for _, a := range d.Confidence.Agreement {
			if a.Dataset == ds {
				writeNote(&b, "Do the protocols agree? "+a.Says())
			}
		}
		for _, c := range d.Confidence.Contradictions {
			if c.Dataset == ds {
				writeNote(&b, "Contradiction! "+c.Words)
			}
		}
	}
	return b.String()
}

// noteWidth is where the notes under a summary's table wrap: about a wide
// table's width, so that neither a terminal nor the workbench's Results
// screen (monospaced, 1 280 pixels) cuts them.
const noteWidth = 100

// writeNote writes one note under the table, indented by two spaces and
// wrapped at noteWidth between words, its further lines by four.
func writeNote(b *strings.Builder, text string) {
	line, indent := 0, "  "
	for _, w := range strings.Fields(text) {
		n := utf8.RuneCountInString(w)
		if line > len(indent) && line+1+n > noteWidth {
			b.WriteByte('\n')
			line, indent = 0, "    "
		}
		if line == 0 {
			b.WriteString(indent)
			line = len(indent)
		} else {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += n
	}
	b.WriteByte('\n')
}

// arrow is ↑ for higher is better, ↓ for lower.
func arrow(b protocol.Better) string {
	if b == protocol.Lower {
		return "↓"
	}
	return "↑"
}

// allEqual is whether every ranked method has the same score (true for
// fewer than two).
func (r Ranking) allEqual() bool {
	ranked := r.rankedOnly().Methods
	if len(ranked) < 2 {
		return true
	}
	for _, m := range ranked[1:] {
		if m.CI.Estimate != ranked[0].CI.Estimate {
			return false
		}
	}
	return true
}
