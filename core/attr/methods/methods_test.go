package methods

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/attr"
	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
)

// Every method of the registry builds from its own description's defaults
// and makes finite maps of the right shape on a goar-cnn (the greedy TRACE
// once failed its own defaults' range checks).
func TestEveryMethodBuildsWithItsDefaultsAndRuns(t *testing.T) {
	net, err := native.New("goar-cnn", []int{1, 28, 28}, 10, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	net.Init(1)
	rng := rand.New(rand.NewPCG(1, 2))
	train := make([]float32, 4*784)
	for i := range train {
		train[i] = rng.Float32()
	}
	in := attr.Input{X: train[:2*784], N: 2, Shape: []int{1, 28, 28}, Target: []int{3, 7}, Split: "test"}
	truth := make([][]float32, 10) // v_λ's ground truth, one direction per class
	for k := range truth {
		truth[k] = train[784 : 2*784]
	}
	cheap := map[string]map[string]any{"trace-sa": {"iterations": 20, "grid": 3}, "trace-greedy": {"grid": 3}, "trace-go": {"grid": 2}, "kernelshap": {"samples": 64, "grid": 4},
		"blockrandom": {"drop_rate": 0.3}, "file": {"test": filepath.Join(t.TempDir(), "maps.npy")}}
	if err := data.SaveNPY(cheap["file"]["test"].(string), []int{2, 28, 28}, train[:2*784]); err != nil {
		t.Fatal(err)
	}
	for _, info := range All() {
		m, err := New(info.Name, cheap[info.Name], attr.Setup{Seed: 1, Train: train, TrainN: 4, Truth: truth})
		if err != nil {
			t.Errorf("%s: %v", info.Name, err)
			continue
		}
		maps, err := attr.Run(context.Background(), m, net, in)
		if info.Category == attr.CategoryTransformer { // run on transformers in core/engine/onnx's tests
			if err == nil || !strings.Contains(err.Error(), "goar-cnn has no attention probabilities") {
				t.Errorf("%s on a CNN: %v, want a refusal naming the model", info.Name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", info.Name, err)
			continue
		}
		if maps.N() != 2 || maps.Shape[2] != 28 || maps.Shape[3] != 28 {
			t.Errorf("%s: maps of shape %v", info.Name, maps.Shape)
		}
	}
}

// Greedy TRACE takes no annealing settings: they are not listed, and
// setting one is an error naming it.
func TestGreedyTRACETakesNoAnnealingSettings(t *testing.T) {
	info, err := Lookup("trace-greedy")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range info.Params {
		if p.Name == "iterations" || p.Name == "cooling" {
			t.Errorf("trace-greedy lists %s", p.Name)
		}
	}
	if _, err := New("trace-greedy", map[string]any{"iterations": 5}, attr.Setup{}); err == nil || !strings.Contains(err.Error(), "iterations does not apply") {
		t.Errorf("iterations for greedy search: %v", err)
	}
	if _, err := New("trace-sa", map[string]any{"iterations": -5}, attr.Setup{}); err == nil {
		t.Error("trace-sa accepted −5 iterations")
	}
}

func TestARequiredParameterIsNamedWhenMissing(t *testing.T) {
	if _, err := New("blockrandom", nil, attr.Setup{}); err == nil || !strings.Contains(err.Error(), "drop_rate is required") {
		t.Errorf("blockrandom without its drop rate: %v", err)
	}
}

// v_λ takes the data's ground truth: it is described so, refuses to build
// without one, naming what it needs, and applies only where there is one;
// every method applies to its own kinds of data.
func TestAMethodNeedingTheTruthIsRefusedWithoutIt(t *testing.T) {
	info, err := Lookup("vlambda")
	if err != nil || !info.NeedsTruth {
		t.Fatalf("vlambda: %+v, %v", info, err)
	}
	if _, err := New("vlambda", nil, attr.Setup{Seed: 1}); err == nil || !strings.Contains(err.Error(), "ground truth (gmm)") {
		t.Errorf("built without a truth: %v", err)
	}
	image, table := []int{1, 28, 28}, []int{20, 1, 1}
	for _, tc := range []struct {
		name         string
		shape        []int
		truth, wants bool
	}{
		{"vlambda", table, true, true}, {"vlambda", table, false, false}, {"vlambda", image, false, false},
		{"gradcam", image, false, true}, {"gradcam", table, true, false}, {"ig", table, false, true}, {"ig", image, false, true},
	} {
		info, _ := Lookup(tc.name)
		if got := info.Applies(tc.shape, tc.truth); got != tc.wants {
			t.Errorf("%s on %v (truth %v) applies %v, want %v", tc.name, tc.shape, tc.truth, got, tc.wants)
		}
	}
}
