package attr

import (
	"context"
	"math"
	"testing"
)

// v_λ is λ times the unit truth of the explained class plus (1−λ) times a
// unit random direction: the truth at λ = 1, unit length at λ = 0, and in
// between the truth's share is λ.
func TestVLambdaMixesTheTruthWithARandomDirection(t *testing.T) {
	truth := [][]float32{{3, 0, 0, -4}, {0, 2, 0, 0}}
	in := Input{X: make([]float32, 12), N: 3, Shape: []int{4, 1, 1}, Target: []int{0, 1, 0}}
	unit := [][]float64{{0.6, 0, 0, -0.8}, {0, 1, 0, 0}}
	random, err := VLambda{Lambda: 0, Truth: truth, Seed: 5}.Attribute(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, lambda := range []float64{0, 0.25, 1} {
		m, err := VLambda{Lambda: lambda, Truth: truth, Seed: 5}.Attribute(context.Background(), nil, in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			var norm float64
			for j, v := range m.Map(i) {
				want := lambda*unit[in.Target[i]][j] + (1-lambda)*float64(random.Map(i)[j])
				if math.Abs(float64(v)-want) > 1e-6 {
					t.Errorf("λ %g sample %d value %d: %g, want %g", lambda, i, j, v, want)
				}
				norm += float64(random.Map(i)[j]) * float64(random.Map(i)[j])
			}
			if math.Abs(norm-1) > 1e-6 {
				t.Errorf("the random direction of sample %d has squared norm %g", i, norm)
			}
		}
	}
	if _, err := (VLambda{Lambda: 1}).Attribute(context.Background(), nil, in); err == nil {
		t.Error("v_λ without a truth ran")
	}
}
