package job

import (
	"context"
	"os"
	"slices"
	"testing"

	"faithlab/core/data"
	"faithlab/core/report"
)

const plantedSpec = `name: planted
output: run
datasets: [{id: fashion-mnist-planted, train_samples: 2000, test_samples: 64}]
model: {arch: goar-cnn, epochs: 2}
methods: [gradient, sobel, random]
protocols:
  - {name: deletion, params: {samples: 64}}
  - {name: irof, params: {samples: 64}}
`

// On the planted-truth set, where the model uses the patch alone, the
// answer ranks Gradient, which finds the patch, above Random and above
// Sobel's edges, which ignore the model, and finds that it beats Random
// under every admitted protocol.
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
	as := report.Diagnose(log.Records).Confidence.Trust
	if len(as) != 1 {
		t.Fatalf("%d answers", len(as))
	}
	a := as[0]
	var order []string
	for _, m := range a.Methods {
		order = append(order, m.Method)
		if m.Method == "gradient" && m.BeatsRandom != report.Holds {
			t.Errorf("gradient against Random: %s (%s)", m.BeatsRandom, m.Words)
		}
	}
	g := slices.Index(order, "gradient")
	if g < 0 || g > slices.Index(order, "sobel") || g > slices.Index(order, "random") {
		t.Errorf("combined ranking %v: %s", order, a.Headline)
	}
	for _, ad := range a.Admissions {
		if ad.Admit == report.SetAside {
			t.Errorf("%s set aside: %s", ad.Protocol, ad.Words)
		}
	}
	t.Log(a.Headline)
}
