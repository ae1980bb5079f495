package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// Summary is a run's headline scores as a text table, for a terminal:
// per dataset, a row per method and a column per protocol setting with
// the protocol's headline score (↑: higher is better, ↓: lower), the mean
// over seeds ± its standard deviation where there are several, the best
// of each column marked *. A line per column below says which score it is.
// Empty when no record has a headline score.
func Summary(recs []store.Record) string {
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
		anyWeak := false
		for j, col := range cols {
			_, by := c.methodsOf(col.g.recs)
			means := make([]float64, len(methods))
			best := -1
			for i, meth := range methods {
				v := present(scalars(by[meth], col.m.Name))
				mean, sd := meanSD(v)
				means[i] = mean
				switch {
				case math.IsNaN(mean):
					cells[i][j] = "—"
				case len(v) > 1:
					cells[i][j] = number(mean) + " ± " + number(sd)
				default:
					cells[i][j] = number(mean)
				}
				if slices.ContainsFunc(by[meth], func(r store.Record) bool { return len(weak(r)) > 0 }) {
					cells[i][j] += " !" // ranks nothing: not a candidate for the best
					anyWeak = true
					continue
				}
				if !math.IsNaN(mean) && (best < 0 || col.m.Better == protocol.Higher && mean > means[best] || col.m.Better == protocol.Lower && mean < means[best]) {
					best = i
				}
			}
			if best >= 0 && len(methods) > 1 {
				cells[best][j] += " *"
			}
			notes = append(notes, fmt.Sprintf("  %s %s: %s — %s\n", col.g.title, arrow(col.m.Better), col.m.Name, col.m.Doc))
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
		b.WriteString("  * best in its column")
		if anyWeak {
			b.WriteString("; ! its retrained models learned little (see the diagnostics): not ranked")
		}
		if n := seeds(all); n > 1 {
			fmt.Fprintf(&b, "; mean ± s.d. over %d seeds", n)
		}
		b.WriteString("\n" + strings.Join(notes, ""))
	}
	return b.String()
}

// arrow is ↑ for higher is better, ↓ for lower.
func arrow(b protocol.Better) string {
	if b == protocol.Lower {
		return "↓"
	}
	return "↑"
}
