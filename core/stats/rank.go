package stats

import (
	"cmp"
	"math"
	"slices"
)

// ranks returns the ascending ranks of x, 1…n, ties given the mean of the
// ranks they span (mid-ranks), and the tie sum Σ(t³−t) over groups of t
// tied values, which the tie corrections use. x holds no NaN.
func ranks(x []float64) (r []float64, ties float64) {
	order := make([]int, len(x))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(x[i], x[j]) })
	r = make([]float64, len(x))
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && x[order[hi]] == x[order[lo]] {
			hi++
		}
		mid := float64(lo+1+hi) / 2 // mean of ranks lo+1 … hi
		for _, i := range order[lo:hi] {
			r[i] = mid
		}
		if t := float64(hi - lo); t > 1 {
			ties += t*t*t - t
		}
		lo = hi
	}
	return r, ties
}

// pairs returns the pairs (x[i], y[i]) where neither is NaN.
func pairs(x, y []float64) (px, py []float64) {
	for i := range min(len(x), len(y)) {
		if !math.IsNaN(x[i]) && !math.IsNaN(y[i]) {
			px, py = append(px, x[i]), append(py, y[i])
		}
	}
	return px, py
}

// KendallTau is Kendall's τ-b of two score vectors (ties corrected), NaN
// when either is constant. Pairs where either score is NaN are dropped.
// It compares every two items (O(n²)): meant for rankings of methods or
// protocols, not of thousands of items.
func KendallTau(x, y []float64) float64 {
	x, y = pairs(x, y)
	var s, tiedX, tiedY, all float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			dx, dy := cmp.Compare(x[i], x[j]), cmp.Compare(y[i], y[j])
			s += float64(dx * dy)
			all++
			if dx == 0 {
				tiedX++
			}
			if dy == 0 {
				tiedY++
			}
		}
	}
	den := math.Sqrt((all - tiedX) * (all - tiedY))
	if den == 0 {
		return math.NaN()
	}
	return s / den
}

// Spearman is Spearman's rank correlation (mid-ranks for ties: the Pearson
// correlation of the ranks), NaN when either is constant. Pairs where
// either score is NaN are dropped.
func Spearman(x, y []float64) float64 {
	x, y = pairs(x, y)
	rx, _ := ranks(x)
	ry, _ := ranks(y)
	mean := float64(len(x)+1) / 2 // of ranks 1…n, ties or not
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mean, ry[i]-mean
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// KendallW is Kendall's coefficient of concordance of m raters (rows)
// ranking n items (columns) by raw scores, ranked ascending with mid-ranks
// for ties (the caller orients them), with tie correction:
//
//	W = 12·S / (m²(n³−n) − m·Σᵢ Tᵢ),  S = Σⱼ (Rⱼ − m(n+1)/2)²,
//
// Rⱼ the sum of item j's ranks and Tᵢ = Σ(t³−t) over rater i's ties. p is
// the permutation p-value of W: the chance that raters ranking at random
// (each rater's ranking permuted independently) concord at least as much.
// It is exact — enumerated over the (n!)^(m−1) rankings of the other
// raters against the first — where those number at most 2²⁰ (up to 8
// items for 2 raters, 6 for 3, 4 for 4…), else drawn by Monte Carlo,
// seeded, and settled against the thresholds it will be read against
// (PValue.Settled).
//
// W of identical rankings is 1; of two reversed rankings 0. Items with a
// NaN score (or missing from a shorter row) are dropped. m < 2 or n < 2,
// or every rater giving all items one score: NaN and p = 1.
func KendallW(scores [][]float64, seed uint64, thresholds []float64) (w float64, p PValue) {
	one := PValue{P: 1, Exact: true, Settled: true, Test: TestPermutation}
	m := len(scores)
	n := 0
	for _, row := range scores {
		n = max(n, len(row))
	}
	var items []int
item:
	for j := range n {
		for _, row := range scores {
			if math.IsNaN(at(row, j)) {
				continue item
			}
		}
		items = append(items, j)
	}
	n = len(items)
	if m < 2 || n < 2 {
		return math.NaN(), one
	}
	// Doubled ranks are integers, so every sum below is exact and a
	// permuted S compares with the observed one without rounding.
	rk := make([][]float64, m)
	var ties float64
	x := make([]float64, n)
	for i, row := range scores {
		for k, j := range items {
			x[k] = row[j]
		}
		r, t := ranks(x)
		for k := range r {
			r[k] *= 2
		}
		rk[i], ties = r, ties+t
	}
	mf, nf := float64(m), float64(n)
	den := mf*mf*(nf*nf*nf-nf) - mf*ties
	if den == 0 {
		return math.NaN(), one
	}
	sums := make([]float64, n)
	sq := func() float64 { // Σⱼ (2Rⱼ)²; S = (that − n·(m(n+1))²)/4
		var q float64
		for _, v := range sums {
			q += v * v
		}
		return q
	}
	for _, r := range rk {
		for j, v := range r {
			sums[j] += v
		}
	}
	obs := sq()
	center := mf * (nf + 1)
	w = 12 * (obs - nf*center*center) / 4 / den
	if hits, total, ok := kendallWExact(rk, sums, sq, obs); ok {
		return w, PValue{P: hits / total, Exact: true, Settled: true, Test: TestPermutation}
	}
	rng := newRNG(seed)
	hits, draws := 0, 0
	p = settle(thresholds, settleWork/(m*n), func(k int, fresh bool) float64 {
		if fresh {
			hits, draws = 0, 0
		}
		for range k {
			clear(sums)
			for _, r := range rk {
				shuffle(rng, r)
				for j, v := range r {
					sums[j] += v
				}
			}
			if sq() >= obs {
				hits++
			}
		}
		draws += k
		return hitsP(hits, draws)
	})
	p.Test = TestPermutation
	return w, p
}

// kendallWExact counts the rankings of raters 1… (each permuted every
// way, rater 0's held: W is the same under a relabelling of the items)
// whose Σ(2Rⱼ)² is at least obs; false where they number over
// exactLimit. sums holds the rank sums of the data on entry and on
// return.
func kendallWExact(rk [][]float64, sums []float64, sq func() float64, obs float64) (hits, total float64, ok bool) {
	n := len(sums)
	total = 1
	for range rk[1:] {
		for k := 2; k <= n; k++ {
			total *= float64(k)
		}
		if total > exactLimit {
			return 0, 0, false
		}
	}
	var perms [][]int // every permutation of 0…n−1 (Heap's algorithm)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	var heap func(k int)
	heap = func(k int) {
		if k == 1 {
			perms = append(perms, slices.Clone(idx))
			return
		}
		for i := range k - 1 {
			heap(k - 1)
			if k%2 == 0 {
				idx[i], idx[k-1] = idx[k-1], idx[i]
			} else {
				idx[0], idx[k-1] = idx[k-1], idx[0]
			}
		}
		heap(k - 1)
	}
	heap(n)
	// Rater 0's ranks alone, then each further rater's in every order.
	clear(sums)
	copy(sums, rk[0])
	var walk func(i int)
	walk = func(i int) {
		if i == len(rk) {
			if sq() >= obs {
				hits++
			}
			return
		}
		for _, pm := range perms {
			for j, q := range pm {
				sums[j] += rk[i][q]
			}
			walk(i + 1)
			for j, q := range pm {
				sums[j] -= rk[i][q]
			}
		}
	}
	walk(1)
	clear(sums)
	for _, r := range rk {
		for j, v := range r {
			sums[j] += v
		}
	}
	return hits, total, true
}

// SplitHalf is the split-half reliability of a ranking of k methods
// measured on the same units: values[m][i] is method m on unit i (NaN
// ignored). It splits the units at random into two halves splits times
// (seeded), ranks the methods by their mean on each half, takes Spearman's
// ρ between the halves, averages ρ over the splits and applies the
// Spearman–Brown correction 2ρ/(1+ρ) (Tomsett et al., "Sanity checks for
// saliency metrics", AAAI 2020).
//
// A split whose ρ is undefined (a half in which all methods tie) does not
// count; NaN when no split counts — so methods with identical values give
// NaN: they make no ranking, which is neither reliable nor unreliable —
// and when fewer than 2 methods or 2 units, or splits < 1. A mean ρ ≤ 0
// (no reliability) is returned uncorrected: the correction would take it
// below ρ, and below −1 once ρ < −1/3, where it means nothing.
func SplitHalf(values [][]float64, splits int, seed uint64) float64 {
	k := len(values)
	n := 0
	for _, v := range values {
		n = max(n, len(v))
	}
	if k < 2 || n < 2 || splits < 1 {
		return math.NaN()
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	first, second := make([]float64, k), make([]float64, k)
	rng := newRNG(seed)
	var total float64
	counted := 0
	for range splits {
		shuffle(rng, perm)
		for m, v := range values {
			first[m], second[m] = meanAt(v, perm[:n/2]), meanAt(v, perm[n/2:])
		}
		if rho := Spearman(first, second); !math.IsNaN(rho) {
			total += rho
			counted++
		}
	}
	if counted == 0 {
		return math.NaN()
	}
	rho := total / float64(counted)
	if rho <= 0 {
		return rho
	}
	return 2 * rho / (1 + rho)
}

// meanAt is the mean of v at the indices idx that hold a value (NaN when
// none does).
func meanAt(v []float64, idx []int) float64 {
	var sum float64
	n := 0
	for _, i := range idx {
		if x := at(v, i); !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
