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
