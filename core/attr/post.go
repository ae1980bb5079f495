package attr

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Step is one post-processing step applied to maps after the method.
type Step struct {
	Op    string  // abs, square, gaussian, maxfilter, normalize
	Param float64 // σ for gaussian (default 1), size for maxfilter (default 3)
}

func (s Step) String() string {
	switch s.Op {
	case "gaussian", "maxfilter":
		return fmt.Sprintf("%s:%g", s.Op, s.Param)
	}
	return s.Op
}

// ParseSteps reads a comma-separated list such as "abs,gaussian:1,normalize".
func ParseSteps(spec string) ([]Step, error) {
	var steps []Step
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		op, arg, hasArg := strings.Cut(f, ":")
		s := Step{Op: op}
		switch op {
		case "abs", "square", "normalize":
			if hasArg {
				return nil, fmt.Errorf("post-processing %q takes no parameter", op)
			}
		case "gaussian", "maxfilter":
			s.Param = map[string]float64{"gaussian": 1, "maxfilter": 3}[op]
			if hasArg {
				v, err := strconv.ParseFloat(arg, 64)
				if err != nil || v <= 0 {
					return nil, fmt.Errorf("post-processing %s: parameter %q is not a positive number", op, arg)
				}
				s.Param = v
			}
		default:
			return nil, fmt.Errorf("unknown post-processing %q (abs, square, gaussian[:σ], maxfilter[:size], normalize)", op)
		}
		steps = append(steps, s)
	}
	return steps, nil
}

// Apply runs the steps on a copy of m; filters act on each channel plane.
func Apply(m Maps, steps []Step) Maps {
	out := Maps{Data: slices.Clone(m.Data), Shape: slices.Clone(m.Shape)}
	H, W := m.Shape[2], m.Shape[3]
	for _, s := range steps {
		switch s.Op {
		case "abs":
			for i, v := range out.Data {
				out.Data[i] = float32(math.Abs(float64(v)))
			}
		case "square":
			for i, v := range out.Data {
				out.Data[i] = v * v
			}
		case "gaussian":
			for p := 0; p < len(out.Data); p += H * W {
				GaussianBlur(out.Data[p:p+H*W], H, W, s.Param)
			}
		case "maxfilter":
			for p := 0; p < len(out.Data); p += H * W {
				MaxFilter(out.Data[p:p+H*W], H, W, int(s.Param))
			}
		case "normalize":
			for i := 0; i < out.N(); i++ {
				Normalize(out.Map(i))
			}
		}
	}
	return out
}

// ReduceChannels collapses n×C×H×W maps to n×1×H×W by "sum", "mean" or
// "max" over channels (for colour images; a no-op when C = 1).
func ReduceChannels(m Maps, how string) (Maps, error) {
	n, c, H, W := m.Shape[0], m.Shape[1], m.Shape[2], m.Shape[3]
	out := Maps{Data: make([]float32, n*H*W), Shape: []int{n, 1, H, W}}
	for i := 0; i < n; i++ {
		for p := 0; p < H*W; p++ {
			var acc float32
			for ch := 0; ch < c; ch++ {
				v := m.Data[(i*c+ch)*H*W+p]
				switch how {
				case "sum", "mean":
					acc += v
				case "max":
					if ch == 0 || v > acc {
						acc = v
					}
				default:
					return Maps{}, fmt.Errorf("unknown channel reduction %q (sum, mean, max)", how)
				}
			}
			if how == "mean" {
				acc /= float32(c)
			}
			out.Data[i*H*W+p] = acc
		}
	}
	return out, nil
}

// GaussianBlur filters an H×W plane in place with a separable Gaussian of
// standard deviation sigma, truncated at 3σ, reflecting at the border (as
// scipy.ndimage.gaussian_filter's default mode "reflect").
func GaussianBlur(img []float32, H, W int, sigma float64) {
	if sigma <= 0 {
		return
	}
	r := int(math.Ceil(3 * sigma))
	k := make([]float64, 2*r+1)
	var s float64
	for i := range k {
		d := float64(i - r)
		k[i] = math.Exp(-d * d / (2 * sigma * sigma))
		s += k[i]
	}
	for i := range k {
		k[i] /= s
	}
	reflect := func(i, n int) int {
		for i < 0 || i >= n {
			if i < 0 {
				i = -i - 1
			} else {
				i = 2*n - i - 1
			}
		}
		return i
	}
	tmp := make([]float64, H*W)
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			var a float64
			for j, kv := range k {
				a += kv * float64(img[y*W+reflect(x+j-r, W)])
			}
			tmp[y*W+x] = a
		}
	}
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			var a float64
			for j, kv := range k {
				a += kv * tmp[reflect(y+j-r, H)*W+x]
			}
			img[y*W+x] = float32(a)
		}
	}
}

// MaxFilter replaces each value of an H×W plane by the maximum over the
// size×size window around it (clipped at the border), in place.
func MaxFilter(img []float32, H, W, size int) {
	src := slices.Clone(img)
	lo, hi := (size-1)/2, size/2
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			m := float32(math.Inf(-1))
			for yy := max(y-lo, 0); yy <= min(y+hi, H-1); yy++ {
				for xx := max(x-lo, 0); xx <= min(x+hi, W-1); xx++ {
					m = max(m, src[yy*W+xx])
				}
			}
			img[y*W+x] = m
		}
	}
}

// Normalize rescales a map to [0, 1] by its minimum and maximum; a constant
// map becomes zeros.
func Normalize(m []float32) {
	lo, hi := slices.Min(m), slices.Max(m)
	for i, v := range m {
		if hi > lo {
			m[i] = (v - lo) / (hi - lo)
		} else {
			m[i] = 0
		}
	}
}

// TotalVariation is Σ |m(y,x+1) − m(y,x)| + |m(y+1,x) − m(y,x)| over an H×W
// plane (anisotropic TV, the DPI paper's measure of mask blurriness).
func TotalVariation(m []float32, H, W int) float64 {
	var tv float64
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			if x+1 < W {
				tv += math.Abs(float64(m[y*W+x+1] - m[y*W+x]))
			}
			if y+1 < H {
				tv += math.Abs(float64(m[(y+1)*W+x] - m[y*W+x]))
			}
		}
	}
	return tv
}

// TopMask returns the binary mask (1 = among the top rate of values) of an
// H×W map; ties are broken by index, the lower index ranking first.
func TopMask(m []float32, rate float64) ([]float32, error) {
	if !(rate > 0 && rate < 1) {
		return nil, fmt.Errorf("drop rate %g outside (0, 1)", rate)
	}
	idx := make([]int, len(m))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case m[a] > m[b]:
			return -1
		case m[a] < m[b]:
			return 1
		}
		return 0
	})
	k := int(math.Round(rate * float64(len(m))))
	mask := make([]float32, len(m))
	for _, i := range idx[:k] {
		mask[i] = 1
	}
	return mask, nil
}
