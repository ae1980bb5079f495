package native

import (
	"math"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// Each tensor layer gives hand-solved outputs on a tiny input, and its input
// gradient equals central differences of a weighted sum of its outputs.
func TestTensorLayersGiveHandSolvedValuesAndGradients(t *testing.T) {
	sl := func(name string, begin, count int) Layer {
		return Layer{Op: "slice", Name: name, In: []string{""}, Shape: []int{8}, Begin: []int{begin}, Steps: []int{1}, Count: []int{count}}
	}
	for _, tc := range []struct {
		what   string
		layers []Layer
		x      []float32
		want   []float32
	}{
		{"permute (2, 3) to (3, 2)", []Layer{{Op: "permute", Name: "p", Shape: []int{2, 3}, Perm: []int{1, 0}}},
			[]float32{0, 1, 2, 3, 4, 5}, []float32{0, 3, 1, 4, 2, 5}},
		{"slice the last two columns", []Layer{{Op: "slice", Name: "s", Shape: []int{2, 3}, Begin: []int{0, 1}, Steps: []int{1, 1}, Count: []int{2, 2}}},
			[]float32{0, 1, 2, 3, 4, 5}, []float32{1, 2, 4, 5}},
		{"slice backwards", []Layer{{Op: "slice", Name: "s", Shape: []int{4}, Begin: []int{3}, Steps: []int{-2}, Count: []int{2}}},
			[]float32{0, 1, 2, 3}, []float32{3, 1}},
		{"gather columns 2 and 0", []Layer{{Op: "gather", Name: "g", Shape: []int{2, 3}, Axis: 1, Index: []int{2, 0}, OutShape: []int{2, 2}}},
			[]float32{0, 1, 2, 3, 4, 5}, []float32{2, 0, 5, 3}},
		{"softmax of each row", []Layer{{Op: "softmax", Name: "s", Shape: []int{2, 2}, Axis: 1}},
			[]float32{0, float32(math.Log(3)), 1, 1}, []float32{0.25, 0.75, 0.5, 0.5}},
		{"softmax down the columns", []Layer{{Op: "softmax", Name: "s", Shape: []int{2, 2}, Axis: 0}},
			[]float32{0, 1, float32(math.Log(3)), 1}, []float32{0.25, 0.5, 0.75, 0.5}},
		{"layer norm of a row", []Layer{{Op: "layernorm", Name: "ln", Shape: []int{1, 4}, Axis: 1, Eps: 1e-6}},
			[]float32{1, 2, 3, 4}, []float32{-1.5 / 1.118034, -0.5 / 1.118034, 0.5 / 1.118034, 1.5 / 1.118034}},
		{"erf", []Layer{{Op: "erf", Name: "e", Shape: []int{2}}}, []float32{0, 1}, []float32{0, 0.84270079}},
		{"sqrt", []Layer{{Op: "sqrt", Name: "r", Shape: []int{2}}}, []float32{4, 0.25}, []float32{2, 0.5}},
		{"square", []Layer{{Op: "arith", Name: "a", Fn: "pow", Shape: []int{2}, Value: []float32{2}}}, []float32{3, -2}, []float32{9, 4}},
		{"one minus", []Layer{{Op: "arith", Name: "a", Fn: "sub", Swap: true, Shape: []int{2}, Value: []float32{1}}}, []float32{0.25, 2}, []float32{0.75, -1}},
		{"a per-column bias", []Layer{{Op: "arith", Name: "a", Fn: "add", Shape: []int{2, 2}, Value: []float32{10, 20}, ValueShape: []int{1, 2}}},
			[]float32{1, 2, 3, 4}, []float32{11, 22, 13, 24}},
		{"mean of each row", []Layer{{Op: "reducemean", Name: "m", Shape: []int{2, 2}, Axis: 1}}, []float32{1, 3, 5, 7}, []float32{2, 6}},
		{"matrix product", []Layer{sl("a", 0, 4), sl("b", 4, 4), {Op: "matmul", Name: "mm", In: []string{"a", "b"}, Shape: []int{1, 2, 2}, Shape2: []int{1, 2, 2}}},
			[]float32{1, 2, 3, 4, 5, 6, 7, 8}, []float32{19, 22, 43, 50}},
		{"broadcast difference", []Layer{sl("a", 0, 4), sl("b", 4, 2), {Op: "elementwise", Fn: "sub", Name: "d", In: []string{"a", "b"}, Shape: []int{2, 2}, Shape2: []int{2, 1}}},
			[]float32{1, 2, 3, 4, 5, 6, 0, 0}, []float32{-4, -3, -3, -2}},
		{"broadcast quotient", []Layer{sl("a", 0, 4), sl("b", 4, 2), {Op: "elementwise", Fn: "div", Name: "d", In: []string{"a", "b"}, Shape: []int{2, 2}, Shape2: []int{1, 2}}},
			[]float32{1, 2, 3, 4, 2, 4, 0, 0}, []float32{0.5, 0.5, 1.5, 1}},
		{"concatenation along columns", []Layer{sl("a", 0, 2), sl("b", 2, 4), {Op: "join", Name: "c", In: []string{"a", "b"}, Shapes: [][]int{{2, 1}, {2, 2}}, Axis: 1}},
			[]float32{1, 2, 3, 4, 5, 6, 0, 0}, []float32{1, 3, 4, 2, 5, 6}},
		{"a constant token", []Layer{{Op: "constant", Name: "k", Value: []float32{7, 8}, Shape: []int{1, 2}}}, []float32{1, 2}, []float32{7, 8}},
	} {
		net, err := Compose("t", []int{len(tc.x), 1, 1}, len(tc.want), gemm.Gonum{}, tc.layers)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		for _, p := range net.Params() { // layer norm: unit scale, zero shift
			if p.Name == "ln.weight" {
				for i := range p.Data {
					p.Data[i] = 1
				}
			}
		}
		x := append(append([]float32(nil), tc.x...), tc.x...) // two samples
		y, err := net.Forward(x, 2)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		for i, w := range append(append([]float32(nil), tc.want...), tc.want...) {
			if math.Abs(float64(y[i]-w)) > 1e-5 {
				t.Errorf("%s: output %v, want %v", tc.what, y[:len(tc.want)], tc.want)
				break
			}
		}
		checkInputGradient(t, tc.what, net, x, 2)
	}
}

// checkInputGradient compares the gradient of Σ wᵢyᵢ (wᵢ = 1 + i/10) with
// central differences.
func checkInputGradient(t *testing.T, what string, net *Net, x []float32, n int) {
	t.Helper()
	k := net.Classes()
	w := make([]float32, n*k)
	for i := range w {
		w[i] = 1 + float32(i)/10
	}
	loss := func(x []float32) float64 {
		y, _ := net.Forward(x, n)
		var s float64
		for i, v := range y {
			s += float64(w[i]) * float64(v)
		}
		return s
	}
	if _, err := net.Forward(x, n); err != nil {
		t.Fatal(err)
	}
	g, err := net.Backward(w, engine.InputGrad)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	g = append([]float32(nil), g...)
	const h = 1e-2
	for i := range x {
		xp := append([]float32(nil), x...)
		xp[i] += h
		up := loss(xp)
		xp[i] -= 2 * h
		fd := (up - loss(xp)) / (2 * h)
		if math.Abs(fd-float64(g[i])) > 2e-3*max(1, math.Abs(fd)) {
			t.Errorf("%s: input gradient %d is %g, central differences %g", what, i, g[i], fd)
		}
	}
}
