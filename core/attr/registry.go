package attr

import (
	"fmt"
	"strings"
)

// Params are the settings a method may take, by name; each method reads
// the ones it has and zero values mean that method's defaults.
type Params struct {
	Steps      int       // IntegratedGradients
	Rule       string    // IntegratedGradients: riemann-right, trapezoid
	Baseline   Baseline  // IntegratedGradients, DeepLift: zero, mean, blur
	Samples    int       // SmoothGrad family, GradientSHAP
	NoiseFrac  float64   // SmoothGrad family: σ as a fraction of the input range
	Stdev      float64   // GradientSHAP: input noise
	References []float32 // GradientSHAP: reference inputs
	Layer      string    // GradCAM
	DropRate   float64   // BlockRandom
	Grid       int       // KernelSHAP: patch grid side (0: every input value is a feature)
	Seed       uint64
	Chunk      int // inputs per engine call
}

// Names lists the short names New accepts.
func Names() []string {
	return []string{"gradient", "gradxinput", "ig", "smoothgrad", "sgsq", "vargrad", "deeplift",
		"gradientshap", "kernelshap", "gradcam", "sobel", "random", "pixelrandom", "blockrandom"}
}

// New returns the method with a short name (see Names).
func New(name string, p Params) (Method, error) {
	switch strings.ToLower(name) {
	case "gradient", "saliency":
		return Gradient{Chunk: p.Chunk}, nil
	case "gradxinput", "gradientxinput":
		return GradientXInput{Chunk: p.Chunk}, nil
	case "ig", "integratedgradients":
		return IntegratedGradients{Steps: p.Steps, Rule: p.Rule, Baseline: p.Baseline, Chunk: p.Chunk}, nil
	case "smoothgrad":
		return SmoothGrad{Samples: p.Samples, NoiseFrac: p.NoiseFrac, Seed: p.Seed, Chunk: p.Chunk}, nil
	case "sgsq", "smoothgradsquare":
		return SmoothGrad{Samples: p.Samples, NoiseFrac: p.NoiseFrac, Aggregate: "square", Seed: p.Seed, Chunk: p.Chunk}, nil
	case "vargrad":
		return SmoothGrad{Samples: p.Samples, NoiseFrac: p.NoiseFrac, Aggregate: "variance", Seed: p.Seed, Chunk: p.Chunk}, nil
	case "deeplift":
		return DeepLift{Baseline: p.Baseline, Chunk: p.Chunk}, nil
	case "gradientshap":
		return GradientSHAP{Samples: p.Samples, Stdev: p.Stdev, References: p.References, Seed: p.Seed, Chunk: p.Chunk}, nil
	case "kernelshap":
		return KernelSHAP{Samples: p.Samples, Grid: p.Grid, Baseline: p.Baseline, Seed: p.Seed, Chunk: p.Chunk}, nil
	case "gradcam":
		return GradCAM{Layer: p.Layer, Chunk: p.Chunk}, nil
	case "sobel":
		return Sobel{}, nil
	case "random":
		return Random{Seed: p.Seed}, nil
	case "pixelrandom":
		return PixelRandom{Seed: p.Seed}, nil
	case "blockrandom":
		return BlockRandom{DropRate: p.DropRate, Seed: p.Seed}, nil
	}
	return nil, fmt.Errorf("unknown attribution method %q (%s)", name, strings.Join(Names(), ", "))
}
