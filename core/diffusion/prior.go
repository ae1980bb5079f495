package diffusion

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// Prior is a diffusion model seen through its noise prediction: for noisy
// samples x_t it predicts the noise ε that q(x_t | x_0) added, which is its
// score up to scale, ε(x_t, t) = −√(1−ᾱ_t)·∇log p_t(x_t) (Ho et al. 2020,
// §3.2; Song et al. 2021, Eq. 6).
type Prior interface {
	// Shape is C, H, W of one sample.
	Shape() []int
	// Schedule is the noising process the prior was made for.
	Schedule() *Schedule
	// Scaling maps the data's values into the prior's space.
	Scaling() Scaling
	// Eps writes into eps the noise predicted for the n samples in x (in
	// the prior's space, n×C×H×W) at step t, 0 ≤ t < T. It leaves x alone.
	Eps(ctx context.Context, x []float32, n, t int, eps []float32) error
}

// NetPrior is a trained ε-prediction network: the shipped unet-s, or any
// engine.Denoiser.
type NetPrior struct {
	net   engine.Denoiser
	sched *Schedule
	space Scaling
	ts    []int
}

// NewNetPrior wraps a denoiser trained for sched on data scaled by space.
func NewNetPrior(net engine.Denoiser, sched *Schedule, space Scaling) (*NetPrior, error) {
	if err := space.check(); err != nil {
		return nil, err
	}
	return &NetPrior{net: net, sched: sched, space: space}, nil
}

// Shape implements Prior.
func (p *NetPrior) Shape() []int { return p.net.InputShape() }

// Schedule implements Prior.
func (p *NetPrior) Schedule() *Schedule { return p.sched }

// Scaling implements Prior.
func (p *NetPrior) Scaling() Scaling { return p.space }

// Net is the denoiser.
func (p *NetPrior) Net() engine.Denoiser { return p.net }

// Eps implements Prior: one forward pass of the whole batch (the network
// spreads it over cores).
func (p *NetPrior) Eps(ctx context.Context, x []float32, n, t int, eps []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.ts = slices.Grow(p.ts[:0], n)[:n]
	for i := range p.ts {
		p.ts[i] = t
	}
	out, err := p.net.Forward(x, p.ts, n)
	if err != nil {
		return err
	}
	copy(eps, out)
	return nil
}

// Mixture is a Gaussian mixture with diagonal covariances: component k has
// weight Weights[k], mean Means[k] and per-coordinate variances Vars[k].
type Mixture struct {
	Weights []float64   `json:"weights"`
	Means   [][]float64 `json:"means"`
	Vars    [][]float64 `json:"vars"`
}

// MixtureOf is the distribution data.GaussianMixture draws from: two
// equally likely classes (minus, plus) with means −1 and +1 on every
// coordinate and isotropic variance.
func MixtureOf(g data.GaussianMixture) Mixture {
	v := g.Variance
	if v == 0 {
		v = 0.3
	}
	m := Mixture{Weights: []float64{0.5, 0.5}}
	for _, mu := range []float64{-1, 1} {
		mean, vars := make([]float64, g.Dim), make([]float64, g.Dim)
		for j := range mean {
			mean[j], vars[j] = mu, v
		}
		m.Means, m.Vars = append(m.Means, mean), append(m.Vars, vars)
	}
	return m
}

func (m Mixture) check() (int, error) {
	if len(m.Weights) == 0 || len(m.Means) != len(m.Weights) || len(m.Vars) != len(m.Weights) {
		return 0, fmt.Errorf("mixture: %d weights, %d means, %d variance vectors: want equal, at least one", len(m.Weights), len(m.Means), len(m.Vars))
	}
	dim := len(m.Means[0])
	var total float64
	for k, w := range m.Weights {
		if !(w > 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("mixture: component %d has weight %g: want positive", k, w)
		}
		total += w
		if len(m.Means[k]) != dim || len(m.Vars[k]) != dim || dim == 0 {
			return 0, fmt.Errorf("mixture: component %d has %d means and %d variances, component 0 %d means", k, len(m.Means[k]), len(m.Vars[k]), dim)
		}
		for j, v := range m.Vars[k] {
			if !(v > 0) || math.IsInf(v, 0) || math.IsNaN(m.Means[k][j]) || math.IsInf(m.Means[k][j], 0) {
				return 0, fmt.Errorf("mixture: component %d coordinate %d has mean %g, variance %g", k, j, m.Means[k][j], v)
			}
		}
	}
	if math.Abs(total-1) > 1e-9 {
		return 0, fmt.Errorf("mixture: weights sum to %g, want 1", total)
	}
	return dim, nil
}

// MixturePrior is the exact score of a Gaussian mixture noised by a
// schedule, in closed form: q_t(x) = Σ_k w_k N(x; √ᾱ_t μ_k, ᾱ_t Σ_k +
// (1−ᾱ_t) I), whose score is Σ_k r_k(x)·(−(x − √ᾱ_t μ_k)/(ᾱ_t σ²_k + 1−ᾱ_t))
// with r_k the components' posterior probabilities. It is the oracle the
// samplers are tested against, and the prior of the synthetic experiments.
type MixturePrior struct {
	mix   Mixture
	sched *Schedule
	space Scaling
	dim   int
}

// NewMixturePrior returns the mixture's exact prior; the mixture lives in
// the prior's space, which space maps the data into.
func NewMixturePrior(m Mixture, sched *Schedule, space Scaling) (*MixturePrior, error) {
	dim, err := m.check()
	if err != nil {
		return nil, err
	}
	if err := space.check(); err != nil {
		return nil, err
	}
	return &MixturePrior{mix: m, sched: sched, space: space, dim: dim}, nil
}

// Shape implements Prior: (D, 1, 1).
func (p *MixturePrior) Shape() []int { return []int{p.dim, 1, 1} }

// Schedule implements Prior.
func (p *MixturePrior) Schedule() *Schedule { return p.sched }

// Scaling implements Prior.
func (p *MixturePrior) Scaling() Scaling { return p.space }

// components writes each component's log weight plus log density at x
// under q_t into lw and returns their log-sum-exp, log q_t(x).
func (p *MixturePrior) components(x []float32, t int, lw []float64) float64 {
	ab := p.sched.AlphaBar(t)
	a := math.Sqrt(ab)
	top := math.Inf(-1)
	for k, w := range p.mix.Weights {
		s := math.Log(w)
		mu, vs := p.mix.Means[k], p.mix.Vars[k]
		for j, xv := range x[:p.dim] {
			v := ab*vs[j] + 1 - ab
			d := float64(xv) - a*mu[j]
			s -= 0.5 * (math.Log(2*math.Pi*v) + d*d/v)
		}
		lw[k] = s
		top = max(top, s)
	}
	var sum float64
	for _, s := range lw {
		sum += math.Exp(s - top)
	}
	return top + math.Log(sum)
}

// LogDensity is log q_t(x) for one sample x (prior space).
func (p *MixturePrior) LogDensity(x []float32, t int) float64 {
	return p.components(x, t, make([]float64, len(p.mix.Weights)))
}

// Eps implements Prior.
func (p *MixturePrior) Eps(ctx context.Context, x []float32, n, t int, eps []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ab := p.sched.AlphaBar(t)
	a, sd := math.Sqrt(ab), math.Sqrt(1-ab)
	rows(n, func(lo, hi int) {
		lw := make([]float64, len(p.mix.Weights))
		for i := lo; i < hi; i++ {
			xs, es := x[i*p.dim:(i+1)*p.dim], eps[i*p.dim:(i+1)*p.dim]
			logq := p.components(xs, t, lw)
			clear(es)
			for k := range lw {
				r := math.Exp(lw[k] - logq)
				mu, vs := p.mix.Means[k], p.mix.Vars[k]
				for j, xv := range xs {
					// ε = −√(1−ᾱ)·score, the score's k-th term −r(x − aμ)/v.
					es[j] += float32(sd * r * (float64(xv) - a*mu[j]) / (ab*vs[j] + 1 - ab))
				}
			}
		}
	})
	return nil
}

// Empirical is the training-free denoiser of a finite data set: the exact
// score of the set's empirical distribution noised by the schedule, p_t =
// (1/N) Σ_i N(√ᾱ_t x_i, (1−ᾱ_t) I). Its posterior mean E[x_0 | x_t] is the
// softmax-weighted average of the points with weights ∝ exp(−‖x_t −
// √ᾱ_t x_i‖²/2(1−ᾱ_t)), and ε = (x_t − √ᾱ_t E[x_0 | x_t])/√(1−ᾱ_t). Every
// step costs two GEMMs against the whole set, so it suits tables and small
// image sets; near t = 0 it returns the nearest training point (it
// memorises, as an exact score of finitely many points must).
type Empirical struct {
	x0    []float32 // N×dim, prior space
	sq    []float32 // ‖x_i‖²
	n     int
	shape []int
	sched *Schedule
	space Scaling
	kern  gemm.Kernel
}

// NewEmpirical takes the training points of ds (copied, scaled into the
// prior's space by space); kern runs the GEMMs (nil: the pure-Go kernel).
func NewEmpirical(ds *data.Dataset, sched *Schedule, space Scaling, kern gemm.Kernel) (*Empirical, error) {
	if err := space.check(); err != nil {
		return nil, err
	}
	if ds.Len() == 0 {
		return nil, fmt.Errorf("empirical prior of %s: no samples", ds.Name)
	}
	if kern == nil {
		kern = gemm.Gonum{}
	}
	e := &Empirical{x0: make([]float32, len(ds.X)), sq: make([]float32, ds.Len()), n: ds.Len(),
		shape: slices.Clone(ds.Shape), sched: sched, space: space, kern: kern}
	space.ToPrior(e.x0, ds.X)
	dim := ds.Dim()
	for i := range e.sq {
		var s float64
		for _, v := range e.x0[i*dim : (i+1)*dim] {
			s += float64(v) * float64(v)
		}
		e.sq[i] = float32(s)
	}
	return e, nil
}

// Shape implements Prior.
func (e *Empirical) Shape() []int { return slices.Clone(e.shape) }

// Schedule implements Prior.
func (e *Empirical) Schedule() *Schedule { return e.sched }

// Scaling implements Prior.
func (e *Empirical) Scaling() Scaling { return e.space }

// empiricalChunk bounds the weights one pass holds (rows × training points).
const empiricalChunk = 1 << 22

// Eps implements Prior.
func (e *Empirical) Eps(ctx context.Context, x []float32, n, t int, eps []float32) error {
	dim := engine.Size(e.shape)
	ab := e.sched.AlphaBar(t)
	a, v := math.Sqrt(ab), 1-ab
	rowsPer := max(1, empiricalChunk/e.n)
	w := make([]float32, min(n, rowsPer)*e.n)
	x0 := make([]float32, min(n, rowsPer)*dim)
	for lo := 0; lo < n; lo += rowsPer {
		if err := ctx.Err(); err != nil {
			return err
		}
		m := min(rowsPer, n-lo)
		xs := x[lo*dim : (lo+m)*dim]
		// −‖x − a x_i‖²/2v up to a per-row constant: (2a x·x_i − a²‖x_i‖²)/2v.
		e.kern.Sgemm(false, true, m, e.n, dim, 1, xs, dim, e.x0, dim, 0, w, e.n)
		rows(m, func(rlo, rhi int) {
			ls := make([]float64, e.n)
			for r := rlo; r < rhi; r++ {
				row := w[r*e.n : (r+1)*e.n]
				top := math.Inf(-1)
				for i, g := range row {
					ls[i] = (2*a*float64(g) - ab*float64(e.sq[i])) / (2 * v)
					top = max(top, ls[i])
				}
				var sum float64
				for i, s := range ls {
					ls[i] = math.Exp(s - top)
					sum += ls[i]
				}
				for i, p := range ls {
					row[i] = float32(p / sum)
				}
			}
		})
		e.kern.Sgemm(false, false, m, dim, e.n, 1, w, e.n, e.x0, dim, 0, x0, dim)
		sd := math.Sqrt(v)
		for i, xv := range xs {
			eps[lo*dim+i] = float32((float64(xv) - a*float64(x0[i])) / sd)
		}
	}
	return nil
}

// rows splits [0, n) over the cores and runs fn on each part.
func rows(n int, fn func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i*n/w, (i+1)*n/w)
		}()
	}
	wg.Wait()
}
