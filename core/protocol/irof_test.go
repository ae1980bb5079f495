package protocol

import (
	"context"
	"math"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/enginetest"
)

// A 16×16 image of four flat quadrants, of which only the top-left one
// moves a two-class linear model's logit: removing it (zeroing) takes the
// explained class's probability p₀ to ½ and nothing else changes it. With
// the quadrants as the superpixels and one removed a step, the relative
// curve of a map that ranks that quadrant first is 1, r, r, r, r (r =
// ½/p₀), whose area over the fractions 0, ¼, …, 1 is 1/8 + 7r/8; ranked
// last it is 1, 1, 1, 1, r: 7/8 + r/8. IROF is one minus the area.
func TestIROFHandSolved(t *testing.T) {
	const H, W = 16, 16
	net := &enginetest.Linear{W: make([]float32, 2*H*W), B: make([]float32, 2), D: H * W, K: 2, Shape: []int{1, H, W}}
	ds := &data.Dataset{Name: "quadrants", Shape: []int{1, H, W}, Classes: []string{"a", "b"}, X: make([]float32, H*W), Y: []int{0}}
	first, last := make([]float32, H*W), make([]float32, H*W)
	for y := range H {
		for x := range W {
			q := 2*(y/8) + x/8
			ds.X[y*W+x] = []float32{1, 0.2, 0.6, 0.4}[q]
			if q == 0 {
				net.W[y*W+x] = 0.05 // class 0's logit: 0.05 × 64 pixels = 3.2
			}
			first[y*W+x] = []float32{4, 3, 2, 1}[q]
			last[y*W+x] = []float32{1, 4, 3, 2}[q]
		}
	}
	r := 0.5 * (1 + math.Exp(-3.2))
	for _, tc := range []struct {
		name string
		m    []float32
		want float64
	}{{"quadrant first", first, 1 - (0.125 + 0.875*r)}, {"quadrant last", last, 1 - (0.875 + 0.125*r)}} {
		env := &Env{Net: net, Test: ds, Method: "m", Maps: func(context.Context, string) ([]float32, error) { return tc.m, nil }}
		res, err := IROF{Segments: 4, Reference: "zero"}.Run(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := res.Scalar("irof"); math.Abs(v-tc.want) > 1e-6 {
			t.Errorf("%s: IROF %g, want %g", tc.name, v, tc.want)
		}
		checkDescribed(t, IROF{}, res)
	}
}

// IROF's passes over its perturbed copies are timed as the evaluation
// stage and its fills as masks, like every other removal protocol's: the
// 224×224 campaign's breakdown had put 620 s of IROF's forward passes
// under "protocol".
func TestIROFsPassesAreTimedAsEvaluation(t *testing.T) {
	const H, W = 16, 16
	net := &enginetest.Linear{W: make([]float32, 2*H*W), B: make([]float32, 2), D: H * W, K: 2, Shape: []int{1, H, W}}
	ds := &data.Dataset{Name: "flat", Shape: []int{1, H, W}, Classes: []string{"a", "b"}, X: make([]float32, H*W), Y: []int{0}}
	maps := make([]float32, H*W)
	env := &Env{Net: net, Test: ds, Method: "m", Maps: func(context.Context, string) ([]float32, error) { return maps, nil }}
	var st Stages
	err := Stage(WithStages(context.Background(), &st), "protocol", func(ctx context.Context) error {
		_, err := IROF{Segments: 4, Reference: "zero"}.Run(ctx, env)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range st.Times() {
		seen[s.Stage] = true
	}
	for _, want := range []string{"protocol", stageMasks, stageEval} {
		if !seen[want] {
			t.Errorf("no %q stage among %v", want, st.Times())
		}
	}
}
