package onnx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"faithlab/core/attr"
	"faithlab/core/data"
	"faithlab/core/engine/gemm"
)

// On 8-bit images with flat regions, where most max-pool windows hold
// their largest value more than once, Gradient maps are PyTorch's
// autograd's (float64 and float32, torch.nn.functional.max_pool2d's
// backward: the first maximum in its scan) to 1e-5 of the largest value,
// on the engine's fastest kernel and on gonum: a ResNet (7×7 stem, 3×3
// max-pool of stride 2 and padding 1) and a network of every max-pool path
// (overlapping windows on the image itself, a white pixel the largest of
// four of them; 2×2 after a ReLU and after a convolution; 3×3 of stride
// 3). Before the convolutions a max-pool reads summed every pixel in one
// order, OpenBLAS's Haswell kernel (CI's) broke the ties and the ResNet's
// maps differed by 68 % of their largest value.
func TestMaxPoolTiesMatchPyTorch(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("exports networks with PyTorch (not in -short mode or under the race detector)")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, torchvision").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import torch and torchvision (%v): apt-get install python3-torch python3-torchvision", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("/usr/bin/python3", filepath.Join("..", "..", "..", "testdata", "onnx", "make_ties.py"), dir).CombinedOutput(); err != nil {
		t.Fatalf("make_ties.py: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ties.npz"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := data.ParseNPZ(b)
	if err != nil {
		t.Fatal(err)
	}
	x, n := want["x"].Data, want["x"].Shape[0]
	best, err := gemm.Best()
	if err != nil {
		t.Log(err)
	}
	for _, name := range []string{"resnet", "pools"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".onnx"))
		if err != nil {
			t.Fatal(err)
		}
		g, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, kern := range []gemm.Kernel{best, gemm.Gonum{}} {
			net, err := g.Build("onnx", kern)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			in := attr.Input{X: x, N: n, Shape: net.InputShape(), Target: []int{3, 3, 3, 3}}
			maps, err := attr.Gradient{}.Attribute(context.Background(), net, in)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, ref := range []string{"g64", "g32"} {
				e := relErr(maps.Data, want[name+"."+ref].Data)
				t.Logf("%s on %s: Gradient within %.2g of PyTorch's in float%s (relative to the largest value)", name, kern.Name(), e, ref[1:])
				if e > 1e-5 {
					t.Errorf("%s on %s: Gradient differs from PyTorch's in float%s by %.3g of the largest value", name, kern.Name(), ref[1:], e)
				}
			}
		}
	}
}
