package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"faithlab/core/engine"
	"faithlab/core/engine/onnx"
)

// ResNet measures torchvision's ResNet-18 and ResNet-50 at the field's size,
// read from the ONNX files in dir that the peer (testdata/onnx/resnet_peer.py
// --export DIR) wrote with the weights it times: on batches of 16 random
// 3×224×224 images, resnet18_224_forward (logits), resnet18_224_input_grad
// (logits and the input gradient of each image's top logit) and
// resnet50_224_forward.
func ResNet(ctx context.Context, dir string, opt Options, emit func(Result)) error {
	const B = 16
	rng := rand.New(rand.NewPCG(0, 0))
	x := make([]float32, B*3*224*224)
	for i := range x {
		x[i] = rng.Float32()
	}
	for _, name := range []string{"resnet18", "resnet50"} {
		path := filepath.Join(dir, name+".onnx")
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%w (write the models with testdata/onnx/resnet_peer.py --export %s)", err, dir)
		}
		g, err := onnx.Parse(b)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		nat, err := g.Build(name, opt.Kernel)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		net, err := opt.Engine.Move(ctx, nat)
		if err != nil {
			return err
		}
		forward := func() error {
			_, err := engine.Logits(ctx, net, x, B)
			return err
		}
		v, err := rate(forward, B, 2, opt.MinSeconds, 200)
		if err != nil {
			return fmt.Errorf("%s_224_forward: %w", name, err)
		}
		emit(result(name+"_224_forward", v, "img/s", opt.label()))
		if name != "resnet18" {
			continue
		}
		k := net.Classes()
		grad := func() error {
			_, err := engine.Differentiate(ctx, net, x, B, engine.InputGrad, func(_ int, logits, d []float32) {
				topLogitGrad(d, logits, k)
			})
			return err
		}
		v, err = rate(grad, B, 2, opt.MinSeconds, 200)
		if err != nil {
			return fmt.Errorf("%s_224_input_grad: %w", name, err)
		}
		emit(result(name+"_224_input_grad", v, "img/s", opt.label()))
	}
	return nil
}
