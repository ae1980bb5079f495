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
	const peer = "testdata/onnx/resnet_peer.py"
	if err := imported(ctx, dir, "resnet18", peer, true, 2, opt, emit); err != nil {
		return err
	}
	return imported(ctx, dir, "resnet50", peer, false, 2, opt, emit)
}

// ViT measures torchvision's vit_b_16 at 224×224, read from dir/vit_b_16.onnx
// that the peer (testdata/onnx/vit_peer.py --export DIR) wrote with the
// weights it times: on batches of 16 random 3×224×224 images,
// vit_b_16_224_forward (logits) and vit_b_16_224_input_grad (logits and the
// input gradient of each image's top logit). One call warms each figure
// (seconds a call), as the peer's one.
func ViT(ctx context.Context, dir string, opt Options, emit func(Result)) error {
	return imported(ctx, dir, "vit_b_16", "testdata/onnx/vit_peer.py", true, 1, opt, emit)
}

// imported times dir/NAME.onnx's forward pass, and with grad its input
// gradient, on batches of 16 random 3×224×224 images, after warm calls.
func imported(ctx context.Context, dir, name, peer string, grad bool, warm int, opt Options, emit func(Result)) error {
	const B = 16
	rng := rand.New(rand.NewPCG(0, 0))
	x := make([]float32, B*3*224*224)
	for i := range x {
		x[i] = rng.Float32()
	}
	path := filepath.Join(dir, name+".onnx")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w (write the models with %s --export %s)", err, peer, dir)
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
	v, err := rate(forward, B, warm, opt.MinSeconds, 200)
	if err != nil {
		return fmt.Errorf("%s_224_forward: %w", name, err)
	}
	emit(result(name+"_224_forward", v, "img/s", opt.label()))
	if !grad {
		return nil
	}
	k := net.Classes()
	differentiate := func() error {
		_, err := engine.Differentiate(ctx, net, x, B, engine.InputGrad, func(_ int, logits, d []float32) {
			topLogitGrad(d, logits, k)
		})
		return err
	}
	v, err = rate(differentiate, B, warm, opt.MinSeconds, 200)
	if err != nil {
		return fmt.Errorf("%s_224_input_grad: %w", name, err)
	}
	emit(result(name+"_224_input_grad", v, "img/s", opt.label()))
	return nil
}
