package campaign

import (
	"context"
	"slices"
	"testing"

	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/protocol"
)

func onManifoldSetup(t *testing.T) (*model.Model, *data.Dataset, diffusion.Prior) {
	t.Helper()
	ds, err := data.GaussianMixture{Dim: 8, Samples: 40, Seed: 1}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New("logreg", ds, gemm.Gonum{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	mix, err := protocol.FitMixture(ds)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := diffusion.NewSchedule(diffusion.Linear, 1000)
	p, err := diffusion.NewMixturePrior(mix, s, diffusion.Identity())
	if err != nil {
		t.Fatal(err)
	}
	return m, ds, p
}

// One sample's GOAR projection is the one the protocol makes of it within
// its set (the same noise stream), starts where Match says, and every
// version and step is scored by the model.
func TestGOARProjectIsTheProtocolsProjection(t *testing.T) {
	m, ds, prior := onManifoldSetup(t)
	saliency := []float32{1, -2, 0, 3, 0, 0, 1, 1}
	const i, s, seed = 5, 2.0, 9
	got, err := GOARProject(context.Background(), m, prior, ds, i, saliency, s, 1, 10, seed)
	if err != nil {
		t.Fatal(err)
	}
	maps := make([]float32, ds.Len()*8)
	for j := range ds.Len() {
		copy(maps[j*8:], saliency)
	}
	dirs := protocol.Directions(maps, ds)
	shifted := make([]float32, len(ds.X))
	for j, v := range ds.X {
		shifted[j] = float32(float64(v) - s*float64(dirs[j]))
	}
	all, err := protocol.Projection{Prior: prior, Steps: 10, Seed: seed}.Project(context.Background(), shifted, ds.Len(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Shifted.Image, shifted[i*8:(i+1)*8]) || !slices.Equal(got.Projected.Image, all.X[i*8:(i+1)*8]) {
		t.Errorf("sample %d: shifted %v projected %v; within its set %v %v", i, got.Shifted.Image, got.Projected.Image, shifted[i*8:(i+1)*8], all.X[i*8:(i+1)*8])
	}
	if !slices.Equal(got.Original.Image, ds.Sample(i)) || len(got.Steps) == 0 || got.Steps[0].T != got.Match.Start {
		t.Errorf("original %v, %d steps from %d, match %+v", got.Original.Image, len(got.Steps), got.Steps[0].T, got.Match)
	}
	checkScored(t, m, got.Projected, 1)
	checkScored(t, m, got.Steps[len(got.Steps)-1].X0, 1)
}

// FUD's in-painting of one sample keeps the fraction of features its map
// ranks first exactly, fills the rest, and records every step.
func TestFUDInpaintKeepsTheMostRelevantFeatures(t *testing.T) {
	m, ds, prior := onManifoldSetup(t)
	saliency := []float32{0.1, -5, 0.2, 3, 0, 0.3, 4, 0}
	got, err := FUDInpaint(context.Background(), m, prior, ds, 2, saliency, 0.5, 0, 20, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{0, 1, 0, 1, 0, 1, 1, 0}; !slices.Equal(got.Keep, want) {
		t.Errorf("keep %v, want %v (the four largest in magnitude)", got.Keep, want)
	}
	x := ds.Sample(2)
	for j, k := range got.Keep {
		if (k == 1) != (got.Inpainted.Image[j] == x[j]) {
			t.Errorf("value %d (kept %v): %g, originally %g", j, k == 1, got.Inpainted.Image[j], x[j])
		}
	}
	if len(got.Steps) != 20 {
		t.Errorf("%d steps recorded, want 20", len(got.Steps))
	}
	checkScored(t, m, got.Inpainted, 0)
	if _, err := FUDInpaint(context.Background(), m, prior, ds, 40, saliency, 0.5, 0, 20, false, 1); err == nil {
		t.Error("sample 40 of 40 accepted")
	}
}

func checkScored(t *testing.T, m *model.Model, s Scored, target int) {
	t.Helper()
	r, err := score(context.Background(), m.Net, [][]float32{s.Image}, target)
	if err != nil {
		t.Fatal(err)
	}
	if r[0].Predicted != s.Predicted || r[0].Confidence != s.Confidence || r[0].TargetProb != s.TargetProb {
		t.Errorf("scored %+v, the model says %+v", s, r[0])
	}
}
