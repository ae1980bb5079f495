package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/report"
)

// diagTable is one kind of a run's bias checks as the table it is: a
// title, what it checks, a header and a row per check.
type diagTable struct {
	title, about string
	header       []string
	rows         [][]string
}

// diagnosticsTables lays a run's diagnostics (diagnostics.json) out as
// tables, one per kind of check, leaving out kinds the run has none of.
func diagnosticsTables(d report.Diagnostics) []diagTable {
	var out []diagTable
	if len(d.WeakModels) > 0 {
		t := diagTable{title: "Explained models that learned little",
			about:  "The model under explanation scored nearer chance (always the most common class) than a perfect score: its maps explain a model that knows little, so every protocol's verdict says little about the methods. Train it longer or on more samples.",
			header: []string{"dataset", "seed", "model", "test accuracy", "chance"}}
		for _, w := range d.WeakModels {
			t.rows = append(t.rows, []string{w.Dataset, fmt.Sprint(w.Seed), w.Model, f3(w.Accuracy), f3(w.Chance)})
		}
		out = append(out, t)
	}
	if len(d.Weak) > 0 {
		t := diagTable{title: "Retrainings that learned little",
			about:  "Settings where no method's retrained models learned: even the best scored nearer chance (always the most common class) than the explained model, so the retraining cannot tell the methods apart and none is ranked. Retrain longer or on more samples.",
			header: []string{"dataset", "protocol", "curve", "method", "best retrained", "chance", "explained model"}}
		for _, w := range d.Weak {
			t.rows = append(t.rows, []string{w.Dataset, w.Protocol, w.Curve, w.Method, f3(w.Best), f3(w.Chance), f3(w.Base)})
		}
		out = append(out, t)
	}
	if len(d.AtChance) > 0 {
		t := diagTable{title: "Retrained models at chance beside others that learned",
			about:  "These methods' retrained models stayed near chance at every rate while other methods' learned: they are ranked, as maps that removed what the models learn from; their masks (Inspect) tell that from maps that broke training.",
			header: []string{"dataset", "protocol", "curve", "method", "best retrained", "chance"}}
		for _, w := range d.AtChance {
			t.rows = append(t.rows, []string{w.Dataset, w.Protocol, w.Curve, w.Method, f3(w.Best), f3(w.Chance)})
		}
		out = append(out, t)
	}
	if len(d.TVFits) > 0 {
		t := diagTable{title: "What the masks' total variation explains",
			about:  "R² of the protocol's score against the masks' total variation over its (method, rate) points (DPI paper, Table 3): near 1, the score measures the masks' shape more than the maps' faithfulness.",
			header: []string{"dataset", "protocol", "curve", "R²", "points", "slope", "intercept", "note"}}
		for _, f := range d.TVFits {
			if f.Fit == nil {
				t.rows = append(t.rows, []string{f.Dataset, f.Protocol, f.Curve, "—", fmt.Sprint(len(f.Points)), "—", "—", f.Explained})
				continue
			}
			t.rows = append(t.rows, []string{f.Dataset, f.Protocol, f.Curve, f3(f.Fit.R2), fmt.Sprint(f.Fit.N),
				fmt.Sprintf("%.4g", f.Fit.Slope), fmt.Sprintf("%.4g", f.Fit.Intercept), ""})
		}
		out = append(out, t)
	}
	if len(d.Post) > 0 {
		t := diagTable{title: "Post-processed maps against plain ones",
			about:  "How often the post-processed maps scored better at the same (method, rate) (DPI paper, Table 2): smoothing that wins most while agreeing less with the model is the warning sign.",
			header: []string{"dataset", "protocol", "curve", "post-processing", "better", "of"}}
		for _, c := range d.Post {
			t.rows = append(t.rows, []string{c.Dataset, c.Protocol, c.Curve, c.Post, fmt.Sprint(c.Better), fmt.Sprint(c.Total)})
		}
		out = append(out, t)
	}
	var truth [][]string
	for _, c := range d.Truth {
		if c.Truth == "fa" || c.Truth == "rc" || c.Truth == "cos" {
			truth = append(truth, []string{c.Dataset, c.Protocol, c.Score, c.Truth, fmt.Sprintf("%+.2f", c.R), fmt.Sprint(c.Methods)})
		}
	}
	if len(truth) > 0 {
		out = append(out, diagTable{title: "Scores against ground-truth agreement",
			about:  "Pearson r across methods between each score and the maps' agreement with the known ground truth (GOAR, Table 1): a faithful score correlates with it.",
			header: []string{"dataset", "protocol", "score", "agreement", "r", "methods"}, rows: truth})
	}
	return out
}

func f3(v float64) string {
	if v == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f", v)
}

// diagnosticsView shows the tables, each under its title, every cell
// whole (textTable).
func diagnosticsView(tables []diagTable) []fyne.CanvasObject {
	if len(tables) == 0 {
		return []fyne.CanvasObject{wrapped("No diagnostics for this run: they need a retraining or imputation protocol over several rates and methods (the masks' total variation), post-processed maps beside plain ones, or a dataset with a known ground truth.")}
	}
	out := []fyne.CanvasObject{wrapped("What in this run's scores the protocols' biases may explain (the numbers of diagnostics.json).")}
	for _, t := range tables {
		grid := textTable(t.header, t.rows)
		about := widget.NewLabel(t.about)
		about.Wrapping = fyne.TextWrapWord
		about.SizeName = theme.SizeNameCaptionText
		out = append(out, bold(t.title), about, grid, widget.NewSeparator())
	}
	return out
}

// diagnosticsText is the tables as text, a line per row (tests).
func diagnosticsText(tables []diagTable) string {
	var b strings.Builder
	for _, t := range tables {
		b.WriteString(t.title + "\n" + strings.Join(t.header, " | ") + "\n")
		for _, r := range t.rows {
			b.WriteString(strings.Join(r, " | ") + "\n")
		}
	}
	return b.String()
}
