package model

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/train"
)

func TestEngineKindReadsEverySetting(t *testing.T) {
	for setting, want := range map[string]string{"": "native", "native": "native", "torch": "torch", "torch@ssh://gpu1?device=cuda": "torch"} {
		if got, err := EngineKind(setting); err != nil || got != want {
			t.Errorf("EngineKind(%q) = %q, %v; want %q", setting, got, err, want)
		}
	}
	for _, bad := range []string{"cuda", "torch@gpu1", "torch?threads=-1"} {
		if _, err := EngineKind(bad); err == nil {
			t.Errorf("EngineKind(%q) accepted", bad)
		}
	}
}

// A TorchScript file loads with its description beside it; without one,
// or with a wrong one, the error names the file and says what to write.
func TestTorchScriptModelNeedsItsDescription(t *testing.T) {
	fixture := filepath.Join("..", "..", "testdata", "torch", "scripted-cnn.pt")
	m, err := LoadTorchScript(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if !IsTorchScript(fixture) || m.Arch != "torchscript" || len(m.Classes) != 10 || m.Source == nil || m.Source.Ref != "fashion-mnist" || m.Script.Info.CAMLayer != "block2" {
		t.Errorf("loaded %+v", m.Header)
	}
	if _, err := m.Encode(); err == nil {
		t.Error("a TorchScript model encoded as a model file")
	}
	if _, err := NativeEngine(gemm.Gonum{}).Network(context.Background(), m); err == nil || !strings.Contains(err.Error(), "--engine torch") {
		t.Errorf("a TorchScript model on the native engine: %v", err)
	}
	dir := t.TempDir()
	pt := filepath.Join(dir, "m.pt")
	b, _ := os.ReadFile(fixture)
	os.WriteFile(pt, b, 0o644)
	if _, err := LoadTorchScript(pt); err == nil || !strings.Contains(err.Error(), "m.pt.json") || !strings.Contains(err.Error(), "input_shape") {
		t.Errorf("without a description: %v", err)
	}
	for desc, want := range map[string]string{
		`{"input_shape": [1, 28], "classes": ["a", "b"]}`:                                      "input_shape [1 28]",
		`{"input_shape": [1, 28, 28], "classes": ["a"]}`:                                       "1 classes",
		`{"input_shape": [3, 8, 8], "classes": ["a", "b"], "mean": [0.5, 0.5], "std": [1, 1]}`: "2 normalisation values for 3 channels",
		`{"input_shape": [1, 8, 8], "classes": ["a", "b"], "std": [0]}`:                        "mean and std together",
		`{"input_shape": [1, 8, 8], "classes": ["a", "b"], "colour": 1}`:                       "unknown field",
	} {
		os.WriteFile(pt+".json", []byte(desc), 0o644)
		if _, err := LoadTorchScript(pt); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("description %s: %v, want %q", desc, err, want)
		}
	}
	if IsTorchScript(filepath.Join("..", "..", "resources", "goar-cnn-fashion-mnist.flm")) {
		t.Error("a model file taken for TorchScript")
	}
}

// The memory plan sizes a TorchScript module's weights from its archive:
// the fixture's data/ entries are its 10 float tensors and batch norm's
// counter, 21 168 bytes (unzip -l). A file that is no archive is an error
// naming it.
func TestScriptWeightBytesSumsItsTensors(t *testing.T) {
	fixture := filepath.Join("..", "..", "testdata", "torch", "scripted-cnn.pt")
	if n, err := ScriptWeightBytes(fixture); err != nil || n != 21168 {
		t.Errorf("ScriptWeightBytes = %d, %v; want 21168", n, err)
	}
	bad := filepath.Join(t.TempDir(), "bad.pt")
	os.WriteFile(bad, []byte("PK\x03\x04 and then nothing"), 0o644)
	if _, err := ScriptWeightBytes(bad); err == nil || !strings.Contains(err.Error(), "bad.pt") {
		t.Errorf("a truncated archive: %v", err)
	}
}

// On the native engine a retrained network is stored as the model file
// it always was: the base model's header without its training record.
func TestRetrainedModelsOnTheNativeEngineAreModelFiles(t *testing.T) {
	ds := &data.Dataset{Shape: []int{1, 8, 8}, Classes: []string{"a", "b", "c"}}
	base, err := New("mlp", ds, gemm.Gonum{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	base.Training = &train.Record{Samples: 5}
	fresh, _ := New("mlp", ds, gemm.Gonum{}, 2)
	b, err := base.EncodeRetrained(fresh.Net)
	if err != nil {
		t.Fatal(err)
	}
	h := base.Header
	h.Training = nil
	want, _ := (&Model{Header: h, Net: fresh.Net}).Encode()
	if base.RetrainedExt() != ".flm" || !bytes.Equal(b[:12], want[:12]) {
		t.Errorf("retrained file %q…, ext %s", b[:12], base.RetrainedExt())
	}
	net, err := NativeEngine(gemm.Gonum{}).DecodeRetrained(context.Background(), base, b)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range net.Params() {
		if !slices.Equal(p.Data, fresh.Net.Params()[i].Data) {
			t.Errorf("%s differs after the round trip", p.Name)
		}
	}
}

// Fit on the torch engine trains in the worker from the native
// initialisation and saves a model file whose weights the native engine
// loads and computes with.
func TestFitOnTheTorchEngineSavesAModelFile(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import torch (%v): apt-get install python3-torch", err)
	}
	fm, test, err := data.Open("fashion-mnist", data.Options{})
	if err != nil {
		t.Skipf("Fashion-MNIST: %v", err)
	}
	ctx := context.Background()
	eng, err := OpenEngine(ctx, "torch?python=/usr/bin/python3", gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "m.flm")
	m, err := Fit{Arch: "goar-cnn", Train: fm.Head(1024), Test: test.Head(256), Engine: eng, Out: out,
		Config: train.Config{Epochs: 2, BatchSize: 64, LR: 1e-3, Seed: 1, Patience: -1}}.Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("test accuracy %.3f", m.Test.Accuracy)
	if m.Test.Accuracy < 0.4 {
		t.Errorf("test accuracy %.3f after training on the torch engine", m.Test.Accuracy)
	}
	loaded, err := Load(out, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := train.Evaluate(ctx, loaded.Net, test.Head(256), 256)
	if err != nil {
		t.Fatal(err)
	}
	if d := ev.Accuracy - m.Test.Accuracy; d > 0.01 || d < -0.01 {
		t.Errorf("native accuracy %.4f of the saved model, torch's %.4f", ev.Accuracy, m.Test.Accuracy)
	}
	if info, err := eng.Info(ctx); err != nil || info.Torch == "" || !strings.HasPrefix(info.Device, "cpu") {
		t.Errorf("engine info %+v, %v", info, err)
	}
}
