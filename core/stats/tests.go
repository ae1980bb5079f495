package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Wilcoxon is the two-sided Wilcoxon signed-rank test of paired samples x
// and y: the differences x − y, zero differences dropped (Wilcoxon's
// original treatment), their magnitudes ranked with ties sharing their
// mean rank. It returns W+, the sum of the positive differences' ranks,
// the number of differences used and p: exact (the distribution of W+
// counted over all 2ⁿ signs) for n ≤ 25 without ties, else the normal
// approximation with the tie correction of the variance and a continuity
// correction of 0.5. NaN pairs are left out; n = 0 gives p = 1.
func Wilcoxon(x, y []float64) (wplus float64, n int, p float64) {
	var d []float64
	for i := range x {
		if v := x[i] - y[i]; v != 0 && !math.IsNaN(v) {
			d = append(d, v)
		}
	}
	n = len(d)
	if n == 0 {
		return 0, 0, 1
	}
	mag := make([]float64, n)
	for i, v := range d {
		mag[i] = math.Abs(v)
	}
	r, ties := rankWithTies(mag)
	for i, v := range d {
		if v > 0 {
			wplus += r[i]
		}
	}
	if n <= 25 && len(ties) == 0 {
		return wplus, n, exactSignedRank(n, wplus)
	}
	mean := float64(n*(n+1)) / 4
	variance := float64(n*(n+1)*(2*n+1)) / 24
	for _, t := range ties {
		variance -= float64(t*t*t-t) / 48
	}
	if variance <= 0 {
		return wplus, n, 1
	}
	z := (math.Abs(wplus-mean) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		z = 0
	}
	return wplus, n, min(1, 2*distuv.UnitNormal.Survival(z))
}

// exactSignedRank is the two-sided exact p-value of W+ = w for n
// differences without ties: the count of sign assignments whose W+ is at
// least as far from its mean as w.
func exactSignedRank(n int, w float64) float64 {
	max := n * (n + 1) / 2
	counts := make([]float64, max+1) // counts[s]: sign assignments with W+ = s
	counts[0] = 1
	for k := 1; k <= n; k++ {
		for s := max; s >= k; s-- {
			counts[s] += counts[s-k]
		}
	}
	total := math.Pow(2, float64(n))
	mean := float64(max) / 2
	dev := math.Abs(w - mean)
	var tail float64
	for s, c := range counts {
		if math.Abs(float64(s)-mean) >= dev-1e-9 {
			tail += c
		}
	}
	return min(1, tail/total)
}

// rankWithTies is v's 1-based ranks, ascending, ties sharing their mean
// rank, and the sizes of the groups of ties (of two or more).
func rankWithTies(v []float64) ([]float64, []int) {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	r := make([]float64, len(v))
	var ties []int
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && v[idx[hi]] == v[idx[lo]] {
			hi++
		}
		for k := lo; k < hi; k++ {
			r[idx[k]] = float64(lo+hi+1) / 2
		}
		if hi-lo > 1 {
			ties = append(ties, hi-lo)
		}
		lo = hi
	}
	return r, ties
}

// Holm adjusts p-values for the family of comparisons they belong to
// (Holm 1979): the i-th smallest is multiplied by m − i + 1, the results
// made monotone (an adjusted p-value is never below that of a smaller raw
// one) and capped at 1. They are returned in the input's order.
func Holm(p []float64) []float64 {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	out := make([]float64, m)
	run := 0.0
	for k, i := range idx {
		run = math.Max(run, min(1, float64(m-k)*p[i]))
		out[i] = run
	}
	return out
}

// Letters is the compact letter display (Piepho 2004, insert-and-absorb)
// of k items ordered best first: differ(i, j) reports that items i and j
// differ significantly. Items that share a letter cannot be told apart;
// two items that differ share none. Letters are named a, b, … in the
// order of the best item holding each, and each item's letters are
// written in that order: "a", "ab", "b".
func Letters(k int, differ func(i, j int) bool) []string {
	if k == 0 {
		return nil
	}
	// Columns of the display: each a set of items.
	cols := [][]bool{make([]bool, k)}
	for i := range k {
		cols[0][i] = true
	}
	for i := range k {
		for j := i + 1; j < k; j++ {
			if !differ(i, j) {
				continue
			}
			// Insert: split every column that holds both.
			var next [][]bool
			for _, c := range cols {
				if c[i] && c[j] {
					a, b := slices.Clone(c), slices.Clone(c)
					a[j], b[i] = false, false
					next = append(next, a, b)
				} else {
					next = append(next, c)
				}
			}
			// Absorb: drop a column contained in another.
			cols = nil
			for x, c := range next {
				absorbed := false
				for y, d := range next {
					if x != y && subset(c, d) && (!equal(c, d) || y < x) {
						absorbed = true
						break
					}
				}
				if !absorbed {
					cols = append(cols, c)
				}
			}
		}
	}
	// Name the columns by their best item.
	first := func(c []bool) int { return slices.Index(c, true) }
	slices.SortStableFunc(cols, func(a, b []bool) int {
		if d := first(a) - first(b); d != 0 {
			return d
		}
		return cmp.Compare(lastTrue(a), lastTrue(b))
	})
	out := make([]string, k)
	for n, c := range cols {
		for i, in := range c {
			if in {
				out[i] += string(rune('a' + n%26))
			}
		}
	}
	return out
}

func lastTrue(c []bool) int {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i] {
			return i
		}
	}
	return -1
}

func subset(a, b []bool) bool {
	for i := range a {
		if a[i] && !b[i] {
			return false
		}
	}
	return true
}

func equal(a, b []bool) bool { return slices.Equal(a, b) }

// KendallTau is Kendall's τ-b between x and y (pairs tied in either
// corrected for), NaN when either is constant.
func KendallTau(x, y []float64) float64 {
	var conc, disc, tx, ty float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case (dx > 0) == (dy > 0):
				conc++
			default:
				disc++
			}
		}
	}
	return (conc - disc) / math.Sqrt((conc+disc+tx)*(conc+disc+ty))
}

// KendallW is Kendall's coefficient of concordance of m raters (rows of
// scores) over n items (columns), each rater's scores ranked ascending
// with ties sharing their mean rank, with the correction for ties; and its
// permutation p-value: the share of perms random draws, each rater's
// ranking permuted on its own (seeded), whose W reaches the observed one,
// (hits + 1)/(perms + 1). Identical rankings give 1, two reversed ones 0;
// fewer than two raters or items give NaN and p = 1.
func KendallW(scores [][]float64, perms int, seed uint64) (w, p float64) {
	m := len(scores)
	if m < 2 || len(scores[0]) < 2 {
		return math.NaN(), 1
	}
	n := len(scores[0])
	ranks := make([][]float64, m)
	var tieSum float64
	for r, s := range scores {
		var ties []int
		ranks[r], ties = rankWithTies(s)
		for _, t := range ties {
			tieSum += float64(t*t*t - t)
		}
	}
	denom := float64(m*m)*float64(n*n*n-n) - float64(m)*tieSum
	if denom <= 0 {
		return math.NaN(), 1
	}
	wOf := func(ranks [][]float64) float64 {
		var ss float64
		mean := float64(m*(n+1)) / 2
		for i := range n {
			var s float64
			for r := range ranks {
				s += ranks[r][i]
			}
			ss += (s - mean) * (s - mean)
		}
		return 12 * ss / denom
	}
	w = wOf(ranks)
	if perms <= 0 {
		return w, math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d))
	shuffled := make([][]float64, m)
	for r := range shuffled {
		shuffled[r] = slices.Clone(ranks[r])
	}
	hits := 0
	for range perms {
		for r := range shuffled {
			rng.Shuffle(n, func(i, j int) { shuffled[r][i], shuffled[r][j] = shuffled[r][j], shuffled[r][i] })
		}
		if wOf(shuffled) >= w-1e-12 {
			hits++
		}
	}
	return w, float64(hits+1) / float64(perms+1)
}

// Spearman is Spearman's rank correlation of x and y (ties sharing their
// mean rank), NaN when either is constant.
func Spearman(x, y []float64) float64 {
	rx, _ := rankWithTies(x)
	ry, _ := rankWithTies(y)
	return pearson(rx, ry)
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx, my = mx+x[i], my+y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// SplitHalf is the split-half reliability of a ranking of methods
// measured on the same units (values[m][i]: method m on unit i; units
// where any method is NaN are left out), in the sense of Tomsett et al.,
// "Sanity checks for saliency metrics" (AAAI 2020): the units are split at
// random into two halves splits times (seeded), the methods ranked by
// their mean on each half, Spearman's ρ taken between the halves'
// rankings and averaged over the splits (a split whose halves rank no
// method apart counts as ρ 0), and the Spearman–Brown correction
// 2ρ/(1 + ρ) gives the reliability of the ranking on all units. NaN with
// fewer than two methods or four units.
func SplitHalf(values [][]float64, splits int, seed uint64) float64 {
	if len(values) < 2 || splits < 1 {
		return math.NaN()
	}
	var units []int
unit:
	for i := range values[0] {
		for _, v := range values {
			if i >= len(v) || math.IsNaN(v[i]) {
				continue unit
			}
		}
		units = append(units, i)
	}
	if len(units) < 4 {
		return math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, 0xda942042e4dd58b5))
	a, b := make([]float64, len(values)), make([]float64, len(values))
	var sum float64
	for range splits {
		rng.Shuffle(len(units), func(i, j int) { units[i], units[j] = units[j], units[i] })
		half := len(units) / 2
		for m, v := range values {
			var sa, sb float64
			for _, i := range units[:half] {
				sa += v[i]
			}
			for _, i := range units[half:] {
				sb += v[i]
			}
			a[m], b[m] = sa/float64(half), sb/float64(len(units)-half)
		}
		rho := Spearman(a, b)
		if math.IsNaN(rho) {
			rho = 0
		}
		sum += rho
	}
	rho := sum / float64(splits)
	if rho <= -1 {
		return -1
	}
	return 2 * rho / (1 + rho)
}
