package stats

import (
	"cmp"
	"math"
	"slices"
	"strconv"
)

// exactMax is the largest n for which Wilcoxon gives the exact p.
const exactMax = 25

// Wilcoxon is the two-sided Wilcoxon signed-rank test of paired samples x,
// y (differences x−y; zero differences dropped as in Wilcoxon's original;
// ties get mid-ranks): exact p for n ≤ 25 without ties, else the normal
// approximation with tie correction and continuity correction (as R's
// wilcox.test and SciPy's wilcoxon(method="approx") compute it). Returns
// the statistic W+ (sum of positive ranks), the n used and p. n = 0 gives
// p = 1. Pairs where either value is NaN, or missing from the shorter
// sample, are dropped.
func Wilcoxon(x, y []float64) (wplus float64, n int, p float64) {
	var d []float64
	for i := range min(len(x), len(y)) {
		if v := x[i] - y[i]; v != 0 && !math.IsNaN(v) {
			d = append(d, v)
		}
	}
	n = len(d)
	if n == 0 {
		return 0, 0, 1
	}
	abs := make([]float64, n)
	for i, v := range d {
		abs[i] = math.Abs(v)
	}
	r, ties := ranks(abs)
	for i, v := range d {
		if v > 0 {
			wplus += r[i]
		}
	}
	if n <= exactMax && ties == 0 {
		return wplus, n, signedRankExact(n, int(wplus))
	}
	nf := float64(n)
	mean := nf * (nf + 1) / 4
	sd := math.Sqrt(nf*(nf+1)*(2*nf+1)/24 - ties/48)
	dev := wplus - mean
	if dev > 0 {
		dev -= 0.5
	} else if dev < 0 {
		dev += 0.5
	}
	z := math.Abs(dev) / sd
	return wplus, n, min(1, math.Erfc(z/math.Sqrt2))
}

// signedRankExact is the exact two-sided p of W+ = w among n untied
// nonzero differences: 2·min(P(W+ ≤ w), P(W+ ≥ w)), capped at 1, under
// the null in which each rank's sign is a fair coin (so each of the 2ⁿ
// subsets of ranks 1…n is equally likely to be the positive ones).
func signedRankExact(n, w int) float64 {
	top := n * (n + 1) / 2
	count := make([]float64, top+1) // count[s]: subsets of 1…k summing to s
	count[0] = 1
	for k := 1; k <= n; k++ {
		for s := top; s >= k; s-- {
			count[s] += count[s-k]
		}
	}
	var le, ge float64
	for s, c := range count {
		if s <= w {
			le += c
		}
		if s >= w {
			ge += c
		}
	}
	return min(1, 2*min(le, ge)/math.Ldexp(1, n))
}

// Holm adjusts p-values for multiple comparisons (Holm 1979), step-down,
// monotone, capped at 1, in the input order: the i-th smallest of m
// p-values becomes max over j ≤ i of min(1, (m−j+1)·p₍ⱼ₎). NaN entries
// stay NaN and do not count in m (as R's p.adjust).
func Holm(p []float64) []float64 {
	out := make([]float64, len(p))
	var order []int
	for i, v := range p {
		out[i] = math.NaN()
		if !math.IsNaN(v) {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(p[i], p[j]) })
	m := len(order)
	var run float64
	for k, i := range order {
		run = max(run, min(1, float64(m-k)*p[i]))
		out[i] = run
	}
	return out
}

// Letters is the compact letter display (Piepho 2004, insert-and-absorb)
// of k items ordered best first: differ(i, j) reports that items i and j
// differ significantly (it is asked with i < j only). Items sharing a
// letter cannot be told apart; items that differ share none. Letters are
// assigned "a", "b", … in the order of the best item holding them; returns
// one string per item, e.g. "a", "ab", "b".
//
// Insert-and-absorb gives every maximal group of items no two of which
// differ; Piepho's sweep then drops a letter from an item wherever other
// letters already join that item to every item of the group, so that no
// letter is redundant. Letters past "z" continue with "A"…"Z", then
// "{27}", "{28}", … (displays that long are unreadable anyway).
func Letters(k int, differ func(i, j int) bool) []string {
	if k <= 0 {
		return []string{}
	}
	all := make([]bool, k)
	for i := range all {
		all[i] = true
	}
	cols := [][]bool{all}
	// Insert: split every column holding a differing pair into two, one
	// without each; absorb: drop columns inside another.
	for i := range k {
		for j := i + 1; j < k; j++ {
			if !differ(i, j) {
				continue
			}
			var next [][]bool
			for _, c := range cols {
				if !c[i] || !c[j] {
					next = append(next, c)
					continue
				}
				ci, cj := slices.Clone(c), slices.Clone(c)
				ci[i], cj[j] = false, false
				next = append(next, ci, cj)
			}
			cols = absorb(next)
		}
	}
	// Sweep: item i leaves column c when it shares another letter with
	// every other item of c (and keeps at least one letter).
	letters := make([]int, k) // letters held by each item
	for _, c := range cols {
		for i, in := range c {
			if in {
				letters[i]++
			}
		}
	}
	for ci, c := range cols {
		for i := range k {
			if !c[i] || letters[i] < 2 {
				continue
			}
			redundant := true
			for j := range k {
				if j != i && c[j] && !shareOther(cols, ci, i, j) {
					redundant = false
					break
				}
			}
			if redundant {
				c[i] = false
				letters[i]--
			}
		}
	}
	cols = absorb(cols)
	// Name the columns in the order of their best items.
	slices.SortFunc(cols, func(a, b []bool) int {
		for i := range a {
			if a[i] != b[i] {
				if a[i] {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	out := make([]string, k)
	for ci, c := range cols {
		name := letterName(ci)
		for i, in := range c {
			if in {
				out[i] += name
			}
		}
	}
	return out
}

// absorb drops the empty columns, the columns inside another, and all but
// the first of equal columns.
func absorb(cols [][]bool) [][]bool {
	var out [][]bool
	for a, c := range cols {
		keep := slices.Contains(c, true)
		for b, o := range cols {
			if !keep {
				break
			}
			if a != b && subset(c, o) && (!subset(o, c) || b < a) {
				keep = false
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

func subset(a, b []bool) bool {
	for i := range a {
		if a[i] && !b[i] {
			return false
		}
	}
	return true
}

// shareOther reports whether items i and j share a column other than skip.
func shareOther(cols [][]bool, skip, i, j int) bool {
	for c, col := range cols {
		if c != skip && col[i] && col[j] {
			return true
		}
	}
	return false
}

func letterName(i int) string {
	switch {
	case i < 26:
		return string(rune('a' + i))
	case i < 52:
		return string(rune('A' + i - 26))
	}
	return "{" + strconv.Itoa(i+1) + "}"
}
