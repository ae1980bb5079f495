package attr

import (
	"context"
	"errors"
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

// VLambda is GOAR's synthetic control (§6.1, Fig. 5): a direction v of
// the explained class mixed with noise, v_λ = λ·v + (1−λ)·w, with v
// scaled to unit length and w drawn uniformly on the unit sphere (a
// normalised Gaussian vector, one per sample). λ = 1 is v itself, λ = 0 a
// random direction, so a protocol that judges features should order the
// v_λ by λ. v is, as in the paper, the trained network's input gradient
// of the explained class at each input ("we then add noise of varying
// ratios to the input gradient v"), which on the mixture is parallel to
// the known truth; with direction truth it is the truth itself, which
// makes λ the only thing that varies. Either way it needs a dataset whose
// generator knows the truth (gmm): Setup.Truth, one direction per class,
// which is what tells how far v_λ is from the truth.
type VLambda struct {
	Lambda    float64     `json:"lambda" doc:"weight of the direction v: 1 v itself, 0 (the default) a random direction" range:"[0,1]"`
	Direction string      `json:"direction" doc:"v: gradient (the paper's: the model's input gradient of the explained class) or truth (the mixture's known direction)" choices:"gradient|truth"`
	Truth     [][]float32 `json:"-"`
	Seed      uint64      `json:"-"`
	Chunk     int         `json:"-"` // inputs per engine call (default 256)
}

func (v VLambda) defaults() VLambda {
	if v.Direction == "" {
		v.Direction = "gradient"
	}
	return v
}

// Name implements Method.
func (VLambda) Name() string { return "VLambda" }

// Settings implements Method.
func (v VLambda) Settings() map[string]any {
	v = v.defaults()
	return map[string]any{"lambda": v.Lambda, "direction": v.Direction, "seed": v.Seed}
}

// Attribute implements Method.
func (v VLambda) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	v = v.defaults()
	if !(v.Lambda >= 0 && v.Lambda <= 1) {
		return Maps{}, fmt.Errorf("λ %g outside [0, 1]", v.Lambda)
	}
	dim := in.Dim()
	for k, t := range v.Truth {
		if len(t) != dim {
			return Maps{}, fmt.Errorf("the ground truth of class %d has %d values for samples of %d", k, len(t), dim)
		}
	}
	var dir func(i int) ([]float64, error)
	switch v.Direction {
	case "truth":
		unit := make([][]float64, len(v.Truth))
		for k, t := range v.Truth {
			if unit[k] = normalised(t); unit[k] == nil {
				return Maps{}, fmt.Errorf("the ground truth of class %d is zero: it has no direction", k)
			}
		}
		dir = func(i int) ([]float64, error) {
			if t := in.Target[i]; t >= len(unit) {
				return nil, fmt.Errorf("no ground truth for class %d (the dataset knows %d; v_λ needs a dataset with a known truth, such as gmm)", t, len(unit))
			}
			return unit[in.Target[i]], nil
		}
	case "gradient":
		if len(v.Truth) == 0 {
			return Maps{}, errors.New("v_λ needs a dataset with a known ground truth, such as gmm")
		}
		g, err := Gradient{Chunk: v.Chunk}.Attribute(ctx, net, in)
		if err != nil {
			return Maps{}, err
		}
		dir = func(i int) ([]float64, error) {
			u := normalised(g.Map(i))
			if u == nil {
				return nil, fmt.Errorf("the model's input gradient at input %d is zero: it has no direction", i)
			}
			return u, nil
		}
	default:
		return Maps{}, fmt.Errorf("direction %q: want gradient or truth", v.Direction)
	}
	out := Maps{Data: make([]float32, len(in.X)), Shape: append([]int{in.N}, in.Shape...)}
	w := make([]float32, dim)
	for i := range in.N {
		d, err := dir(i)
		if err != nil {
			return Maps{}, err
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
			m[j] = float32(v.Lambda*d[j] + (1-v.Lambda)*u[j])
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
