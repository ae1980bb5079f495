package job

import (
	"context"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// Every task of a faithfulness protocol on a fixed model keeps its
// headline on the first inputs with the maps of a perturbed and of a
// randomised copy of the model; the 1 % perturbation keeps the model's
// predictions; retraining and ground-truth protocols keep none; the same
// seed keeps the same values, bit for bit.
func TestAnswerChecksKeptForFixedModelFaithfulness(t *testing.T) {
	run := func() []store.Record {
		r := newRunner(t, t.TempDir(), gmmSpec)
		if failed, err := r.Execute(context.Background()); err != nil || failed > 0 {
			t.Fatal(failed, err)
		}
		log, err := r.Run.Read()
		if err != nil {
			t.Fatal(err)
		}
		return log.Records
	}
	a, b := run(), run()
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%d and %d records", len(a), len(b))
	}
	other := map[string]store.Record{}
	for _, rec := range b {
		other[rec.Task] = rec
	}
	for _, rec := range a {
		cs := rec.Result.Checks
		if rec.Protocol != "Deletion" {
			if len(cs) != 0 {
				t.Errorf("%s keeps %d checks", rec.Label, len(cs))
			}
			continue
		}
		if len(cs) != 2 || cs[0].Model != protocol.CheckPerturbed || cs[1].Model != protocol.CheckRandomised {
			t.Fatalf("%s: checks %+v", rec.Label, cs)
		}
		for i, c := range cs {
			if c.Note != "" || c.Units.N != CheckInputs || len(c.Units.Of("lerf_minus_morf")) != CheckInputs {
				t.Errorf("%s %s: %d inputs, note %q", rec.Label, c.Model, c.Units.N, c.Note)
			}
			o := other[rec.Task].Result.Checks[i].Units.Of("lerf_minus_morf")
			for j, v := range c.Units.Of("lerf_minus_morf") {
				if v != o[j] && !(v != v && o[j] != o[j]) {
					t.Fatalf("%s %s: input %d %g then %g", rec.Label, c.Model, j, v, o[j])
				}
			}
		}
		if cs[0].Agree < 0.95 {
			t.Errorf("%s: the perturbed model predicts the model's class on %.2f of the inputs", rec.Label, cs[0].Agree)
		}
	}
}
