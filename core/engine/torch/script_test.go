package torch

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/attr"
	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/train"
)

// fixture is testdata/torch/scripted-cnn.pt, made by make_scripted_cnn.py:
// a small Fashion-MNIST CNN that expects normalised inputs, with batch
// norm, exposing three activations.
func fixture(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "torch", "scripted-cnn.pt"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var fixtureScript = Script{Shape: []int{1, 28, 28}, Classes: 10, Mean: []float64{0.2860}, Std: []float64{0.3530}, CAMLayer: "block2"}

// A researcher's TorchScript classifier serves the engine interface: its
// normalisation applied in the worker (it classifies raw [0, 1] images
// well), its exposed activations as layers for Grad-CAM, its weights
// (batch-norm statistics included) by name, and input gradients.
func TestTorchScriptClassifierServesTheNetworkInterface(t *testing.T) {
	e := testEngine(t)
	ctx := context.Background()
	m, err := e.LoadScript(ctx, fixture(t), fixtureScript)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Layers(), " "); got != "block1 block2 features" {
		t.Errorf("layers %q", got)
	}
	if m.CAMLayer() != "block2" || m.Arch() != ScriptArch {
		t.Errorf("Grad-CAM layer %q, arch %q", m.CAMLayer(), m.Arch())
	}
	var names []string
	for _, p := range m.Params() {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, "bn1.running_var") || !slices.Contains(names, "fc.weight") {
		t.Errorf("parameters %v", names)
	}
	_, test, err := data.Open("fashion-mnist", data.Options{})
	if err != nil {
		t.Skipf("Fashion-MNIST: %v", err)
	}
	test = test.Head(500)
	ev, err := train.Evaluate(ctx, m, test, 256)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fixture's accuracy on 500 test images: %.3f", ev.Accuracy)
	if ev.Accuracy < 0.7 {
		t.Errorf("accuracy %.3f on raw images: is the normalisation applied?", ev.Accuracy)
	}
	in := attr.Input{X: test.X[:16*784], N: 16, Shape: test.Shape, Target: test.Y[:16]}
	for _, meth := range []attr.Method{attr.Gradient{}, attr.IntegratedGradients{Steps: 8}, attr.GradCAM{}} {
		maps, err := meth.Attribute(ctx, m, in)
		if err != nil {
			t.Fatalf("%s: %v", meth.Name(), err)
		}
		var norm float64
		for _, v := range maps.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s: non-finite map value", meth.Name())
			}
			norm += float64(v * v)
		}
		if norm == 0 {
			t.Errorf("%s: all-zero maps", meth.Name())
		}
	}
	a, err := m.Activation("block2")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Shape, []int{16, 16, 11, 11}) || a.Grad == nil {
		t.Errorf("block2 after Grad-CAM: shape %v, gradient %v", a.Shape, a.Grad != nil)
	}
	if err := m.SetRule(engine.Rescale, in.X[:784], 1); err == nil || !strings.Contains(err.Error(), "TorchScript") {
		t.Errorf("rescale rule on a TorchScript module: %v", err)
	}
}

// Retraining a TorchScript classifier starts from a copy whose every
// submodule is reset as its constructor initialises it, seeded; training
// then runs in the worker as for the built-in architectures.
func TestTorchScriptClassifierResetsAndRetrains(t *testing.T) {
	if raceEnabled {
		t.Skip("numerics, not concurrency: run without -race")
	}
	e := testEngine(t)
	ctx := context.Background()
	m, err := e.LoadScript(ctx, fixture(t), fixtureScript)
	if err != nil {
		t.Fatal(err)
	}
	trained := m.Clone().(*Net)
	if err := m.Reset(ctx, 7); err != nil {
		t.Fatal(err)
	}
	again := trained.Clone().(*Net)
	if err := again.Reset(ctx, 7); err != nil {
		t.Fatal(err)
	}
	for i, p := range m.Params() {
		q := trained.Params()[i]
		if slices.Equal(p.Data, q.Data) && p.Name != "bn1.weight" && p.Name != "bn1.bias" {
			t.Errorf("%s unchanged by the reset", p.Name)
		}
		if !slices.Equal(p.Data, again.Params()[i].Data) {
			t.Errorf("%s: two resets with one seed differ", p.Name)
		}
		if p.Name == "bn1.running_var" && slices.ContainsFunc(p.Data, func(v float32) bool { return v != 1 }) {
			t.Errorf("running variance after the reset: %v", p.Data)
		}
	}
	fm, _, err := data.Open("fashion-mnist", data.Options{})
	if err != nil {
		t.Skipf("Fashion-MNIST: %v", err)
	}
	rec, err := train.Train(ctx, m, fm.Head(512), train.Config{Epochs: 2, BatchSize: 64, LR: 2e-3, ValFraction: -1, Patience: -1, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("retrained: loss %.3f → %.3f, accuracy %.3f", rec.History[0].Loss, rec.History[1].Loss, rec.History[1].Accuracy)
	if !(rec.History[1].Loss < rec.History[0].Loss) {
		t.Errorf("loss %v did not fall", rec.History)
	}
}

// A module that owns a parameter of its own, outside any standard
// layer, cannot be reset (TorchScript keeps no reset_parameters): the
// reset is refused with a message that says so and how to fix it.
func TestTorchScriptModuleThatCannotBeResetIsRefused(t *testing.T) {
	e := testEngine(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "scaled.pt")
	script := `import sys, torch, torch.nn as nn
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(x.flatten(1)) * self.scale
torch.jit.save(torch.jit.script(Scaled()), sys.argv[1])`
	maker := filepath.Join(dir, "make.py") // torch.jit.script reads the class's source
	if err := os.WriteFile(maker, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("/usr/bin/python3", maker, path).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.LoadScript(context.Background(), b, Script{Shape: []int{4, 1, 1}, Classes: 2})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Reset(context.Background(), 1)
	if err == nil || !strings.Contains(err.Error(), "cannot reset") || !strings.Contains(err.Error(), "reset_parameters") {
		t.Errorf("reset of a module with its own parameter: %v", err)
	}
	if _, err := e.LoadScript(context.Background(), b, Script{Shape: []int{4, 1, 1}, Classes: 3}); err == nil || !strings.Contains(err.Error(), "logits") {
		t.Errorf("a module of 2 outputs taken for 3 classes: %v", err)
	}
}
