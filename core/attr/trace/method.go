package trace

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"faithlab/core/attr"
	"faithlab/core/engine"
	"faithlab/core/imageops"
	"faithlab/core/perturb"
)

// NetScorer scores keep-sets of a g×g patch grid on one image: kept patches
// show x, deleted ones the reference; the value is the target's logit, or
// its probability when prob is set. Inputs are run in batches of chunk.
func NetScorer(net engine.Network, x, ref []float32, shape []int, grid, target int, prob bool, chunk int) (Scorer, error) {
	C, H, W := shape[0], shape[1], shape[2]
	if grid < 1 || grid > H || grid > W {
		return nil, fmt.Errorf("patch grid %d×%d does not fit %d×%d images", grid, grid, H, W)
	}
	chunk = engine.Batch(shape, cmp.Or(max(chunk, 0), 256))
	t := grid * grid
	feats, err := perturb.NewFeatures(H, W, grid)
	if err != nil {
		return nil, err
	}
	dim, k := C*H*W, net.Classes()
	buf := make([]float32, chunk*dim)
	return func(ctx context.Context, keep [][]bool) ([]float64, error) {
		out := make([]float64, 0, len(keep))
		for lo := 0; lo < len(keep); lo += chunk {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			hi := min(lo+chunk, len(keep))
			for i := lo; i < hi; i++ {
				if len(keep[i]) != t {
					return nil, fmt.Errorf("keep-set of %d patches, want %d", len(keep[i]), t)
				}
				dst := buf[(i-lo)*dim : (i-lo+1)*dim]
				for c := 0; c < C; c++ {
					for p := 0; p < H*W; p++ {
						j := c*H*W + p
						if keep[i][feats.Of(p)] {
							dst[j] = x[j]
						} else {
							dst[j] = ref[j]
						}
					}
				}
			}
			logits, err := net.Forward(buf[:(hi-lo)*dim], hi-lo)
			if err != nil {
				return nil, err
			}
			if prob {
				logits = engine.Softmax(nil, logits, k)
			}
			for i := 0; i < hi-lo; i++ {
				out = append(out, float64(logits[i*k+target]))
			}
		}
		return out, nil
	}, nil
}

// TRACE is the attribution method: per image, a TRACE trajectory on a g×g
// patch grid, converted to a heatmap ψ = (rank/t)^α and upsampled to the
// image, bilinearly as the paper's figures or patch by patch. Defaults: 7×7
// grid (4×4 for the exact optimum), simulated annealing of the LeMo
// objective with K = 5000, T0 = 0.1 for probabilities (2 for logits),
// η = 0.999, zero reference, α = 1, bilinear.
type TRACE struct {
	Algorithm  string    `json:"-"` // "sa" (default), "greedy" or "exact", set by the method's name
	Objective  Objective `json:"objective" doc:"what the trajectory optimises: le (LeRF), mo (MoRF) or lemo (LeRF − MoRF)" choices:"le|mo|lemo"`
	Grid       int       `json:"grid" doc:"patch grid side g: the trajectory orders g×g patches" range:"[1,]"`
	Logit      bool      `json:"logit" doc:"score logits instead of probabilities"`
	Iterations int       `json:"iterations" doc:"simulated annealing: iterations K (0: 5000)" range:"[0,]"`
	T0         float64   `json:"t0" doc:"simulated annealing: initial temperature (0: 0.1 for probabilities, 2 for logits)" range:"[0,]"`
	Cooling    float64   `json:"cooling" doc:"simulated annealing: cooling rate η (0: 0.999)" range:"[0,1)"`
	GreedyInit bool      `json:"greedy_init" doc:"simulated annealing: start from TRACE-Greedy-Le's trajectory"`
	Restart    int       `json:"restart" doc:"simulated annealing: an independent restart, its draws from a seed of its own (0: the run's seed), so that a verdict can rest on several" range:"[0,]"`
	Reference  string    `json:"reference" doc:"value of removed patches, a removal reference: zero, mean (the image's channel means) or blur[:σ] (the image blurred; σ 5 pixels by default)"`
	Alpha      float64   `json:"alpha" doc:"heatmap exponent α in ψ = (rank/t)^α" range:"(0,]"`
	Upsample   string    `json:"upsample" doc:"heatmap to image: bilinear (the paper's figures; neighbouring patches blend, so a deletion metric on the same patches may rank them otherwise) or patch (each patch's ψ on its pixels: the deletion metric on the same grid deletes in the trajectory's order)" choices:"bilinear|patch"`
	Seed       uint64    `json:"-"`
	Chunk      int       `json:"-"`
}

func (m TRACE) defaults() TRACE {
	if m.Algorithm == "" {
		m.Algorithm = "sa"
	}
	if m.Objective == "" {
		m.Objective = LeMo
		if m.Algorithm == "greedy" {
			m.Objective = Le
		}
	}
	if m.Grid == 0 {
		m.Grid = 7
		if m.Algorithm == "exact" {
			m.Grid = 4
		}
	}
	if m.Algorithm == "sa" {
		if m.Iterations == 0 {
			m.Iterations = 5000
		}
		if m.T0 == 0 {
			m.T0 = 0.1
			if m.Logit {
				m.T0 = 2
			}
		}
		if m.Cooling == 0 {
			m.Cooling = 0.999
		}
	}
	if m.Reference == "" {
		m.Reference = "zero"
	}
	if m.Alpha == 0 {
		m.Alpha = 1
	}
	if m.Upsample == "" {
		m.Upsample = "bilinear"
	}
	return m
}

// Check implements param.Checker: greedy search has no LeMo scheme, exact
// search no more than 16 patches, and neither has annealing settings.
func (m TRACE) Check() error {
	if _, err := m.reference(); err != nil {
		return err
	}
	if m.Algorithm == "sa" || m.Algorithm == "" {
		return nil
	}
	if m.Algorithm == "greedy" && m.Objective == LeMo {
		return fmt.Errorf("objective lemo has no greedy scheme: use le or mo, or trace-sa")
	}
	if g := m.defaults().Grid; m.Algorithm == "exact" && g > 4 {
		return fmt.Errorf("grid %d: exact search scores all 2^(g×g) patch subsets, g at most 4", g)
	}
	if m.Iterations != 0 || m.T0 != 0 || m.Cooling != 0 || m.GreedyInit || m.Restart != 0 {
		return fmt.Errorf("iterations, t0, cooling, greedy_init and restart apply to trace-sa only")
	}
	return nil
}

// Entries are TRACE's methods for the registry: trace-sa, trace-greedy and
// trace-go.
func Entries() []attr.Entry {
	newTRACE := func(alg string) func(attr.Setup) TRACE {
		return func(s attr.Setup) TRACE { return TRACE{Algorithm: alg, Seed: s.Seed, Chunk: s.Chunk} }
	}
	return []attr.Entry{
		attr.NewEntry("trace-sa", "TRACE (simulated annealing)", attr.CategoryTRACE, []string{"image"},
			"the patch order that optimises the deletion objective, found by simulated annealing, as a heatmap (TRACE paper)",
			newTRACE("sa"), TRACE.defaults),
		attr.NewEntry("trace-greedy", "TRACE (greedy)", attr.CategoryTRACE, []string{"image"},
			"the patch order that optimises the deletion objective, built greedily step by step, as a heatmap (TRACE paper)",
			newTRACE("greedy"), TRACE.defaults, "iterations", "t0", "cooling", "greedy_init", "restart"),
		attr.NewEntry("trace-go", "TRACE (exact optimum)", attr.CategoryTRACE, []string{"image"},
			"the patch order that optimises the deletion objective exactly (TRACE-GO; 2^t forward passes, so at most 4×4 patches), as a heatmap; its record keeps the complete-search bound (TRACE paper, Fig. 2(a))",
			newTRACE("exact"), TRACE.defaults, "iterations", "t0", "cooling", "greedy_init", "restart"),
	}
}

// Name implements attr.Method, e.g. "TRACE-SA-lemo".
func (m TRACE) Name() string {
	m = m.defaults()
	alg := map[string]string{"sa": "SA", "greedy": "Greedy", "exact": "GO"}[m.Algorithm]
	return fmt.Sprintf("TRACE-%s-%s", alg, m.Objective)
}

// Settings implements attr.Method.
func (m TRACE) Settings() map[string]any {
	m = m.defaults()
	return map[string]any{"algorithm": m.Algorithm, "objective": string(m.Objective), "grid": m.Grid, "logit": m.Logit,
		"iterations": m.Iterations, "t0": m.T0, "cooling": m.Cooling, "greedy_init": m.GreedyInit, "restart": m.Restart,
		"reference": string(m.Reference), "alpha": m.Alpha, "upsample": m.Upsample, "seed": m.Seed}
}

// Attribute implements attr.Method.
func (m TRACE) Attribute(ctx context.Context, net engine.Network, in attr.Input) (attr.Maps, error) {
	maps, _, err := m.Explain(ctx, net, in)
	return maps, err
}

// reference parses the Reference: a removal reference whose values form an
// image of their own (not ROAD's, not dataset-mean, which needs the data).
func (m TRACE) reference() (perturb.Reference, error) {
	name := m.Reference
	if name == "" {
		name = "zero"
	}
	ref, err := perturb.ParseReference(name, nil)
	if err == nil {
		if _, road := ref.(perturb.ROAD); road {
			err = fmt.Errorf("ROAD imputes from kept pixels: TRACE needs a reference image (zero, mean, blur[:σ])")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reference %s: %w", name, err)
	}
	return ref, nil
}

// Explain returns the heatmaps and, per image, the trajectory, objective
// value, iterations and time.
func (m TRACE) Explain(ctx context.Context, net engine.Network, in attr.Input) (attr.Maps, []Result, error) {
	m = m.defaults()
	H, W := in.Shape[1], in.Shape[2]
	dim := in.Dim()
	out := attr.Maps{Data: make([]float32, in.N*H*W), Shape: []int{in.N, 1, H, W}}
	results := make([]Result, in.N)
	reference, err := m.reference()
	if err != nil {
		return attr.Maps{}, nil, err
	}
	ref := make([]float32, dim)
	for i := 0; i < in.N; i++ {
		x := in.Sample(i)
		if err := perturb.Baseline(reference, x, in.Shape, ref); err != nil {
			return attr.Maps{}, nil, err
		}
		f, err := NetScorer(net, x, ref, in.Shape, m.Grid, in.Target[i], !m.Logit, m.Chunk)
		if err != nil {
			return attr.Maps{}, nil, err
		}
		t := m.Grid * m.Grid
		var r Result
		switch m.Algorithm {
		case "exact":
			r, err = Exact(ctx, f, t, m.Objective)
		case "greedy":
			r, err = Greedy(ctx, f, t, m.Objective)
		case "sa":
			a := Annealing{Iterations: m.Iterations, T0: m.T0, Cooling: m.Cooling, Seed: m.Seed + uint64(i) + uint64(m.Restart)<<32}
			if m.GreedyInit {
				g, gerr := Greedy(ctx, f, t, Le)
				if gerr != nil {
					return attr.Maps{}, nil, gerr
				}
				a.Init = g.Trajectory
			}
			r, err = Anneal(ctx, f, t, m.Objective, a)
		default:
			return attr.Maps{}, nil, fmt.Errorf("unknown TRACE algorithm %q (sa, greedy, exact)", m.Algorithm)
		}
		if err != nil {
			return attr.Maps{}, nil, err
		}
		results[i] = r
		psi, dst := Heatmap(r.Trajectory, m.Alpha), out.Data[i*H*W:(i+1)*H*W]
		if m.Upsample == "patch" {
			feats, _ := perturb.NewFeatures(H, W, m.Grid) // NetScorer checked the grid
			for p := range dst {
				dst[p] = psi[feats.Of(p)]
			}
		} else {
			imageops.Bilinear(dst, H, W, psi, m.Grid, m.Grid)
		}
	}
	return out, results, nil
}

// Passes implements attr.Coster: forward passes over partially deleted
// images — every remaining patch at each of greedy search's t steps, every
// subset of the t patches for exact search, or a whole trajectory of t+1
// images per annealing iteration.
func (m TRACE) Passes() float64 {
	m = m.defaults()
	t := float64(m.Grid * m.Grid)
	switch m.Algorithm {
	case "greedy":
		return t * (t + 1) / 2 / 3
	case "exact":
		return math.Exp2(t) / 3
	}
	return float64(m.Iterations) * (t + 1) / 3
}
