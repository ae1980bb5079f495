package report

import (
	"cmp"
	"math"
	"slices"

	"faithlab/core/protocol"
)

// seedSums is each input's values summed over seeds, NaN where a seed
// lacks it: on a grid, exact counts, so that the Wilcoxon test sees the
// ties there are.
func seedSums(data [][]float64) []float64 {
	if len(data) == 0 {
		return nil
	}
	out := make([]float64, len(data[0]))
	for _, d := range data {
		for i, v := range d {
			out[i] += v
		}
	}
	return out
}

// seedMeans is each input's value averaged over seeds (NaN left out).
func seedMeans(data [][]float64) []float64 {
	if len(data) == 0 {
		return nil
	}
	out := make([]float64, len(data[0]))
	for i := range out {
		var s float64
		var n int
		for _, d := range data {
			if !math.IsNaN(d[i]) {
				s, n = s+d[i], n+1
			}
		}
		out[i] = math.NaN()
		if n > 0 {
			out[i] = s / float64(n)
		}
	}
	return out
}

// unitRanks is each method's rank among the methods (1: best; ties share
// their mean rank) on each input of each seed where every method has a
// value, averaged: the mean ranks of a critical-difference diagram.
func unitRanks(data [][][]float64, better protocol.Better) []float64 {
	k := len(data)
	sum := make([]float64, k)
	units := 0
	v := make([]float64, k)
	for s := range data[0] {
	inputs:
		for i := range data[0][s] {
			for m := range data {
				v[m] = -oriented(data[m][s][i], better) // rank 1 for the best
				if math.IsNaN(v[m]) {
					continue inputs
				}
			}
			for m, r := range midRanks(v) {
				sum[m] += r
			}
			units++
		}
	}
	for m := range sum {
		if units == 0 {
			sum[m] = math.NaN()
		} else {
			sum[m] /= float64(units)
		}
	}
	return sum
}

// midRanks are v's 1-based ranks, ascending, ties sharing their mean rank.
func midRanks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	r := make([]float64, len(v))
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && v[idx[hi]] == v[idx[lo]] {
			hi++
		}
		for k := lo; k < hi; k++ {
			r[idx[k]] = float64(lo+hi+1) / 2
		}
		lo = hi
	}
	return r
}
