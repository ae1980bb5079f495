package protocol

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"faithlab/core/engine"
)

// Robustness is how much a method's map moves when the input moves a
// little: the method's maps are recomputed (Env.Explain) on Draws noisy
// copies of each input, explaining the same class, and per input three
// measures are taken over the draws, whichever setting leads:
//
//   - Max-Sensitivity and Avg-Sensitivity (Yeh et al., "On the
//     (in)fidelity and sensitivity of explanations", NeurIPS 2019): the
//     largest and the mean ‖Φ(x′) − Φ(x)‖ / ‖Φ(x)‖ (Frobenius norms, as
//     Quantus), with x′ = x + U(−r, r) per value, r = 0.2 in the data's
//     units (Quantus's lower bound);
//   - Local Lipschitz Estimate (Alvarez-Melis & Jaakkola, "On the
//     robustness of interpretability methods", 2018): the largest
//     ‖Φ(x′) − Φ(x)‖ / ‖x′ − x‖, with x′ = x + N(0, σ²) per value,
//     σ = 0.1 (Quantus's).
//
// Lower is more robust. Quantus draws 200 copies an input; the default
// here is 10 (each is a full map of the method).
type Robustness struct {
	Samples int     `json:"samples" doc:"test inputs evaluated: the first n of the test set" range:"[1,]"`
	Draws   int     `json:"draws" doc:"noisy copies of each input" range:"[1,]"`
	Noise   string  `json:"noise" doc:"uniform: each value moved by U(−scale, scale); gaussian: by N(0, scale²)" choices:"uniform|gaussian"`
	Scale   float64 `json:"scale" doc:"the noise's half-width (uniform) or standard deviation (gaussian), in the data's units" range:"(0,]"`
	Target  string  `json:"target" doc:"class explained, the same for every copy: predicted or label" choices:"predicted|label"`

	as named
}

// MaxSensitivity is Robustness led by Yeh et al.'s Max-Sensitivity.
func MaxSensitivity() Robustness {
	return Robustness{Noise: "uniform", Scale: 0.2, as: named{"MaxSensitivity",
		"Max-Sensitivity (Yeh et al. 2019): the largest relative change of the map over noisy copies of the input", "max_sensitivity"}}.defaults()
}

// AvgSensitivity is Robustness led by Yeh et al.'s Avg-Sensitivity.
func AvgSensitivity() Robustness {
	return Robustness{Noise: "uniform", Scale: 0.2, as: named{"AvgSensitivity",
		"Avg-Sensitivity (Yeh et al. 2019): the mean relative change of the map over noisy copies of the input", "avg_sensitivity"}}.defaults()
}

// LocalLipschitzEstimate is Robustness led by Alvarez-Melis & Jaakkola's
// Local Lipschitz Estimate.
func LocalLipschitzEstimate() Robustness {
	return Robustness{Noise: "gaussian", Scale: 0.1, as: named{"LocalLipschitzEstimate",
		"Local Lipschitz Estimate (Alvarez-Melis & Jaakkola 2018): the largest change of the map per unit change of the input over noisy copies", "local_lipschitz"}}.defaults()
}

func (r Robustness) defaults() Robustness {
	r.Samples = cmp.Or(r.Samples, 100)
	r.Draws = cmp.Or(r.Draws, 10)
	r.Noise = cmp.Or(r.Noise, "uniform")
	r.Scale = cmp.Or(r.Scale, 0.2)
	r.Target = cmp.Or(r.Target, "predicted")
	return r
}

// Info implements Protocol.
func (r Robustness) Info() Info {
	m := []Metric{
		{Name: "max_sensitivity", Better: Lower, Value: Axis{Title: "max ‖Φ(x′) − Φ(x)‖ / ‖Φ(x)‖, mean over inputs"},
			Doc: "Max-Sensitivity (Yeh et al. 2019): per input, the largest change of the map over the noisy copies relative to the map's norm; mean over inputs"},
		{Name: "avg_sensitivity", Better: Lower, Value: Axis{Title: "mean ‖Φ(x′) − Φ(x)‖ / ‖Φ(x)‖, mean over inputs"},
			Doc: "Avg-Sensitivity (Yeh et al. 2019): per input, the mean change of the map over the noisy copies relative to the map's norm; mean over inputs"},
		{Name: "local_lipschitz", Better: Lower, Value: Axis{Title: "max ‖Φ(x′) − Φ(x)‖ / ‖x′ − x‖, mean over inputs"},
			Doc: "Local Lipschitz Estimate (Alvarez-Melis & Jaakkola 2018): per input, the largest change of the map per unit change of the input over the noisy copies; mean over inputs"},
	}
	for i := range m {
		m[i].Headline = m[i].Name == cmp.Or(r.as.headline, "max_sensitivity")
	}
	return Info{Name: r.as.or("Robustness"), Category: "model", Family: FamilyRobustness, Data: []string{"image", "tabular"},
		Doc: cmp.Or(r.as.doc, "How far a method's map moves when the input moves a little"), Params: Params(r.defaults()), Metrics: m}
}

// Run implements Protocol.
func (r Robustness) Run(ctx context.Context, env *Env) (Result, error) {
	r = r.defaults()
	name := r.as.or("Robustness")
	res := Result{Protocol: name, Method: env.Method, Config: config(r)}
	if r.Noise != "uniform" && r.Noise != "gaussian" {
		return res, fmt.Errorf("%s: noise %q: want uniform or gaussian", name, r.Noise)
	}
	x, n, shape, target, orig, err := explained(ctx, env, r.Samples, r.Target)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	dim, hw := engine.Size(shape), shape[1]*shape[2]
	// The noisy copies, input by input and draw by draw, engine.Batch of
	// them at a time, cut between inputs where a call holds all of an
	// input's draws (at 28×28, every draw of 66 inputs at once); an
	// input's draws come from its own stream, whatever the cut.
	total := n * r.Draws
	rows := engine.Batch(shape, 0)
	if rows >= r.Draws {
		rows -= rows % r.Draws
	}
	rows = min(rows, total)
	noisy := make([]float32, rows*dim)
	ts := make([]int, rows)
	maxS, avgS, lip := make([]float64, n), make([]float64, n), make([]float64, n)
	var rng *rand.Rand
	for lo := 0; lo < total; lo += rows {
		hi := min(lo+rows, total)
		for k := lo; k < hi; k++ {
			i := k / r.Draws
			if k%r.Draws == 0 {
				rng = rand.New(rand.NewPCG(env.Seed, uint64(i)))
			}
			row := noisy[(k-lo)*dim : (k-lo+1)*dim]
			for j, v := range x[i*dim : (i+1)*dim] {
				e := r.Scale * rng.NormFloat64()
				if r.Noise == "uniform" {
					e = r.Scale * (2*rng.Float64() - 1)
				}
				row[j] = v + float32(e)
			}
			ts[k-lo] = target[i]
		}
		env.report(Progress{Stage: name + " maps", Done: lo / r.Draws, Total: n})
		maps, err := explainOn(ctx, env, env.Net, noisy[:(hi-lo)*dim], hi-lo, ts[:hi-lo], shape)
		if err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		for k := lo; k < hi; k++ {
			i := k / r.Draws
			phi, x0 := orig[i*hw:(i+1)*hw], x[i*dim:(i+1)*dim]
			norm := math.Sqrt(sumSq(phi, nil))
			change := math.Sqrt(sumSq(maps[(k-lo)*hw:(k-lo+1)*hw], phi))
			s := change / norm
			if norm == 0 {
				s = math.NaN() // a blank map has no relative change
			}
			maxS[i] = math.Max(maxS[i], s)
			avgS[i] += s / float64(r.Draws)
			lip[i] = math.Max(lip[i], change/math.Sqrt(sumSq(noisy[(k-lo)*dim:(k-lo+1)*dim], x0)))
		}
	}
	res.keep("max_sensitivity", maxS)
	res.keep("avg_sensitivity", avgS)
	res.keep("local_lipschitz", lip)
	res.Scalars = []Scalar{{"max_sensitivity", mean(maxS), Lower}, {"avg_sensitivity", mean(avgS), Lower}, {"local_lipschitz", mean(lip), Lower}}
	return res, nil
}

// Work implements Worker: a map of each noisy copy, counted as a forward
// pass (a method's map takes one to hundreds).
func (r Robustness) Work(_, testN int, _ []int) Work {
	r = r.defaults()
	return Work{Forward: float64(min(r.Samples, testN) * (1 + r.Draws))}
}

// sumSq is Σ (a − b)², or Σ a² for a nil b.
func sumSq(a, b []float32) float64 {
	var s float64
	for i, v := range a {
		d := float64(v)
		if b != nil {
			d -= float64(b[i])
		}
		s += d * d
	}
	return s
}
