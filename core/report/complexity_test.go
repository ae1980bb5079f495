package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// Five methods whose Deletion score rises exactly with their maps'
// sparseness (the Complexity protocol beside it): the card says the
// ranking follows the maps' complexity (ρ = +1) and flags it; the
// Complexity setting's own card does not measure itself, and says so
// (not that no Complexity ran).
func TestCardSaysWhenARankingFollowsTheMapsComplexity(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var recs []store.Record
	for m, meth := range []string{"gradient", "ig", "smoothgrad", "gradxinput", "random"} {
		for _, p := range []struct{ proto, name string }{{"Deletion", "lerf_minus_morf"}, {"Complexity", "sparseness"}} {
			v := make([]float32, 300)
			var sum float64
			for i := range v {
				v[i] = float32(0.2*float64(m) + 0.01*rng.NormFloat64())
				sum += float64(v[i])
			}
			res := &protocol.Result{Protocol: p.proto, Method: meth, Config: map[string]any{},
				Scalars: []protocol.Scalar{{Name: p.name, Value: sum / 300, Better: protocol.Higher}},
				Units:   protocol.Units{N: 300, Names: []string{p.name}, Values: [][]float32{v}}}
			recs = append(recs, store.Record{Dataset: "d", Model: "m", Method: meth, Protocol: p.proto, Seed: 1, Result: res})
		}
	}
	d := Diagnose(recs)
	found := 0
	for _, row := range d.Confidence.Card {
		switch row.Protocol {
		case "Deletion":
			found++
			if f := row.Complexity; math.Abs(f.Value-1) > 1e-12 || !f.Flag || !strings.Contains(row.Verdict, "sparser maps win") {
				t.Errorf("Deletion: complexity finding %+v, verdict %q", f, row.Verdict)
			}
		case "Complexity":
			found++
			if f := row.Complexity; !math.IsNaN(f.Value) || f.Flag || !strings.Contains(f.Words, "this is the Complexity run") {
				t.Errorf("Complexity measured against itself: %+v", f)
			}
		}
	}
	if found != 2 {
		t.Fatalf("%d cards, want Deletion's and Complexity's", found)
	}
}
