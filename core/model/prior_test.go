package model

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
)

// TestPriorRoundTripAndKindsStayApart saves a unet-s prior and loads it back
// with its schedule, scaling and record; a classifier's loader refuses it and
// the prior's loader refuses a classifier.
func TestPriorRoundTripAndKindsStayApart(t *testing.T) {
	ds := &data.Dataset{Name: "tiny", Shape: []int{1, 8, 8}, Classes: []string{"a", "b"}}
	d := Diffusion{Schedule: "cosine", Steps: 500, DataLo: 0, DataHi: 1, Training: json.RawMessage(`{"steps":3}`)}
	m, err := NewPrior(ds, d, gemm.Gonum{}, 4)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "prior.flm")
	if err := m.Save(p); err != nil {
		t.Fatal(err)
	}
	got, err := LoadPrior(p, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Diffusion == nil || got.Diffusion.Schedule != "cosine" || got.Diffusion.Steps != 500 || got.Diffusion.DataHi != 1 || string(got.Diffusion.Training) != `{"steps":3}` {
		t.Errorf("diffusion header came back as %+v", got.Diffusion)
	}
	for i, pa := range m.Prior.Params() {
		if !slices.Equal(pa.Data, got.Prior.Params()[i].Data) {
			t.Fatalf("parameter %s differs after the round trip", pa.Name)
		}
	}
	if _, err := Load(p, gemm.Gonum{}); err == nil || !strings.Contains(err.Error(), "diffusion prior") {
		t.Errorf("loading a prior as a classifier: %v", err)
	}
	c := filepath.Join(dir, "clf.flm")
	if err := tiny(t).Save(c); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPrior(c, gemm.Gonum{}); err == nil || !strings.Contains(err.Error(), "classifier") {
		t.Errorf("loading a classifier as a prior: %v", err)
	}
	if _, err := NewPrior(ds, Diffusion{Schedule: "linear", Steps: 1000, DataLo: 1, DataHi: 1}, gemm.Gonum{}, 1); err == nil {
		t.Error("a prior with an empty data range was made")
	}
}
