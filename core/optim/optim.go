// Package optim holds the optimisers that update a network's parameters from
// their accumulated gradients: Adam (Kingma & Ba 2015) and SGD with momentum
// and weight decay, each with an optional cosine learning-rate schedule.
//
// An optimiser keeps its state (moments, velocities) per parameter, in the
// order of the slice passed to its first Step; pass the same parameters in
// the same order every time.
package optim

import (
	"fmt"
	"math"

	"faithlab/core/engine"
)

// Optimizer updates parameters in place from their gradients.
type Optimizer interface {
	// Step applies one update with learning rate lr.
	Step(params []engine.Param, lr float64)
}

// Adam is Adam with PyTorch's defaults (β1 0.9, β2 0.999, ε 1e-8) and
// coupled L2 weight decay, as torch.optim.Adam.
type Adam struct {
	Beta1, Beta2, Eps, WeightDecay float64
	t                              int
	m, v                           [][]float32
}

// NewAdam returns Adam with PyTorch's defaults.
func NewAdam(weightDecay float64) *Adam {
	return &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay}
}

// Step implements Optimizer.
func (a *Adam) Step(params []engine.Param, lr float64) {
	if a.m == nil {
		for _, p := range params {
			a.m = append(a.m, make([]float32, len(p.Data)))
			a.v = append(a.v, make([]float32, len(p.Data)))
		}
	}
	a.t++
	bc1 := 1 - math.Pow(a.Beta1, float64(a.t))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.t))
	step := float32(lr / bc1)
	b1, b2, wd := float32(a.Beta1), float32(a.Beta2), float32(a.WeightDecay)
	sq := float32(math.Sqrt(bc2))
	eps := float32(a.Eps)
	for k, p := range params {
		m, v := a.m[k], a.v[k]
		for i, g := range p.Grad {
			if wd != 0 {
				g += wd * p.Data[i]
			}
			m[i] = b1*m[i] + (1-b1)*g
			v[i] = b2*v[i] + (1-b2)*g*g
			p.Data[i] -= step * m[i] / (float32(math.Sqrt(float64(v[i])))/sq + eps)
		}
	}
}

// State returns the number of steps taken and the moment estimates, one
// slice per parameter (nil before the first step): the optimiser's whole
// state, shared, not copied, for checkpoints.
func (a *Adam) State() (steps int, m, v [][]float32) { return a.t, a.m, a.v }

// SetState restores what State returned, so that training resumes as if it
// had not stopped.
func (a *Adam) SetState(steps int, m, v [][]float32) { a.t, a.m, a.v = steps, m, v }

// SGD is stochastic gradient descent with momentum and L2 weight decay, as
// torch.optim.SGD (dampening 0, no Nesterov).
type SGD struct {
	Momentum, WeightDecay float64
	buf                   [][]float32
}

// Step implements Optimizer.
func (s *SGD) Step(params []engine.Param, lr float64) {
	if s.buf == nil {
		for _, p := range params {
			s.buf = append(s.buf, make([]float32, len(p.Data)))
		}
	}
	mu, wd, r := float32(s.Momentum), float32(s.WeightDecay), float32(lr)
	for k, p := range params {
		b := s.buf[k]
		for i, g := range p.Grad {
			g += wd * p.Data[i]
			if mu != 0 {
				b[i] = mu*b[i] + g
				g = b[i]
			}
			p.Data[i] -= r * g
		}
	}
}

// Schedule gives the learning rate for an epoch.
type Schedule func(epoch int) float64

// Constant keeps the base rate.
func Constant(lr float64) Schedule { return func(int) float64 { return lr } }

// Cosine anneals from lr at epoch 0 to 0 at epoch total (Loshchilov & Hutter
// 2017, without restarts), as torch's CosineAnnealingLR with eta_min 0.
func Cosine(lr float64, total int) Schedule {
	return func(e int) float64 {
		if total <= 0 {
			return lr
		}
		return lr * 0.5 * (1 + math.Cos(math.Pi*float64(min(e, total))/float64(total)))
	}
}

// New returns the named optimiser ("adam" or "sgd").
func New(name string, momentum, weightDecay float64) (Optimizer, error) {
	switch name {
	case "adam":
		return NewAdam(weightDecay), nil
	case "sgd":
		return &SGD{Momentum: momentum, WeightDecay: weightDecay}, nil
	}
	return nil, fmt.Errorf("unknown optimiser %q (adam, sgd)", name)
}
