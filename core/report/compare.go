package report

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"faithlab/core/stats"
)

// compare is the report's comparison of two methods' per-input scores a
// and b (a[seed][input]): the interval of their difference, the paired
// test of no difference settled against Holm's levels, and Wilcoxon's
// signed-rank p over the seeds' sums.
func compare(bt stats.Bootstrap, a, b [][]float64, levels []float64) (stats.Interval, stats.PValue, float64) {
	d := bt.Diff(a, b)
	p := bt.Paired(a, b, levels)
	_, _, pw := stats.Wilcoxon(seedSums(a), seedSums(b))
	return d, p, pw
}

// holmLevelsFor are Holm's levels for k pairs: Alpha/1 … Alpha/k.
func holmLevelsFor(k int) []float64 {
	levels := make([]float64, k)
	for i := range levels {
		levels[i] = Alpha / float64(i+1)
	}
	return levels
}

// ComparisonUnits is the resampled inputs the report's comparisons of m
// methods on n inputs and s seeds draw, counted before any is drawn: for
// each pair, the interval of the difference (stats.DefaultResamples
// resamples) and the two paired tests (sign-flip and bootstrap), each
// settled against Holm's levels — stats.ExpectedSettleDraws, the average
// over pairs whose difference lies anywhere between none and six
// standard errors, since a pair whose p lands near a level draws many
// times the others. What an estimate times with MeasureComparisons.
func ComparisonUnits(m, n, s int) float64 {
	pairs := m * (m - 1) / 2
	if pairs < 1 || n < 1 {
		return 0
	}
	units := n * max(s, 1)
	draws := 2*stats.ExpectedSettleDraws(holmLevelsFor(pairs), units) + stats.DefaultResamples
	return float64(pairs) * float64(units) * draws
}

// MeasureComparisons times the report's comparison of two methods on
// every core for about 0.3 s, on scores of 200 inputs that differ
// clearly (each test settles at its pilot, stats.SettleDraws), and
// returns the resampled inputs drawn a second: what ComparisonUnits is
// timed with.
func MeasureComparisons(ctx context.Context) (float64, error) {
	const n = 200
	rng := rand.New(rand.NewPCG(7, 11))
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		a[i] = 0.5 + 0.1*rng.NormFloat64()
		b[i] = a[i] - 0.05 + 0.07*rng.NormFloat64()
	}
	levels := holmLevelsFor(6)
	workers := runtime.GOMAXPROCS(0)
	counts := make([]int, workers)
	t0 := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k == 0 || time.Since(t0) < 300*time.Millisecond; k++ {
				if ctx.Err() != nil {
					return
				}
				bt := stats.Bootstrap{Seed: uint64(w)<<32 | uint64(k), Range: []float64{0, 1}}
				compare(bt, [][]float64{a}, [][]float64{b}, levels)
				counts[w]++
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	// p ≈ 1/2501 for both tests: far from every level.
	draws := 2*stats.SettleDraws(0, levels, n) + stats.DefaultResamples
	return float64(total*n*draws) / time.Since(t0).Seconds(), nil
}
