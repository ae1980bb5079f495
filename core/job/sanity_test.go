package job

import (
	"context"
	"strings"
	"testing"
)

// The sanity checks run from a spec with the method itself recomputing
// maps (Env.Explain): a map that ignores the model (Random) is unchanged
// by MPRT, Random Logit and the data randomisation test, and the gradient
// is not.
func TestSanityChecksRunFromASpec(t *testing.T) {
	src := `name: t
output: run
datasets: [{id: digits, train_samples: 300, test_samples: 40}]
model: {arch: mlp, epochs: 2}
methods: [gradient, random]
protocols:
  - {name: mprt, params: {samples: 20}}
  - {name: randomlogit, params: {samples: 20}}
  - {name: faithfulnessestimate, params: {samples: 10}}
  - {name: sufficiency, params: {samples: 40}}
  - {name: datarandomisation, params: {samples: 20}}
retrain: {epochs: 2}
`
	r := newRunner(t, t.TempDir(), src)
	if failed, err := r.Execute(context.Background()); err != nil || failed != 0 {
		for _, rec := range records(r.Run) {
			if rec.Error != "" {
				t.Errorf("%s: %s", rec.Label, rec.Error)
			}
		}
		t.Fatalf("%d failed, %v", failed, err)
	}
	score := map[string]float64{}
	for _, rec := range records(r.Run) {
		for _, s := range rec.Result.Scalars {
			score[rec.Method+" "+rec.Protocol+" "+s.Name] = s.Value
		}
	}
	for _, k := range []string{"random MPRT mean_spearman", "random RandomLogit spearman", "random DataRandomisation spearman"} {
		if score[k] != 1 {
			t.Errorf("%s = %g, want 1: the random map ignores the model", k, score[k])
		}
	}
	for _, k := range []string{"gradient MPRT mean_spearman", "gradient RandomLogit spearman", "gradient DataRandomisation spearman"} {
		if !(score[k] < 0.9) {
			t.Errorf("%s = %g, want the gradient to change", k, score[k])
		}
	}
	if csv := csvOf(t, r); !strings.Contains(csv, ",MPRT,") || !strings.Contains(csv, ",FaithfulnessEstimate,") {
		t.Error("the CSV misses the new protocols")
	}
}
