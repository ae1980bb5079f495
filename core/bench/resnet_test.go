package bench

import (
	"context"
	"os"
	"testing"

	"faithlab/core/engine/gemm"
)

// BenchmarkResNet runs ResNet's figures on the models in $FAITHLAB_RESNET_DIR
// (testdata/onnx/resnet_peer.py --export DIR writes them).
func BenchmarkResNet(b *testing.B) {
	dir := os.Getenv("FAITHLAB_RESNET_DIR")
	if dir == "" {
		b.Skip("FAITHLAB_RESNET_DIR names no folder of resnet18.onnx and resnet50.onnx")
	}
	k, err := gemm.Best()
	if err != nil {
		b.Log(err)
	}
	for b.Loop() {
		err := ResNet(context.Background(), dir, Options{MinSeconds: 2, Kernel: k}, func(r Result) {
			b.ReportMetric(r.Value, r.Bench+"_img/s")
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
