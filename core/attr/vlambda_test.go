package attr

import (
	"context"
	"math"
	"testing"

	"faithlab/core/engine/enginetest"
)

// v_λ is λ times the unit truth of the explained class plus (1−λ) times a
// unit random direction: the truth at λ = 1, unit length at λ = 0, and in
// between the truth's share is λ.
func TestVLambdaMixesTheTruthWithARandomDirection(t *testing.T) {
	truth := [][]float32{{3, 0, 0, -4}, {0, 2, 0, 0}}
	in := Input{X: make([]float32, 12), N: 3, Shape: []int{4, 1, 1}, Target: []int{0, 1, 0}}
	unit := [][]float64{{0.6, 0, 0, -0.8}, {0, 1, 0, 0}}
	random, err := VLambda{Lambda: 0, Direction: "truth", Truth: truth, Seed: 5}.Attribute(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, lambda := range []float64{0, 0.25, 1} {
		m, err := VLambda{Lambda: lambda, Direction: "truth", Truth: truth, Seed: 5}.Attribute(context.Background(), nil, in)
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
	if _, err := (VLambda{Lambda: 1, Direction: "truth"}).Attribute(context.Background(), nil, in); err == nil {
		t.Error("v_λ without a truth ran")
	}
}

// With the paper's direction, v is the model's input gradient of the
// explained class: on a linear model W's row, whatever the input, so v_λ
// at λ = 1 is that row scaled to unit length, and the noise is the same
// draw as with the truth.
func TestVLambdaOfTheGradientIsTheUnitRowOfALinearModel(t *testing.T) {
	net := enginetest.NewLinear(3, []int{4, 1, 1}, 2)
	truth := [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}} // checked for shape only
	in := Input{X: []float32{1, 2, 3, 4, -1, 0, 5, 2}, N: 2, Shape: []int{4, 1, 1}, Target: []int{1, 0}}
	m, err := VLambda{Lambda: 1, Truth: truth, Seed: 5}.Attribute(context.Background(), net, in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		row := net.W[in.Target[i]*4 : (in.Target[i]+1)*4]
		var norm float64
		for _, w := range row {
			norm += float64(w) * float64(w)
		}
		for j, v := range m.Map(i) {
			if want := float64(row[j]) / math.Sqrt(norm); math.Abs(float64(v)-want) > 1e-6 {
				t.Errorf("sample %d value %d: %g, want %g", i, j, v, want)
			}
		}
	}
	half, _ := VLambda{Lambda: 0.5, Truth: truth, Seed: 5}.Attribute(context.Background(), net, in)
	noise, _ := VLambda{Lambda: 0, Direction: "truth", Truth: truth, Seed: 5}.Attribute(context.Background(), net, in)
	for j, v := range half.Data {
		if want := 0.5*float64(m.Data[j]) + 0.5*float64(noise.Data[j]); math.Abs(float64(v)-want) > 1e-6 {
			t.Errorf("λ ½, value %d: %g, want %g", j, v, want)
		}
	}
}
