package main

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
)

// TestSampleProjectInpaintWiring runs the three sampling commands on the
// Gaussian mixture's exact prior and checks what they write: shapes, the
// trajectory, and in-painting's kept values, bit for bit.
func TestSampleProjectInpaintWiring(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	ctx := context.Background()
	if err := runSample(ctx, []string{"--prior", "gmm", "--n", "6", "--steps", "20", "--seed", "3",
		"--out", p("s.npy"), "--trajectory", p("t.npy"), "--record", "2"}); err != nil {
		t.Fatal(err)
	}
	s, err := data.LoadNPY(p("s.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Shape, []int{6, 20, 1, 1}) {
		t.Fatalf("samples of shape %v, want (6, 20, 1, 1)", s.Shape)
	}
	tr, err := data.LoadNPY(p("t.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tr.Shape, []int{20, 2, 2, 20, 1, 1}) {
		t.Fatalf("trajectory of shape %v, want (20, 2, 2, 20, 1, 1)", tr.Shape)
	}
	if err := runProject(ctx, []string{"--prior", "gmm", "--image", p("s.npy"), "--t", "100", "--out", p("pr.npy")}); err != nil {
		t.Fatal(err)
	}
	pr, err := data.LoadNPY(p("pr.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pr.Shape, s.Shape) {
		t.Fatalf("projection of shape %v, want %v", pr.Shape, s.Shape)
	}
	mask := make([]float32, 20)
	for j := range 10 {
		mask[j] = 1
	}
	if err := data.SaveNPY(p("m.npy"), []int{20, 1, 1}, mask); err != nil {
		t.Fatal(err)
	}
	if err := runInpaint(ctx, []string{"--prior", "gmm", "--image", p("s.npy"), "--mask", p("m.npy"), "--out", p("in.npy")}); err != nil {
		t.Fatal(err)
	}
	in, err := data.LoadNPY(p("in.npy"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		for j := range 20 {
			v, o := in.Data[i*20+j], s.Data[i*20+j]
			if j < 10 && math.Float32bits(v) != math.Float32bits(o) {
				t.Fatalf("sample %d value %d: kept %g became %g", i, j, o, v)
			}
		}
	}
	if err := runSample(ctx, []string{"--prior", "gmm", "--out", p("x.npy"), "--method", "euler"}); err == nil {
		t.Error("an unknown sampler was accepted")
	}
	// --judge: a classifier of the mixture's samples judges them; one of
	// other inputs is refused before any sampling.
	if err := runTrain(ctx, []string{"--dataset", "gmm", "--model", "mlp", "--epochs", "1", "--out", p("clf.flm")}); err != nil {
		t.Fatal(err)
	}
	if err := runSample(ctx, []string{"--prior", "gmm", "--n", "40", "--steps", "10", "--out", p("j.npy"), "--judge", p("clf.flm")}); err != nil {
		t.Fatal(err)
	}
	if err := runTrain(ctx, []string{"--dataset", "iris", "--model", "mlp", "--epochs", "1", "--out", p("iris.flm")}); err != nil {
		t.Fatal(err)
	}
	if err := runSample(ctx, []string{"--prior", "gmm", "--out", p("k.npy"), "--judge", p("iris.flm")}); err == nil || !strings.Contains(err.Error(), "the prior makes [20 1 1]") {
		t.Errorf("a classifier of other inputs judged the samples: %v", err)
	}
}
