package bench

import (
	"context"
	"math"
	"os"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
)

func TestCNNFigures(t *testing.T) {
	const dir = "/usr/share/datasets/fashion-mnist/"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("Fashion-MNIST not installed")
	}
	ds, err := data.LoadIDX("fashion-mnist", dir+"train-images-idx3-ubyte.gz", dir+"train-labels-idx1-ubyte.gz", data.FashionMNISTClasses())
	if err != nil {
		t.Fatal(err)
	}
	k, _ := gemm.Best()
	var got []Result
	if err := CNN(context.Background(), ds, Options{MinSeconds: 1, Kernel: k}, func(r Result) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		t.Logf("%s %.0f %s (%s)", r.Bench, r.Value, r.Unit, r.Kernel)
		if r.Value <= 0 {
			t.Errorf("%s: %g", r.Bench, r.Value)
		}
	}
}

// TestGEMMFigures checks the ceiling's two figures come out, named as
// documented, positive and finite.
func TestGEMMFigures(t *testing.T) {
	k, _ := gemm.Best()
	var got []Result
	if err := GEMM(context.Background(), Options{MinSeconds: 0.01, Kernel: k}, func(r Result) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Bench != "gemm_1024" || got[1].Bench != "gemm_1024_1core" {
		t.Fatalf("got %+v, want gemm_1024 and gemm_1024_1core", got)
	}
	for _, r := range got {
		if !(r.Value > 0) || math.IsInf(r.Value, 0) || r.Unit != "GFLOP/s" {
			t.Errorf("%s: %g %s", r.Bench, r.Value, r.Unit)
		}
	}
}
