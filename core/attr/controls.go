package attr

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"faithlab/core/engine"
)

// Sobel is a model-agnostic control: the Sobel edge magnitude
// √(G_x² + G_y²) of each channel, zero-padded at the border.
type Sobel struct{}

// Name implements Method.
func (Sobel) Name() string { return "Sobel" }

// Settings implements Method.
func (Sobel) Settings() map[string]any { return map[string]any{} }

// Attribute implements Method.
func (Sobel) Attribute(_ context.Context, _ engine.Network, in Input) (Maps, error) {
	H, W := in.Shape[1], in.Shape[2]
	if H < 3 || W < 3 {
		return Maps{}, fmt.Errorf("Sobel: edges need images of at least 3×3 pixels, not samples of shape %v (tabular data has no edges)", in.Shape)
	}
	out := Maps{Data: make([]float32, len(in.X)), Shape: append([]int{in.N}, in.Shape...)}
	at := func(img []float32, y, x int) float32 {
		if y < 0 || y >= H || x < 0 || x >= W {
			return 0
		}
		return img[y*W+x]
	}
	for ch := 0; ch < len(in.X)/(H*W); ch++ {
		img, dst := in.X[ch*H*W:(ch+1)*H*W], out.Data[ch*H*W:(ch+1)*H*W]
		for y := 0; y < H; y++ {
			for x := 0; x < W; x++ {
				gx := at(img, y-1, x+1) + 2*at(img, y, x+1) + at(img, y+1, x+1) - at(img, y-1, x-1) - 2*at(img, y, x-1) - at(img, y+1, x-1)
				gy := at(img, y+1, x-1) + 2*at(img, y+1, x) + at(img, y+1, x+1) - at(img, y-1, x-1) - 2*at(img, y-1, x) - at(img, y-1, x+1)
				dst[y*W+x] = float32(math.Sqrt(float64(gx*gx + gy*gy)))
			}
		}
	}
	return out, nil
}

// Random is the uninformative control: independent U(0,1) values for every
// input value.
type Random struct {
	Seed uint64 `json:"-"`
}

// Name implements Method.
func (Random) Name() string { return "Random" }

// Settings implements Method.
func (r Random) Settings() map[string]any { return map[string]any{"seed": r.Seed} }

// Attribute implements Method.
func (r Random) Attribute(_ context.Context, _ engine.Network, in Input) (Maps, error) {
	out := Maps{Data: make([]float32, len(in.X)), Shape: append([]int{in.N}, in.Shape...)}
	for i := 0; i < in.N; i++ {
		rng := rand.New(rand.NewPCG(r.Seed, uint64(i)))
		for j := range out.Map(i) {
			out.Data[i*out.Per()+j] = rng.Float32()
		}
	}
	return out, nil
}

// PixelRandom is Random with one value per pixel shared by all channels, so
// that removing its top t% erases uniformly random pixels (DPI paper, §3).
type PixelRandom struct {
	Seed uint64 `json:"-"`
}

// Name implements Method.
func (PixelRandom) Name() string { return "PixelRandom" }

// Settings implements Method.
func (r PixelRandom) Settings() map[string]any { return map[string]any{"seed": r.Seed} }

// Attribute implements Method.
func (r PixelRandom) Attribute(_ context.Context, _ engine.Network, in Input) (Maps, error) {
	H, W := in.Shape[1], in.Shape[2]
	out := Maps{Data: make([]float32, in.N*H*W), Shape: []int{in.N, 1, H, W}}
	for i := 0; i < in.N; i++ {
		rng := rand.New(rand.NewPCG(r.Seed, uint64(i)))
		for j := range out.Map(i) {
			out.Data[i*H*W+j] = rng.Float32()
		}
	}
	return out, nil
}

// BlockRandom ranks one random rectangle covering DropRate of the image
// first: its pixels score 1 + U(0,1)/2, all others U(0,1)/2, so that the
// top DropRate of the map is exactly the rectangle when its area allows
// (DPI paper, §3 and Table 1). The rectangle's aspect ratio is drawn from
// [1/2, 2] and clipped to the image.
type BlockRandom struct {
	DropRate float64 `json:"drop_rate" doc:"area of the rectangle as a fraction of the image: the removal rate it is a control for" range:"(0,1)" required:"true"`
	Seed     uint64  `json:"-"`
}

// Name implements Method.
func (BlockRandom) Name() string { return "BlockRandom" }

// Settings implements Method.
func (r BlockRandom) Settings() map[string]any {
	return map[string]any{"drop_rate": r.DropRate, "seed": r.Seed}
}

// Attribute implements Method.
func (r BlockRandom) Attribute(_ context.Context, _ engine.Network, in Input) (Maps, error) {
	if !(r.DropRate > 0 && r.DropRate < 1) {
		return Maps{}, fmt.Errorf("drop rate %g outside (0, 1)", r.DropRate)
	}
	H, W := in.Shape[1], in.Shape[2]
	out := Maps{Data: make([]float32, in.N*H*W), Shape: []int{in.N, 1, H, W}}
	area := r.DropRate * float64(H*W)
	for i := 0; i < in.N; i++ {
		rng := rand.New(rand.NewPCG(r.Seed, uint64(i)))
		aspect := math.Exp((2*rng.Float64() - 1) * math.Ln2)
		bh := min(max(int(math.Round(math.Sqrt(area*aspect))), 1), H)
		bw := min(max(int(math.Round(area/float64(bh))), 1), W)
		y0, x0 := rng.IntN(H-bh+1), rng.IntN(W-bw+1)
		m := out.Map(i)
		for y := 0; y < H; y++ {
			for x := 0; x < W; x++ {
				v := rng.Float32() / 2
				if y >= y0 && y < y0+bh && x >= x0 && x < x0+bw {
					v++
				}
				m[y*W+x] = v
			}
		}
	}
	return out, nil
}

// VLambda is GOAR's synthetic control (§6.1, Fig. 5): the known
// ground-truth direction v of the explained class mixed with noise,
// v_λ = λ·v + (1−λ)·w, with v scaled to unit length and w drawn uniformly
// on the unit sphere (a normalised Gaussian vector, one per sample). λ = 1
// is the truth itself, λ = 0 a random direction, so a protocol that judges
// features should order the v_λ by λ. It needs a dataset whose generator
// knows the truth (gmm): Setup.Truth, one direction per class. The paper
// mixes noise into the trained network's input gradient, which on the
// mixture is parallel to the truth; the truth itself makes λ the only
// thing that varies.
type VLambda struct {
	Lambda float64     `json:"lambda" doc:"weight of the ground-truth direction: 1 the truth, 0 (the default) a random direction" range:"[0,1]"`
	Truth  [][]float32 `json:"-"`
	Seed   uint64      `json:"-"`
}

// Name implements Method.
func (VLambda) Name() string { return "VLambda" }

// Settings implements Method.
func (v VLambda) Settings() map[string]any { return map[string]any{"lambda": v.Lambda, "seed": v.Seed} }

// Attribute implements Method.
func (v VLambda) Attribute(_ context.Context, _ engine.Network, in Input) (Maps, error) {
	if !(v.Lambda >= 0 && v.Lambda <= 1) {
		return Maps{}, fmt.Errorf("λ %g outside [0, 1]", v.Lambda)
	}
	dim := in.Dim()
	unit := make([][]float64, len(v.Truth))
	for k, t := range v.Truth {
		if len(t) != dim {
			return Maps{}, fmt.Errorf("the ground truth of class %d has %d values for samples of %d", k, len(t), dim)
		}
		unit[k] = normalised(t)
		if unit[k] == nil {
			return Maps{}, fmt.Errorf("the ground truth of class %d is zero: it has no direction", k)
		}
	}
	out := Maps{Data: make([]float32, len(in.X)), Shape: append([]int{in.N}, in.Shape...)}
	w := make([]float32, dim)
	for i := range in.N {
		t := in.Target[i]
		if t >= len(unit) {
			return Maps{}, fmt.Errorf("no ground truth for class %d (the dataset knows %d; v_λ needs a dataset with a known truth, such as gmm)", t, len(unit))
		}
		rng := rand.New(rand.NewPCG(v.Seed, uint64(i)))
		for j := range w {
			w[j] = float32(rng.NormFloat64())
		}
		u := normalised(w)
		for u == nil { // a zero draw has no direction; never in practice
			w[0] = float32(rng.NormFloat64())
			u = normalised(w)
		}
		m := out.Map(i)
		for j := range m {
			m[j] = float32(v.Lambda*unit[t][j] + (1-v.Lambda)*u[j])
		}
	}
	return out, nil
}

// normalised is v / ‖v‖₂, nil for a zero v.
func normalised(v []float32) []float64 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return nil
	}
	n := math.Sqrt(ss)
	out := make([]float64, len(v))
	for j, x := range v {
		out[j] = float64(x) / n
	}
	return out
}
