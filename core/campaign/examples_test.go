package campaign

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
)

// Every example campaign under testdata/campaigns loads and fits its data
// (Applies), as `faithlab-cli run` checks before any work: a README that
// points at one points at a campaign that runs. Fashion-MNIST's are
// checked where its files are here; those that read what `make
// bench-campaigns` generates first (benchGenerated) are checked there.
func TestExampleCampaignsLoadAndFitTheirData(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "campaigns", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatal(paths, err)
	}
	_, fmnist := os.Stat(data.FashionMNISTDir)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if fmnist != nil && strings.Contains(string(b), "fashion-mnist") || benchGenerated(b) {
			continue
		}
		c, err := Load(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if err := c.Applies(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// The transformer methods are offered for a model with attention to read
// (a ViT) and not for a convolutional one; without a model, every method
// of the data's kind is.
func TestTransformerMethodsOfferedOnlyForAttention(t *testing.T) {
	ds := &data.Dataset{Shape: []int{3, 32, 32}}
	names := func(net engine.Network) []string {
		var out []string
		for _, m := range MethodsFor(ds, net) {
			out = append(out, m.Name)
		}
		return out
	}
	vit, err := model.LoadONNX(filepath.Join("..", "..", "testdata", "onnx", "vit-tiny.op17.onnx"), gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	cnn, err := model.LoadONNX(filepath.Join("..", "..", "testdata", "onnx", "small.onnx"), gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		net  engine.Network
		want bool
	}{{"no model", nil, true}, {"vit", vit.Net, true}, {"cnn", cnn.Net, false}} {
		if got := slices.Contains(names(tc.net), "rollout"); got != tc.want || !slices.Contains(names(tc.net), "gradient") {
			t.Errorf("%s: rollout offered %v, want %v (%v)", tc.name, got, tc.want, names(tc.net))
		}
	}
}

// A campaign asking a model without attention for a transformer method —
// a CNN from a file, a built-in architecture — is refused before any
// work, naming the method and the model, as Explain does not offer it.
func TestTransformerMethodsRefusedForAModelWithoutAttention(t *testing.T) {
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist"); err != nil {
		t.Skip("Debian's dataset-fashion-mnist is not installed")
	}
	dir := t.TempDir()
	for _, f := range []string{"goar-cnn.onnx", "goar-cnn.onnx.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "onnx", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []string{"{file: goar-cnn.onnx}", "{arch: goar-cnn, epochs: 1}"} {
		c := loadSpec(t, dir, `output: run
datasets: [{id: fashion-mnist, train_samples: 100, test_samples: 10}]
model: `+m+`
methods: [gradient, rollout, {name: gradrollout}]
protocols: [deletion]
`)
		err := c.Applies()
		if err == nil || !strings.Contains(err.Error(), "method rollout explains a vision transformer's attention, and model") ||
			!strings.Contains(err.Error(), "method gradrollout") || strings.Contains(err.Error(), "method gradient") {
			t.Errorf("%s: %v", m, err)
		}
	}
}

// benchGenerated says whether a shipped campaign reads data or a model
// that `make bench-campaigns` generates first under testdata/campaigns/runs
// (the 224×224 images, ResNet-18, vit_b_16, the CIFAR-sized folder): large,
// and not in a checkout.
func benchGenerated(spec []byte) bool {
	for _, g := range []string{"runs/field224-", "runs/cifar-sized-", "runs/vit224-"} {
		if strings.Contains(string(spec), g) {
			return true
		}
	}
	return false
}
