package diffusion

import (
	"fmt"
	"math"

	"faithlab/core/data"
)

// Schedule is a forward noising process q(x_t | x_0) = N(√ᾱ_t x_0, (1−ᾱ_t) I)
// over steps t = 0 … T−1 (Ho et al. 2020, Eq. 4), with ᾱ_t = Π_{s≤t} (1−β_s).
type Schedule struct {
	Kind string `json:"kind"`  // "linear" or "cosine"
	T    int    `json:"steps"` // number of diffusion steps
	beta []float64
	abar []float64
}

// Schedule kinds.
const (
	// Linear is Ho et al.'s schedule: β rising linearly from 1e-4 at t = 0 to
	// 0.02 at t = T−1, as the peer script's torch.linspace(1e-4, 0.02, T).
	Linear = "linear"
	// Cosine is Nichol & Dhariwal's (2021, Eq. 17): ᾱ_t = f(t+1)/f(0) with
	// f(t) = cos²((t/T + 0.008)/1.008 · π/2), β clipped at 0.999.
	Cosine = "cosine"
)

// NewSchedule returns the named schedule over T steps (T ≤ 0: 1000).
func NewSchedule(kind string, T int) (*Schedule, error) {
	if T <= 0 {
		T = 1000
	}
	if T < 2 || T > 100000 {
		return nil, fmt.Errorf("schedule of %d steps: want 2 to 100 000", T)
	}
	s := &Schedule{Kind: kind, T: T, beta: make([]float64, T), abar: make([]float64, T)}
	switch kind {
	case Linear, "":
		s.Kind = Linear
		for t := range T {
			s.beta[t] = 1e-4 + (0.02-1e-4)*float64(t)/float64(T-1)
		}
	case Cosine:
		f := func(t float64) float64 {
			c := math.Cos((t/float64(T) + 0.008) / 1.008 * math.Pi / 2)
			return c * c
		}
		prev := 1.0
		for t := range T {
			a := f(float64(t+1)) / f(0)
			s.beta[t] = min(1-a/prev, 0.999)
			prev = a
		}
	default:
		return nil, fmt.Errorf("unknown noise schedule %q (linear, cosine)", kind)
	}
	prod := 1.0
	for t, b := range s.beta {
		prod *= 1 - b
		s.abar[t] = prod
	}
	return s, nil
}

// Beta is β_t.
func (s *Schedule) Beta(t int) float64 { return s.beta[t] }

// AlphaBar is ᾱ_t; AlphaBar(−1) is 1, the clean data.
func (s *Schedule) AlphaBar(t int) float64 {
	if t < 0 {
		return 1
	}
	return s.abar[t]
}

// Grid returns the timesteps of a sampler with the given number of steps,
// highest first: 0, T/steps, 2T/steps, … rounded down ("leading" spacing,
// as DDIM's uniform skip and diffusers' DDIMScheduler), so that 25 steps
// over 1000 are 960, 920, …, 40, 0, the grid GOAR's projection runs on.
func (s *Schedule) Grid(steps int) ([]int, error) {
	if steps <= 0 || steps > s.T {
		return nil, fmt.Errorf("%d sampling steps: want 1 to %d", steps, s.T)
	}
	g := make([]int, steps)
	for i := range steps {
		g[steps-1-i] = i * s.T / steps
	}
	return g, nil
}

// Scaling maps a dataset's values to the prior's space and back: the
// dataset's range [Lo, Hi] onto [−1, 1], the range a DDPM trains in. It is
// the one place where the two spaces meet: priors, samplers and their
// trajectories work in the prior's space, and every value that enters or
// leaves this package (images, masks' kept values, the classifier's input
// and gradient) is in the dataset's own range, which is what classifiers see.
type Scaling struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Identity is the scaling of data already centred near zero (standardised
// tables, the Gaussian mixture): [−1, 1] onto itself.
func Identity() Scaling { return Scaling{Lo: -1, Hi: 1} }

// ScalingFor is [0, 1] → [−1, 1] for a dataset whose values all lie in
// [0, 1] (images), else Identity().
func ScalingFor(ds *data.Dataset) Scaling {
	for _, v := range ds.X {
		if v < 0 || v > 1 {
			return Identity()
		}
	}
	return Scaling{Lo: 0, Hi: 1}
}

func (s Scaling) check() error {
	if !(s.Hi > s.Lo) || math.IsInf(s.Hi-s.Lo, 0) {
		return fmt.Errorf("data scaling [%g, %g]: want a finite range with lo < hi", s.Lo, s.Hi)
	}
	return nil
}

// ToPrior writes 2(x − Lo)/(Hi − Lo) − 1 into dst.
func (s Scaling) ToPrior(dst, x []float32) {
	a, b := 2/(s.Hi-s.Lo), -2*s.Lo/(s.Hi-s.Lo)-1
	for i, v := range x {
		dst[i] = float32(a*float64(v) + b)
	}
}

// ToData writes Lo + (x + 1)(Hi − Lo)/2 into dst.
func (s Scaling) ToData(dst, x []float32) {
	h := (s.Hi - s.Lo) / 2
	for i, v := range x {
		dst[i] = float32(s.Lo + (float64(v)+1)*h)
	}
}

// DataPerPrior is d(data value)/d(prior value): a gradient with respect to
// data values times it is the gradient with respect to prior values.
func (s Scaling) DataPerPrior() float64 { return (s.Hi - s.Lo) / 2 }
