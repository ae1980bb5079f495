// Package trace finds TRACE explanations (Trajectory importance; the TRACE
// paper, §2–4): the order in which to delete t square patches of an image
// that optimises the deletion metric itself, found by a greedy scheme
// (Algorithm 2) or simulated annealing over the complete transposition
// neighbourhood (Algorithm 1, Appendix B.4), or exactly by dynamic
// programming over patch subsets for t ≤ 16, with the complete-search bound.
//
// Conventions, as the paper's: a trajectory τ lists the t patches from least
// to most important. keep(S) is the input with only the patches in S kept
// and the others replaced by the reference. The curves are
//
//	MoRF(τ) = Σ_{k=0..t} f(keep(τ[:k]))   (most relevant deleted first; lower is better)
//	LeRF(τ) = Σ_{k=0..t} f(keep(τ[k:]))   (least relevant deleted first; higher is better)
//
// and every objective is maximised: Mo = −MoRF, Le = LeRF, LeMo = LeRF − MoRF.
// f is a black box on patch subsets (a Scorer), so the search is independent
// of the network; NetScorer makes one from an engine.Network.
package trace

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"faithlab/core/perturb"
)

// Scorer evaluates f on a batch of keep-sets: keep[i][p] says whether patch p
// is kept in input i. It must return len(keep) values.
type Scorer func(ctx context.Context, keep [][]bool) ([]float64, error)

// Objective names what a trajectory optimises.
type Objective string

// Objectives.
const (
	Le   Objective = "le"
	Mo   Objective = "mo"
	LeMo Objective = "lemo"
)

// Curves holds a trajectory's MoRF and LeRF curves, t+1 points each.
type Curves struct {
	MoRF, LeRF []float64
}

// Value is the objective (to maximise) of the curves.
func (c Curves) Value(o Objective) float64 {
	var mo, le float64
	for k := range c.MoRF {
		mo += c.MoRF[k]
		le += c.LeRF[k]
	}
	switch o {
	case Mo:
		return -mo
	case Le:
		return le
	}
	return le - mo
}

// Evaluate computes both curves of τ in one batch of 2t scorer inputs (the
// full and the empty set are shared by the two curves).
func Evaluate(ctx context.Context, f Scorer, tau []int) (Curves, error) {
	t := len(tau)
	keep := make([][]bool, 0, 2*t)
	// MoRF prefixes τ[:k] for k = 0..t, then LeRF suffixes τ[k:] for k = 1..t−1.
	for k := 0; k <= t; k++ {
		keep = append(keep, set(t, tau[:k]))
	}
	for k := 1; k < t; k++ {
		keep = append(keep, set(t, tau[k:]))
	}
	v, err := f(ctx, keep)
	if err != nil {
		return Curves{}, err
	}
	if len(v) != len(keep) {
		return Curves{}, fmt.Errorf("scorer returned %d values for %d inputs", len(v), len(keep))
	}
	c := Curves{MoRF: v[:t+1], LeRF: make([]float64, t+1)}
	c.LeRF[0], c.LeRF[t] = v[t], v[0]
	copy(c.LeRF[1:t], v[t+1:])
	return c, nil
}

func set(t int, members []int) []bool {
	s := make([]bool, t)
	for _, p := range members {
		s[p] = true
	}
	return s
}

// Result is one image's explanation.
type Result struct {
	Trajectory []int   `json:"trajectory"` // patches, least to most important
	Value      float64 `json:"objective"`
	Curves     Curves  `json:"-"`
	Bound      float64 `json:"cs_bound,omitempty"` // exact search: the complete-search bound of the objective (§4)
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
}

// Greedy is Algorithm 2. For Mo it deletes, step by step, the patch whose
// deletion lowers f most and returns the reversed deletion order; for Le it
// deletes the patch whose deletion keeps f highest. Each step scores all
// remaining candidates in one batch. LeMo has no greedy scheme (the paper,
// §4); it is an error.
func Greedy(ctx context.Context, f Scorer, t int, o Objective) (Result, error) {
	if o != Le && o != Mo {
		return Result{}, fmt.Errorf("greedy TRACE optimises le or mo, not %q", o)
	}
	start := time.Now()
	kept := make([]bool, t)
	for i := range kept {
		kept[i] = true
	}
	var order []int // deletion order
	for step := 0; step < t; step++ {
		var cand []int
		var keep [][]bool
		for p := 0; p < t; p++ {
			if kept[p] {
				k := append([]bool(nil), kept...)
				k[p] = false
				cand, keep = append(cand, p), append(keep, k)
			}
		}
		v, err := f(ctx, keep)
		if err != nil {
			return Result{}, err
		}
		best := 0
		for i := range v {
			if (o == Mo && v[i] < v[best]) || (o == Le && v[i] > v[best]) {
				best = i
			}
		}
		kept[cand[best]] = false
		order = append(order, cand[best])
	}
	tau := order // Le: the first deleted is the least important
	if o == Mo {
		tau = reversed(order) // Mo: the first deleted is the most important
	}
	c, err := Evaluate(ctx, f, tau)
	if err != nil {
		return Result{}, err
	}
	return Result{Trajectory: tau, Value: c.Value(o), Curves: c, Iterations: t, Seconds: time.Since(start).Seconds()}, nil
}

func reversed(s []int) []int {
	r := make([]int, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}

// Annealing configures TRACE-SA. The paper's defaults: K = 5000, T0 = 2 for
// logits and 0.1 for probabilities, η = 0.999.
type Annealing struct {
	Iterations int
	T0         float64
	Cooling    float64
	Seed       uint64
	Init       []int // starting trajectory (e.g. Greedy's); random when nil
}

// Anneal is Algorithm 1: from τ0, propose a random transposition of two
// positions, accept it when it improves the objective or with probability
// exp(δ/T), cool T by η. A swap of positions i < j changes only the prefix
// and suffix sets with i < k ≤ j, so only those are re-scored. The best
// trajectory seen is returned.
func Anneal(ctx context.Context, f Scorer, t int, o Objective, a Annealing) (Result, error) {
	if t < 2 {
		return Result{}, fmt.Errorf("annealing needs at least 2 patches, got %d", t)
	}
	if a.Iterations <= 0 || !(a.T0 > 0) || !(a.Cooling > 0 && a.Cooling <= 1) {
		return Result{}, fmt.Errorf("annealing: %d iterations, T0 %g, cooling %g: want positive iterations and T0, cooling in (0, 1]", a.Iterations, a.T0, a.Cooling)
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(a.Seed, 0x7ace))
	tau := a.Init
	if tau == nil {
		tau = rng.Perm(t)
	} else if err := checkPerm(tau, t); err != nil {
		return Result{}, err
	}
	tau = append([]int(nil), tau...)
	cur, err := Evaluate(ctx, f, tau)
	if err != nil {
		return Result{}, err
	}
	best := Result{Trajectory: append([]int(nil), tau...), Value: cur.Value(o), Curves: cloneCurves(cur)}
	T := a.T0
	for it := 0; it < a.Iterations; it++ {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		i, j := rng.IntN(t), rng.IntN(t-1)
		if j >= i {
			j++
		}
		if i > j {
			i, j = j, i
		}
		tau[i], tau[j] = tau[j], tau[i]
		next := cloneCurves(cur)
		var keep [][]bool
		for k := i + 1; k <= j; k++ {
			if o != Le {
				keep = append(keep, set(t, tau[:k]))
			}
			if o != Mo {
				keep = append(keep, set(t, tau[k:]))
			}
		}
		v, err := f(ctx, keep)
		if err != nil {
			return Result{}, err
		}
		for k, n := i+1, 0; k <= j; k++ {
			if o != Le {
				next.MoRF[k], n = v[n], n+1
			}
			if o != Mo {
				next.LeRF[k], n = v[n], n+1
			}
		}
		delta := next.Value(o) - cur.Value(o)
		if delta > 0 || rng.Float64() < math.Exp(delta/T) {
			cur = next
			if cur.Value(o) > best.Value {
				best = Result{Trajectory: append([]int(nil), tau...), Value: cur.Value(o), Curves: cloneCurves(cur)}
			}
		} else {
			tau[i], tau[j] = tau[j], tau[i]
		}
		T *= a.Cooling
	}
	best.Iterations, best.Seconds = a.Iterations, time.Since(start).Seconds()
	// The curves of an unscored objective half are stale; score them afresh.
	c, err := Evaluate(ctx, f, best.Trajectory)
	if err != nil {
		return Result{}, err
	}
	best.Curves = c
	return best, nil
}

func cloneCurves(c Curves) Curves {
	return Curves{MoRF: append([]float64(nil), c.MoRF...), LeRF: append([]float64(nil), c.LeRF...)}
}

func checkPerm(tau []int, t int) error {
	if len(tau) != t {
		return fmt.Errorf("trajectory of %d patches, want %d", len(tau), t)
	}
	seen := make([]bool, t)
	for _, p := range tau {
		if p < 0 || p >= t || seen[p] {
			return fmt.Errorf("trajectory %v is not a permutation of 0..%d", tau, t-1)
		}
		seen[p] = true
	}
	return nil
}

// Exact is TRACE-GO, the global optimum that the paper (§4) calls
// inaccessible, found without enumerating the t! trajectories (t ≤ 16): a
// trajectory is a chain ∅ = S_0 ⊂ S_1 ⊂ … ⊂ S_t of its prefixes, and every
// objective is a sum over the chain of a value of S_k alone (Le: f of its
// complement; Mo: −f(S_k); LeMo: both), so the best chain ending in S is
// g(S) + the best over S less one patch — dynamic programming over the 2^t
// subsets, each scored once. Ties go to the lowest patch. The result's
// Bound is the complete-search bound (CS) from the same subset values.
func Exact(ctx context.Context, f Scorer, t int, o Objective) (Result, error) {
	if t < 1 || t > 16 {
		return Result{}, fmt.Errorf("exact TRACE scores all 2^t patch subsets: t = %d, want 1..16", t)
	}
	start := time.Now()
	val, err := allSubsets(ctx, f, t)
	if err != nil {
		return Result{}, err
	}
	all := 1<<t - 1
	g := func(s int) float64 {
		switch o {
		case Le:
			return val[all^s]
		case Mo:
			return -val[s]
		}
		return val[all^s] - val[s]
	}
	best := make([]float64, 1<<t)
	last := make([]int8, 1<<t) // the patch the best chain added last
	for s := range best {
		best[s], last[s] = math.Inf(-1), -1
		if s == 0 {
			best[s] = g(0)
			continue
		}
		for p := 0; p < t; p++ {
			if s&(1<<p) != 0 && best[s^(1<<p)] > best[s] {
				best[s], last[s] = best[s^(1<<p)], int8(p)
			}
		}
		best[s] += g(s)
	}
	tau := make([]int, t)
	for s, k := all, t-1; k >= 0; k-- {
		tau[k] = int(last[s])
		s ^= 1 << tau[k]
	}
	c := curvesFromSubsets(val, tau)
	return Result{Trajectory: tau, Value: c.Value(o), Curves: c, Bound: completeSearch(val, t, o), Seconds: time.Since(start).Seconds()}, nil
}

// allSubsets scores all 2^t keep-sets, indexed by bit mask.
func allSubsets(ctx context.Context, f Scorer, t int) ([]float64, error) {
	keep := make([][]bool, 1<<t)
	for m := range keep {
		keep[m] = make([]bool, t)
		for p := 0; p < t; p++ {
			keep[m][p] = m&(1<<p) != 0
		}
	}
	return f(ctx, keep)
}

func curvesFromSubsets(val []float64, tau []int) Curves {
	t := len(tau)
	c := Curves{MoRF: make([]float64, t+1), LeRF: make([]float64, t+1)}
	pre, all := 0, 1<<t-1
	for k := 0; k <= t; k++ {
		c.MoRF[k] = val[pre]
		c.LeRF[k] = val[all^pre] // τ[k:] is the complement of τ[:k]
		if k < t {
			pre |= 1 << tau[k]
		}
	}
	return c
}

// CompleteSearch is the CS bound (§4): for each k the best keep-set of each
// size, chosen independently, which no single trajectory can beat. It
// returns an upper bound of the objective (t ≤ 16).
func CompleteSearch(ctx context.Context, f Scorer, t int, o Objective) (float64, error) {
	if t < 1 || t > 16 {
		return 0, fmt.Errorf("complete search scores 2^t subsets: t = %d, want 1..16", t)
	}
	val, err := allSubsets(ctx, f, t)
	if err != nil {
		return 0, err
	}
	return completeSearch(val, t, o), nil
}

// completeSearch is CS from the values of all 2^t keep-sets.
func completeSearch(val []float64, t int, o Objective) float64 {
	lo := make([]float64, t+1) // min f over keep-sets of each size (MoRF's best)
	hi := make([]float64, t+1) // max f over keep-sets of each size (LeRF's best)
	for k := range lo {
		lo[k], hi[k] = math.Inf(1), math.Inf(-1)
	}
	for m, v := range val {
		k := popcount(m)
		lo[k], hi[k] = math.Min(lo[k], v), math.Max(hi[k], v)
	}
	var mo, le float64
	for k := 0; k <= t; k++ {
		mo += lo[k]
		le += hi[k]
	}
	switch o {
	case Mo:
		return -mo
	case Le:
		return le
	}
	return le - mo
}

func popcount(m int) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// Heatmap converts a trajectory to attributions on the patch grid,
// ψ = (rank/t)^α with rank 1 for the least important patch (§2).
func Heatmap(tau []int, alpha float64) []float32 {
	t := len(tau)
	psi := make([]float32, t)
	for rank, p := range tau {
		psi[p] = float32(math.Pow(float64(rank+1)/float64(t), alpha))
	}
	return psi
}

// PatchScores sums an H×W map over the patches of a grid, the features
// that NetScorer deletes.
func PatchScores(m []float32, f perturb.Features) []float32 {
	s := make([]float32, f.N())
	for p, v := range m[:f.H*f.W] {
		s[f.Of(p)] += v
	}
	return s
}

// TrajectoryOf is σ(ψ): patches from least to most important, ties broken
// by index, the lower index first (Appendix B.1).
func TrajectoryOf(scores []float32) []int { return perturb.Order(scores, false) }
