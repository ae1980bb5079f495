package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// flagRule is how a rule for Interval.Few splits a coverage test's
// intervals: the share it flags, and the coverage of the flagged and of
// the unflagged ones (NaN where it has none).
type flagRule struct {
	flagged, covFlagged, covPlain float64
	plain                         int // intervals left unflagged
}

// flagCoverage draws sets runs of k series of n units each from d — a
// run's methods (or methods × seeds) scoring from distributions of one
// shape — and returns the coverage of series 0's interval, split by the
// flag of each rule: the series' own skewness (this package's before),
// and the run's — the larger of its own and the other series'
// (PooledSkewness of series 1…k−1, as the report reads it).
func flagCoverage(d coverageDist, stream uint64, n, k, sets int) (cov float64, own, run flagRule) {
	r := rand.New(rand.NewPCG(23, stream))
	series := make([][]float64, k)
	for j := range series {
		series[j] = make([]float64, n)
	}
	var in, ownFew, ownIn, runFew, runIn float64
	for s := range sets {
		for _, x := range series {
			for i := range x {
				x[i] = d.draw(r)
			}
		}
		g := PooledSkewness(series[1:])
		iv := Bootstrap{Resamples: 1000, Seed: uint64(s), Range: d.rng, Skewness: &g}.Mean(series[:1])
		ivOwn := Bootstrap{Resamples: 1000, Seed: uint64(s), Range: d.rng}.Mean(series[:1])
		if iv.Lo != ivOwn.Lo || iv.Hi != ivOwn.Hi {
			panic("the flag's rule moved the interval")
		}
		hit := 0.0
		if iv.Lo <= d.mean && d.mean <= iv.Hi {
			hit = 1
		}
		in += hit
		if ivOwn.Few {
			ownFew, ownIn = ownFew+1, ownIn+hit
		}
		if iv.Few {
			runFew, runIn = runFew+1, runIn+hit
		}
	}
	nf := float64(sets)
	split := func(few, fewIn float64) flagRule {
		return flagRule{few / nf, fewIn / few, (in - fewIn) / (nf - few), sets - int(few)}
	}
	return in / nf, split(ownFew, ownIn), split(runFew, runIn)
}

// The small-sample flag read from the run's score rather than the
// sample's own alone (the package doc's table): 2 000 runs of 5 series
// each, the flag of series 0's interval from the larger of its own
// skewness and the other 4's. A
// series' own skewness at 20 values is noise: 20 lognormal values that
// happen to look symmetric go unflagged, and cover 0.72. Read from the
// run, the intervals left unflagged cover at least 93 % (up to two
// standard errors of their count, where there are 100 or more), and
// those below it are flagged in at least 80 % of the runs.
func TestFewFlagReadsTheRunsScore(t *testing.T) {
	for _, n := range []int{20, 100} {
		for j, d := range coverageDists {
			t.Run(fmt.Sprintf("%s/n=%d", d.name, n), func(t *testing.T) {
				t.Parallel()
				cov, own, run := flagCoverage(d, uint64(16*n+j), n, 5, 2000)
				t.Logf("| %s | %d | %.3f | %.2f | %.3f | %.3f | %.2f | %.3f | %.3f |", d.name, n, cov,
					own.flagged, own.covPlain, own.covFlagged, run.flagged, run.covPlain, run.covFlagged)
				if se := math.Sqrt(0.93 * 0.07 / float64(run.plain)); run.plain >= 100 && run.covPlain < 0.93-2*se {
					t.Errorf("the %d unflagged intervals covered %.1f %%; want ≥ 93 %% (less two standard errors, %.1f points)", run.plain, 100*run.covPlain, 200*se)
				}
				if cov < 0.93 && run.flagged < 0.8 {
					t.Errorf("coverage %.1f %%, flagged in %.0f %% of runs; want flagged in ≥ 80 %%", 100*cov, 100*run.flagged)
				}
			})
		}
	}
}

// PooledSkewness by hand: each series standardised by its own mean and
// standard deviation, then pooled. A series and its mirror pool to 0; a
// series pooled with a copy of itself shifted and scaled keeps its own
// shape (and, with twice the values, G1's small-sample factor moves).
func TestPooledSkewness(t *testing.T) {
	x := []float64{0, 0, 0, 1, 5}
	mirror := []float64{0, 0, 0, -1, -5}
	if g := PooledSkewness([][]float64{x, mirror}); math.Abs(g) > 1e-12 {
		t.Errorf("a series and its mirror: %v; want 0", g)
	}
	moved := make([]float64, len(x))
	for i, v := range x {
		moved[i] = 3 + 10*v
	}
	one, two := PooledSkewness([][]float64{x}), PooledSkewness([][]float64{x, moved})
	n := 5.0
	g1 := newCentred(x).skew / (math.Sqrt(n*(n-1)) / (n - 2)) // the unadjusted g
	if !near(one, newCentred(x).skew, 1e-12) || !near(two, g1*math.Sqrt(2*n*(2*n-1))/(2*n-2), 1e-12) {
		t.Errorf("PooledSkewness: one series %v (its G1 %v), with a moved copy %v", one, newCentred(x).skew, two)
	}
	nan := math.NaN()
	for _, s := range [][][]float64{nil, {{1, 2}}, {{1, 1, 1}}, {{nan, nan, 1, 2}}} {
		if g := PooledSkewness(s); !math.IsNaN(g) {
			t.Errorf("PooledSkewness(%v) = %v; want NaN", s, g)
		}
	}
	// A given skewness decides the flag; NaN leaves it to the sample.
	flat := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	big, none := 3.0, math.NaN()
	if !(Bootstrap{Seed: 1, Skewness: &big}).Mean([][]float64{flat}).Few || (Bootstrap{Seed: 1, Skewness: &none}).Mean([][]float64{flat}).Few {
		t.Error("a run's skewness of 3 leaves 20 units unflagged, or NaN flags symmetric ones")
	}
}
