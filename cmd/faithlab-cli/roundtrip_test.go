package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
)

// TestPyTorchRoundTrip exports a goar-cnn's weights, loads them into the
// PyTorch peer's module, and imports PyTorch's state_dict back: PyTorch's
// logits and the re-imported model's logits must equal ours.
func TestPyTorchRoundTrip(t *testing.T) {
	peer, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "bench"))
	if _, err := os.Stat(filepath.Join(peer, "torch_peer.py")); err != nil {
		t.Skip("shared/bench/torch_peer.py not beside the repository")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import torch").Run(); err != nil {
		t.Skip("Debian's python3-torch is not installed")
	}
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	ds := &data.Dataset{Shape: []int{1, 28, 28}, Classes: data.FashionMNISTClasses()}
	m, err := model.New("goar-cnn", ds, gemm.Gonum{}, 11)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(p("ours.flm")); err != nil {
		t.Fatal(err)
	}
	const n = 5
	x := make([]float32, n*784)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)))*0.5 + 0.5
	}
	if err := data.SaveNPY(p("x.npy"), []int{n, 1, 28, 28}, x); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := runWeightsExport(ctx, []string{"--model", p("ours.flm"), "--out", p("w.npz")}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", filepath.Join("..", "..", "testdata", "torch", "roundtrip.py"),
		peer, "goar-cnn", p("w.npz"), p("x.npy"), p("torch_logits.npy"), p("torch_w.npz"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("roundtrip.py: %v\n%s", err, out)
	}
	if err := runWeightsImport(ctx, []string{"--arch", "goar-cnn", "--weights", p("torch_w.npz"), "--out", p("back.flm")}); err != nil {
		t.Fatal(err)
	}
	ours, err := m.Net.Forward(x, n)
	if err != nil {
		t.Fatal(err)
	}
	ours = append([]float32(nil), ours...)
	torchLogits, err := data.LoadNPY(p("torch_logits.npy"))
	if err != nil {
		t.Fatal(err)
	}
	back, err := model.Load(p("back.flm"), gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := back.Net.Forward(x, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ours {
		if d := math.Abs(float64(ours[i] - torchLogits.Data[i])); d > 1e-4*math.Max(1, math.Abs(float64(ours[i]))) {
			t.Errorf("logit %d: faithlab %g, torch %g", i, ours[i], torchLogits.Data[i])
		}
		if ours[i] != again[i] {
			t.Errorf("logit %d after the round trip: %g, before %g", i, again[i], ours[i])
		}
	}
}
