package torch

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"faithlab/core/engine"
)

// UNet is unet-s, the ε-prediction U-Net of the peer script, served by a
// worker. It implements engine.Denoiser and engine.DenoiserGradienter, so
// core/diffusion's samplers and trainer run on it unchanged.
type UNet struct {
	*handle
	n int // the last Forward's batch
}

var (
	_ engine.Denoiser           = (*UNet)(nil)
	_ engine.DenoiserGradienter = (*UNet)(nil)
)

// NewUNet builds unet-s in the worker for inputs of shape (C, H, W), H
// and W divisible by 4, with zero weights (see New).
func (e *Engine) NewUNet(ctx context.Context, shape []int) (*UNet, error) {
	if len(shape) != 3 || slices.Min(shape) <= 0 || shape[1]%4 != 0 || shape[2]%4 != 0 {
		return nil, fmt.Errorf("unet-s: input shape %v: want C, H, W with H and W divisible by 4", shape)
	}
	h, err := newHandle(ctx, e, map[string]any{"op": "build", "arch": "unet-s", "shape": shape}, nil, shape, false)
	if err != nil {
		return nil, fmt.Errorf("unet-s on the torch engine: %w", err)
	}
	return e.wrapUNet(h), nil
}

func (e *Engine) wrapUNet(h *handle) *UNet {
	u := &UNet{handle: h}
	runtime.AddCleanup(u, e.release, h.id)
	return u
}

// Arch implements engine.Denoiser.
func (u *UNet) Arch() string { return "unet-s" }

// InputShape implements engine.Denoiser.
func (u *UNet) InputShape() []int { return slices.Clone(u.shape) }

// Clone implements engine.Denoiser.
func (u *UNet) Clone() engine.Denoiser { return u.e.wrapUNet(u.handle.clone()) }

// Forward implements engine.Denoiser.
func (u *UNet) Forward(x []float32, t []int, n int) ([]float32, error) {
	return u.forward(context.Background(), x, t, n, false, false)
}

func (u *UNet) forward(ctx context.Context, x []float32, t []int, n int, keep, input bool) ([]float32, error) {
	if err := engine.CheckInput(x, n, u.shape); err != nil {
		return nil, fmt.Errorf("unet-s forward: %w", err)
	}
	if len(t) != n {
		return nil, fmt.Errorf("unet-s forward: %d timesteps for %d inputs", len(t), n)
	}
	ts := make([]int32, n)
	for i, v := range t {
		ts[i] = int32(v)
	}
	u.n = 0
	f, err := u.request(ctx, "forward", map[string]any{"n": n, "keep": keep, "input_grad": input},
		[]array{f32("x", x, append([]int{n}, u.shape...)...), i32("t", ts, n)}, nil)
	if err != nil {
		return nil, fmt.Errorf("unet-s forward: %w", err)
	}
	y := f.get("y")
	if len(y) != len(x) {
		return nil, fmt.Errorf("unet-s forward: the worker sent %d values for %d", len(y), len(x))
	}
	u.n = n
	return y, nil
}

// Backward implements engine.Denoiser.
func (u *UNet) Backward(dOut []float32, want engine.Want) ([]float32, error) {
	if u.n == 0 {
		return nil, fmt.Errorf("unet-s backward: no forward pass to differentiate")
	}
	dim := engine.Size(u.shape)
	if len(dOut) != u.n*dim {
		return nil, fmt.Errorf("unet-s backward: %d output gradients, want %d", len(dOut), u.n*dim)
	}
	n := u.n
	u.n = 0
	f, err := u.request(context.Background(), "backward", map[string]any{"input": want&engine.InputGrad != 0, "params": want&engine.ParamGrad != 0},
		[]array{f32("dy", dOut, append([]int{n}, u.shape...)...)}, nil)
	if err != nil {
		return nil, fmt.Errorf("unet-s backward: %w", err)
	}
	if want&engine.ParamGrad != 0 {
		if err := u.addGrads(f); err != nil {
			return nil, err
		}
	}
	if want&engine.InputGrad == 0 {
		return nil, nil
	}
	return f.get("dx"), nil
}

// Gradient implements engine.DenoiserGradienter: one forward pass that
// keeps its graph, outGrad on the whole batch, one backward pass.
func (u *UNet) Gradient(x []float32, t []int, n int, want engine.Want, outGrad engine.OutputGrad) ([]float32, error) {
	y, err := u.forward(context.Background(), x, t, n, true, want&engine.InputGrad != 0)
	if err != nil {
		return nil, err
	}
	d := make([]float32, len(y))
	outGrad(0, y, d)
	return u.Backward(d, want)
}
