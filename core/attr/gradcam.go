package attr

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"faithlab/core/engine"
	"faithlab/core/imageops"
)

// GradCAM weights a convolutional layer's channels by the spatial mean of
// the target logit's gradient, sums them, keeps the positive part and
// upsamples bilinearly to the input (Selvaraju et al. 2017, Eqs. 1–2).
// Maps have one channel. Layer defaults to the network's last
// convolutional activation ("relu3" for goar-cnn, "layer4.1" for resnet18).
type GradCAM struct {
	Layer string `json:"layer" doc:"activation whose channels are weighted (empty: the network's last convolutional activation)"`
	Chunk int    `json:"-"`
}

// Name implements Method.
func (GradCAM) Name() string { return "GradCAM" }

// Settings implements Method.
func (g GradCAM) Settings() map[string]any { return map[string]any{"layer": g.Layer} }

// Attribute implements Method.
func (g GradCAM) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	layer := g.Layer
	if c, ok := net.(engine.CAMLayerer); ok && layer == "" {
		layer = c.CAMLayer()
	}
	if layer == "" {
		return Maps{}, fmt.Errorf("%s names no convolutional layer for Grad-CAM: name one (its layers: %s)", net.Arch(), strings.Join(net.Layers(), ", "))
	}
	chunk := engine.Batch(in.Shape, cmp.Or(max(g.Chunk, 0), 256))
	H, W := in.Shape[1], in.Shape[2]
	out := Maps{Data: make([]float32, in.N*H*W), Shape: []int{in.N, 1, H, W}}
	k := net.Classes()
	dim := in.Dim()
	for lo := 0; lo < in.N; lo += chunk {
		if err := ctx.Err(); err != nil {
			return Maps{}, err
		}
		hi := min(lo+chunk, in.N)
		if _, err := net.Forward(in.X[lo*dim:hi*dim], hi-lo); err != nil {
			return Maps{}, err
		}
		dl := make([]float32, (hi-lo)*k)
		for i := lo; i < hi; i++ {
			dl[(i-lo)*k+in.Target[i]] = 1
		}
		if _, err := net.Backward(dl, 0); err != nil {
			return Maps{}, err
		}
		a, err := net.Activation(layer)
		if err != nil {
			return Maps{}, err
		}
		if len(a.Shape) != 4 || a.Grad == nil {
			return Maps{}, fmt.Errorf("layer %s has shape %v: Grad-CAM needs a spatial (n×C×h×w) layer", layer, a.Shape)
		}
		C, h, w := a.Shape[1], a.Shape[2], a.Shape[3]
		cam := make([]float32, h*w)
		for s := 0; s < hi-lo; s++ {
			clear(cam)
			for c := 0; c < C; c++ {
				base := (s*C + c) * h * w
				var alpha float32
				for _, v := range a.Grad[base : base+h*w] {
					alpha += v
				}
				alpha /= float32(h * w)
				for p := 0; p < h*w; p++ {
					cam[p] += alpha * a.Values[base+p]
				}
			}
			for p := range cam {
				cam[p] = max(cam[p], 0)
			}
			imageops.Bilinear(out.Data[(lo+s)*H*W:(lo+s+1)*H*W], H, W, cam, h, w)
		}
	}
	return out, nil
}
