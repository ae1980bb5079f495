package native

import (
	"path/filepath"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// TestUNetAgainstPyTorch compares unet-s's prediction, input gradient and
// every parameter gradient with the peer's UNetS in float64.
func TestUNetAgainstPyTorch(t *testing.T) {
	peer := requireTorch(t)
	kern, _ := gemm.Best()
	u, err := NewUNet([]int{1, 28, 28}, kern)
	must(t, err)
	u.Init(4)
	// Non-trivial norm affine parameters.
	for _, p := range u.Params() {
		if p.Shape[0] == len(p.Data) && len(p.Shape) == 1 {
			for i := range p.Data {
				p.Data[i] += 0.01 * float32(i%7)
			}
		}
	}
	const n = 3
	dir := t.TempDir()
	var ws []data.NamedArray
	for _, p := range u.Params() {
		ws = append(ws, data.NamedArray{Name: p.Name, Shape: p.Shape, Data: p.Data})
	}
	x := randBatch(8, n*784)
	dl := randBatch(9, n*784)
	ts := []int{0, 499, 999}
	must(t, data.SaveNPZ(filepath.Join(dir, "w.npz"), ws))
	must(t, data.SaveNPY(filepath.Join(dir, "x.npy"), []int{n, 1, 28, 28}, x))
	must(t, data.SaveNPY(filepath.Join(dir, "dl.npy"), []int{n, 1, 28, 28}, dl))
	must(t, data.SaveNPY(filepath.Join(dir, "t.npy"), []int{n}, []float32{0, 499, 999}))
	pytorchReference(t, peer, "unet-s", "0",
		filepath.Join(dir, "w.npz"), filepath.Join(dir, "x.npy"), filepath.Join(dir, "dl.npy"), filepath.Join(dir, "ref.npz"), filepath.Join(dir, "t.npy"))
	ref, err := loadNPZ(filepath.Join(dir, "ref.npz"))
	must(t, err)
	nGrads := 0
	for k := range ref {
		if len(k) > 5 && k[:5] == "grad." {
			nGrads++
		}
	}
	if nGrads != len(u.Params()) {
		t.Fatalf("PyTorch's UNetS has %d parameters, ours %d", nGrads, len(u.Params()))
	}
	pred, err := u.Forward(x, ts, n)
	must(t, err)
	close(t, "unet-s prediction", pred, ref["logits"].Data, 1e-4)
	dx, err := u.Backward(dl, engine.InputGrad|engine.ParamGrad)
	must(t, err)
	close(t, "unet-s input gradient", dx, ref["dx"].Data, 1e-4)
	for _, p := range u.Params() {
		r, ok := ref["grad."+p.Name]
		if !ok {
			t.Errorf("PyTorch has no parameter %s", p.Name)
			continue
		}
		close(t, "unet-s gradient of "+p.Name, p.Grad, r.Data, 1e-4)
	}
}
