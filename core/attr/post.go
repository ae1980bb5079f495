package attr

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/imageops"
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
				imageops.GaussianBlur(out.Data[p:p+H*W], H, W, s.Param)
			}
		case "maxfilter":
			for p := 0; p < len(out.Data); p += H * W {
				imageops.MaxFilter(out.Data[p:p+H*W], H, W, int(s.Param))
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
