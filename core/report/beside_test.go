package report

import (
	"strings"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// A curve a protocol compares across a parameter (GOAR's cumulative
// misclassification with and without projection, Fig. 8) is drawn once
// more, its two settings side by side on one y range, the figure two
// columns wide; the trajectories among a record's samples draw no row.
func TestBesideFigureGolden(t *testing.T) {
	x := protocol.Values{0, 4, 8, 12}
	var recs []store.Record
	for _, proj := range []bool{false, true} {
		for m, name := range []string{"gradient", "random"} {
			y := make(protocol.Values, len(x))
			for i := range x {
				y[i] = min(1, float64(i)*0.2/float64(1+m))
				if proj {
					y[i] = min(1, float64(i)*0.15)
				}
			}
			g := protocol.GOAR{Strengths: x, NoProjection: proj}
			recs = append(recs, store.Record{Dataset: "gmm", Method: name, Protocol: "GOAR", Seed: 1,
				Result: &protocol.Result{Protocol: "GOAR", Method: name, Config: configOf(t, g),
					Curves:  []protocol.Curve{{Name: "cumulative_misclassification", X: x, Y: y}},
					Scalars: []protocol.Scalar{{Name: "area", Value: protocol.AUC(x, y) / 12, Better: protocol.Higher}}}})
		}
	}
	figs, err := Figures(recs, Confident(recs, ConfidenceOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var beside *Figure
	for i, f := range figs {
		names = append(names, f.Name)
		if strings.HasSuffix(f.Name, "beside_no_projection") {
			beside = &figs[i]
		}
	}
	if beside == nil || len(beside.Beside) != 1 {
		t.Fatalf("no side-by-side figure among %s", strings.Join(names, " "))
	}
	if w, _ := beside.size(); w != 2*Width {
		t.Errorf("side by side %v wide, want two columns", w)
	}
	matchGolden(t, *beside)
}

// configOf is a protocol's configuration as a Result records it.
func configOf(t *testing.T, p protocol.Protocol) map[string]any {
	t.Helper()
	res := map[string]any{}
	for _, q := range p.Info().Params {
		res[q.Name] = q.Default
	}
	return res
}
