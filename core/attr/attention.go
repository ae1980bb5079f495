package attr

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"faithlab/core/engine"
	"faithlab/core/imageops"
)

// The transformer methods read a vision transformer's attention
// probabilities (engine.Attentioner: each block's softmax between the
// query–key product and the product with the values, n×heads×T×T) and give
// one value per patch: token 0 is the class token, the last g_h·g_w tokens
// the patches in row-major order over the patch grid (tokens between, such
// as DeiT's distillation token, are left out). The grid's map is upsampled
// to the input's H×W bilinearly with align_corners=false (imageops.Bilinear,
// torch's F.interpolate(mode="bilinear")), as Grad-CAM's; maps have one
// channel. A model without attention probabilities is refused.

// AttentionRollout is Abnar & Zuidema's (2020) attention rollout: per
// block, the attention averaged over heads plus the identity (the residual
// connection), each row normalised to sum 1 (Â = 0.5·Ā + 0.5·I), multiplied
// through the blocks from the first, R = Â_L ⋯ Â_1; the map is the class
// token's row of R over the patches. It ignores the explained class.
type AttentionRollout struct {
	Chunk int `json:"-"`
}

// GradientRollout is the gradient-weighted attention rollout of Chefer,
// Gur & Wolf (2021b, "Generic Attention-model Explainability for
// Interpreting Bi-Modal and Encoder-Decoder Transformers", ICCV, Eqs. 5–6),
// the simplified successor of their relevance propagation (Chefer et al.
// 2021a) as it is commonly used for ViTs: per block Ā = E_h[(∇A ⊙ A)⁺], the
// positive part of the attention times the gradient of the explained
// class's logit with respect to it, averaged over heads; R = I, then
// R ← R + Ā·R block by block from the first; the map is the class token's
// row of R over the patches. No LRP relevance through the other layers.
type GradientRollout struct {
	Chunk int `json:"-"`
}

// RawAttention is the last block's attention of the class token to the
// patches, averaged over heads: the baseline the rollouts are compared with.
type RawAttention struct {
	Chunk int `json:"-"`
}

// Name implements Method.
func (AttentionRollout) Name() string { return "AttentionRollout" }

// Name implements Method.
func (GradientRollout) Name() string { return "GradientRollout" }

// Name implements Method.
func (RawAttention) Name() string { return "RawAttention" }

// Settings implements Method.
func (AttentionRollout) Settings() map[string]any { return map[string]any{} }

// Settings implements Method.
func (GradientRollout) Settings() map[string]any { return map[string]any{} }

// Settings implements Method.
func (RawAttention) Settings() map[string]any { return map[string]any{} }

// Attribute implements Method.
func (m AttentionRollout) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	return attentionMaps(ctx, net, in, m.Chunk, false, func(as []engine.Activation, s int, T int) []float64 {
		R := identity(T)
		for _, a := range as {
			A := headMean(a, s, T, false)
			for i := range T {
				A[i*T+i]++
				var sum float64
				for j := range T {
					sum += A[i*T+j]
				}
				for j := range T {
					A[i*T+j] /= sum
				}
			}
			R = matmul(A, R, T)
		}
		return R[:T]
	})
}

// Attribute implements Method.
func (m GradientRollout) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	return attentionMaps(ctx, net, in, m.Chunk, true, func(as []engine.Activation, s int, T int) []float64 {
		R := identity(T)
		for _, a := range as {
			AR := matmul(headMean(a, s, T, true), R, T)
			for i := range R {
				R[i] += AR[i]
			}
		}
		return R[:T]
	})
}

// Attribute implements Method.
func (m RawAttention) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	return attentionMaps(ctx, net, in, m.Chunk, false, func(as []engine.Activation, s int, T int) []float64 {
		return headMean(as[len(as)-1], s, T, false)[:T]
	})
}

func identity(T int) []float64 {
	R := make([]float64, T*T)
	for i := range T {
		R[i*T+i] = 1
	}
	return R
}

// matmul is the T×T product a·b.
func matmul(a, b []float64, T int) []float64 {
	out := make([]float64, T*T)
	for i := range T {
		for k := range T {
			v := a[i*T+k]
			if v == 0 {
				continue
			}
			for j := range T {
				out[i*T+j] += v * b[k*T+j]
			}
		}
	}
	return out
}

// headMean is sample s's attention averaged over heads (T×T), or with
// gradWeighted the heads' mean of (∇A ⊙ A)⁺.
func headMean(a engine.Activation, s, T int, gradWeighted bool) []float64 {
	heads := a.Shape[1]
	out := make([]float64, T*T)
	base := s * heads * T * T
	for h := range heads {
		for i := range T * T {
			v := float64(a.Values[base+h*T*T+i])
			if gradWeighted {
				v = max(v*float64(a.Grad[base+h*T*T+i]), 0)
			}
			out[i] += v
		}
	}
	for i := range out {
		out[i] /= float64(heads)
	}
	return out
}

// attentionMaps runs the network on chunks of the input (backward too, for
// the explained classes' gradients, where grads), reads every block's
// attention and makes each sample's map from the class token's row that
// row gives (T values), upsampled from the patch grid.
func attentionMaps(ctx context.Context, net engine.Network, in Input, chunk int, grads bool, row func(as []engine.Activation, s, T int) []float64) (Maps, error) {
	at, ok := net.(engine.Attentioner)
	var layers []string
	if ok {
		layers = at.AttentionLayers()
	}
	if len(layers) == 0 {
		return Maps{}, fmt.Errorf("%s has no attention probabilities (a softmax between a query–key product and the product with the values): the transformer methods explain vision transformers", net.Arch())
	}
	H, W := in.Shape[1], in.Shape[2]
	out := Maps{Data: make([]float32, in.N*H*W), Shape: []int{in.N, 1, H, W}}
	chunk = engine.Batch(in.Shape, cmp.Or(max(chunk, 0), 256))
	k, dim := net.Classes(), in.Dim()
	for lo := 0; lo < in.N; lo += chunk {
		if err := ctx.Err(); err != nil {
			return Maps{}, err
		}
		hi := min(lo+chunk, in.N)
		if _, err := net.Forward(in.X[lo*dim:hi*dim], hi-lo); err != nil {
			return Maps{}, err
		}
		if grads {
			dl := make([]float32, (hi-lo)*k)
			for i := lo; i < hi; i++ {
				dl[(i-lo)*k+in.Target[i]] = 1
			}
			if _, err := net.Backward(dl, 0); err != nil {
				return Maps{}, err
			}
		}
		as := make([]engine.Activation, len(layers))
		for i, name := range layers {
			a, err := net.Activation(name)
			if err != nil {
				return Maps{}, err
			}
			r := len(a.Shape)
			if r < 4 || a.Shape[r-1] != a.Shape[r-2] || grads && a.Grad == nil {
				return Maps{}, fmt.Errorf("%s: attention layer %s of shape %v: want n×heads×T×T with its gradient", net.Arch(), name, a.Shape)
			}
			// Heads may come in several axes (n×1×heads×T×T): one.
			a.Shape = []int{a.Shape[0], engine.Size(a.Shape[1 : r-2]), a.Shape[r-2], a.Shape[r-1]}
			if i > 0 && a.Shape[2] != as[0].Shape[2] {
				return Maps{}, fmt.Errorf("%s: attention layers of %d and %d tokens", net.Arch(), as[0].Shape[2], a.Shape[2])
			}
			as[i] = a
		}
		T := as[0].Shape[2]
		gh, gw, err := patchGrid(T, H, W)
		if err != nil {
			return Maps{}, fmt.Errorf("%s: %w", net.Arch(), err)
		}
		grid := make([]float32, gh*gw)
		for s := range hi - lo {
			r := row(as, s, T)
			for p := range grid {
				grid[p] = float32(r[T-gh*gw+p])
			}
			imageops.Bilinear(out.Data[(lo+s)*H*W:(lo+s+1)*H*W], H, W, grid, gh, gw)
		}
	}
	return out, nil
}

// patchGrid is the grid of patches among T tokens for an H×W input: the
// largest g_h·g_w ≤ T−1 of H:W's proportion.
func patchGrid(T, H, W int) (int, int, error) {
	for extra := 1; extra <= 2 && extra < T; extra++ {
		p := T - extra
		gh := int(math.Round(math.Sqrt(float64(p) * float64(H) / float64(W))))
		if gh > 0 && p%gh == 0 && H%gh == 0 && W%(p/gh) == 0 {
			return gh, p / gh, nil
		}
	}
	return 0, 0, fmt.Errorf("%d tokens make no grid of patches over a %d×%d input (a class token, then the patches)", T, H, W)
}
