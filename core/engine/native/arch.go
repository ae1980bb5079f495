package native

import (
	"fmt"
	"slices"

	"faithlab/core/engine/gemm"
)

// Architectures lists the built-in architectures New builds.
func Architectures() []string { return []string{"goar-cnn", "mlp", "resnet18", "logreg"} }

// New builds a built-in architecture for inputs of shape (C, H, W) and the
// given number of classes, with zero weights; call Init or load weights.
//
//   - goar-cnn (GOAR, Appendix A): conv(C,32,k5)+ReLU+maxpool2 →
//     conv(32,64,k3)+ReLU+maxpool2 → conv(64,64,k3)+ReLU → flatten →
//     fc64+ReLU → fc32+ReLU → fc(classes). Modules c1 c2 c3 f1 f2 f3.
//   - resnet18: the CIFAR variant of He et al. (2016): conv3×3(C,64)+BN+ReLU
//     stem without max-pool, four stages of two BasicBlocks (64, 128, 256,
//     512 channels; stride 2 from the second stage, 1×1 conv+BN shortcuts
//     where the shape changes), global average pooling, Linear(512,classes).
//     Modules conv1 bn1 layerS.B.{conv1,bn1,conv2,bn2,shortcut.0,shortcut.1}
//     linear, as the widely used pytorch-cifar ResNet18.
//   - mlp: flatten → three hidden Linear(·,128)+ReLU → Linear(128,classes).
//     Modules f1 f2 f3 f4, i.e. PyTorch's nn.Linear layers under those names.
//   - logreg: flatten → Linear(·,classes) (module f1): multinomial logistic
//     regression, the interpretable model whose weights are OpenXAI's ground
//     truth.
func New(arch string, shape []int, classes int, kern gemm.Kernel) (*Net, error) {
	if len(shape) != 3 || slices.Min(shape) <= 0 {
		return nil, fmt.Errorf("%s: input shape %v: want C, H, W, all positive", arch, shape)
	}
	if classes < 2 {
		return nil, fmt.Errorf("%s: %d classes: need at least 2", arch, classes)
	}
	in := dims{shape[1], shape[2], shape[0]}
	var ls []layer
	add := func(l layer) { ls = append(ls, l); in = l.out() }
	switch arch {
	case "goar-cnn":
		add(newConv2d("c1", in, 32, 5, 1, 0, kern))
		add(&relu{nm: "relu1", d: in})
		add(newMaxPool("pool1", in, 2))
		add(newConv("c2", in, 64, 3, 1, 0, false, kern)) // Winograd on 28×28 inputs: 12×12 → 10×10
		add(&relu{nm: "relu2", d: in})
		add(newMaxPool("pool2", in, 2))
		add(newConv2d("c3", in, 64, 3, 1, 0, kern))
		add(&relu{nm: "relu3", d: in})
		add(&flatten{nm: "flatten", i: in})
		add(newLinear("f1", in.size(), 64, kern))
		add(&relu{nm: "relu4", d: in})
		add(newLinear("f2", 64, 32, kern))
		add(&relu{nm: "relu5", d: in})
		add(newLinear("f3", 32, classes, kern))
	case "resnet18":
		conv := func(name string, in dims, cout, k, stride, pad int) *conv2d {
			c := newConv2d(name, in, cout, k, stride, pad, kern)
			c.noBias = true
			return c
		}
		stem := conv("conv1", in, 64, 3, 1, 1)
		add(stem)
		add(newBatchNorm("bn1", in))
		add(&relu{nm: "relu", d: in})
		cin := 64
		for s, cout := range []int{64, 128, 256, 512} {
			for b := 0; b < 2; b++ {
				stride := 1
				if s > 0 && b == 0 {
					stride = 2
				}
				p := fmt.Sprintf("layer%d.%d.", s+1, b)
				blk := &residual{nm: fmt.Sprintf("layer%d.%d", s+1, b)}
				c1 := conv(p+"conv1", in, cout, 3, stride, 1)
				mid := c1.out()
				c2 := conv(p+"conv2", mid, cout, 3, 1, 1)
				blk.main = []layer{c1, newBatchNorm(p+"bn1", mid), &relu{nm: p + "relu", d: mid}, c2, newBatchNorm(p+"bn2", mid)}
				if stride != 1 || cin != cout {
					blk.shortcut = []layer{conv(p+"shortcut.0", in, cout, 1, stride, 0), newBatchNorm(p+"shortcut.1", mid)}
				}
				add(blk)
				cin = cout
			}
		}
		add(&avgPool{nm: "avgpool", i: in})
		add(newLinear("linear", 512, classes, kern))
	case "mlp":
		add(&flatten{nm: "flatten", i: in})
		for i, name := range []string{"f1", "f2", "f3"} {
			add(newLinear(name, in.size(), 128, kern))
			add(&relu{nm: fmt.Sprintf("relu%d", i+1), d: in})
		}
		add(newLinear("f4", 128, classes, kern))
	case "logreg":
		add(&flatten{nm: "flatten", i: in})
		add(newLinear("f1", in.size(), classes, kern))
	default:
		return nil, fmt.Errorf("unknown architecture %q (built-in: %v)", arch, Architectures())
	}
	for _, l := range ls {
		if o := l.out(); o.h <= 0 || o.w <= 0 {
			return nil, fmt.Errorf("%s: input %v is too small for layer %s", arch, shape, l.name())
		}
	}
	return newNet(arch, shape, classes, kern, ls)
}
