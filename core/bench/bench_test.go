package bench

import (
	"context"
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
