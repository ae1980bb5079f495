package job

import (
	"context"
	"os"
	"slices"
	"testing"

	"faithlab/core/data"
	"faithlab/core/protocol"
	"faithlab/core/report"
)

const plantedSpec = `name: planted
output: run
datasets: [{id: fashion-mnist-planted, train_samples: 6000, test_samples: 64}]
model: {arch: goar-cnn, epochs: 5, batch: 32, lr: 0.002}
methods: [ig, gradxinput, sobel, random]
protocols:
  - {name: deletion, params: {samples: 64}}
  - road
  - relevancerankaccuracy
`

// On the planted-truth set, where the model uses the patch alone, the
// answer ranks the methods whose maps find the patch (IG, Gradient ×
// Input) above Random and above Sobel's edges, which ignore the model and
// lie on the garment; each beats Random under every admitted protocol;
// and the combined ranking orders them as Relevance Rank Accuracy — the
// share of a map's top pixels on the patch — does on its own.
func TestAnswerOnPlantedTruthTrustsWhatFindsThePatch(t *testing.T) {
	if _, err := os.Stat(data.FashionMNISTDir); err != nil {
		t.Skip("no Fashion-MNIST here")
	}
	r := newRunner(t, t.TempDir(), plantedSpec)
	if failed, err := r.Execute(context.Background()); err != nil || failed > 0 {
		t.Fatal(failed, err)
	}
	log, err := r.Run.Read()
	if err != nil {
		t.Fatal(err)
	}
	// The images a protocol perturbed carry the class the model predicts
	// for each, by name (the answer's evidence shows them).
	named := 0
	for _, rec := range log.Records {
		for _, sm := range rec.Result.Samples {
			if sm.Kind == protocol.Perturbed && len(sm.Predicted) > 0 {
				if len(sm.Predicted) != sm.Shape[0] || !slices.Contains(data.PlantedClasses(), sm.Predicted[0]) {
					t.Fatalf("%s %s: predicted %q for %d images", rec.Label, sm.Name, sm.Predicted, sm.Shape[0])
				}
				named++
			}
		}
	}
	if named == 0 {
		t.Error("no perturbed images carry the model's predictions")
	}
	conf := report.Diagnose(log.Records).Confidence
	if len(conf.Trust) != 1 {
		t.Fatalf("%d answers", len(conf.Trust))
	}
	a := conf.Trust[0]
	t.Log(a.Headline)
	var order []string
	for _, m := range a.Methods {
		order = append(order, m.Method)
		if !m.Control && m.BeatsRandom != report.Holds {
			t.Errorf("%s against Random: %s (%s)", m.Method, m.BeatsRandom, m.Words)
		}
	}
	for _, m := range []string{"ig", "gradxinput"} {
		if i := slices.Index(order, m); i < 0 || i > slices.Index(order, "sobel") || i > slices.Index(order, "random") {
			t.Errorf("combined ranking %v: %s not above Sobel and Random", order, m)
		}
	}
	loc, ok := conf.Ranking(a.Dataset, "RelevanceRankAccuracy")
	if !ok {
		t.Fatal("no Relevance Rank Accuracy ranking")
	}
	var byTruth []string
	for _, m := range loc.Methods {
		if slices.Contains([]string{"ig", "gradxinput", "sobel"}, m.Method) {
			byTruth = append(byTruth, m.Method)
		}
	}
	ours := slices.DeleteFunc(slices.Clone(order), func(m string) bool { return m == "random" })
	if !slices.Equal(ours, byTruth) {
		t.Errorf("the answer orders %v, the planted truth %v", ours, byTruth)
	}
}
