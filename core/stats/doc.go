// Package stats gives every verdict its confidence: intervals of mean
// scores and paired differences (Bootstrap.Mean, Bootstrap.Diff), a paired
// test of no difference whose level holds at any number of inputs, and
// over few seeds where retraining noise dominates (Bootstrap.Paired,
// SignFlip), and its correction over many pairs (Holm), the groups a
// ranking cannot separate (Letters), rank probabilities
// (Bootstrap.Replicates), agreement between rankings (KendallTau, KendallW,
// Spearman), the reliability of a ranking over inputs (SplitHalf), the
// Wilcoxon signed-rank test (shown beside the paired test), the interval
// width to expect before running (HalfWidthBound), and, for a verdict
// that cannot tell, the smallest difference a run could find and about
// how many inputs or seeds would find one (Detectable, UnitsFor;
// DetectableSeeds, SeedsFor).
//
// Data. A score series is data[g][i]: unit i (a test input) of group g (a
// seed: one trained model, one run). NaN means "no value" and is skipped;
// a unit missing from the shorter of two series that are compared or
// resampled together counts as NaN. Paired functions (Diff, Paired,
// SignFlip, Replicates, Wilcoxon, the correlations) keep only the units
// where every series has a value. Other non-finite values are not
// skipped: an infinite score makes the mean infinite, to be seen, not
// hidden. Scores on a grid (an input's accuracy over k rates) are best
// given as counts (protocol.Units.Exact): equal differences then compare
// equal, and the exact tests see the ties there are.
//
// Contract. Functions leave their inputs alone and never panic on any
// input: what cannot be computed (too few units, a constant ranking,
// invalid settings) is NaN, and each function says which. The same seed
// gives the same numbers, bit for bit, on every machine and Go version:
// one PCG (math/rand/v2, whose PCG-DXSM output Go fixes) per call, seeded
// from the seed, with this package's own bounded draws and shuffles.
//
// # Intervals
//
// One group's mean gets, at 95 %:
//
//   - units all at the two ends of the score's range (0/1 accuracies) —
//     a proportion — the Agresti–Coull interval (add z²/2 successes and
//     failures, then Wald's): it never has the zero width a percentile
//     bootstrap gives 20 of 20 correct, and its exact coverage stays at or
//     above 93 % for every proportion from 15 units on (0.929 at 20, 0.939
//     at 100; Brown, Cai & DasGupta 2001);
//   - other units, the hull of the BCa interval (Efron 1987; its
//     acceleration for a mean in closed form) and the studentized
//     bootstrap interval (bootstrap-t) of the same resamples. BCa alone
//     undercovers skewed scores at tens of inputs (0.88 on 20 lognormal
//     values, the studentized interval 0.93); on discrete ones the hull
//     covers more than either (20 accuracies over five rates, Binomial(5,
//     0.9)/5: BCa 0.94, studentized 0.96, the hull 0.98). A studentized end
//     the resamples cannot bound (more than 2.5 % of them one repeated
//     value, as where 2 of 200 inputs differ) is left to BCa. Below 10
//     units, where resamples of a few values studentize badly (5 normal
//     values: no better coverage than Student's t interval, at 1.7 times
//     its width), the t interval stands in for it;
//   - every interval inside the score's natural range (Bootstrap.Range).
//
// Two methods alike on most inputs differ on few: where most units tie
// at one value (95 of 100 differences exactly 0), the resamples of the few
// that differ undercover (the hull alone covered 0.85–0.90 of the mean
// difference; BCa alone 0.79–0.91), and Student's t interval at the
// degrees of freedom of the units off that value joins the hull: on 2 000
// data sets each, 0.97 where the differing values are normal with mean
// 0.5, 1.00 with mean 0, 0.95 exponential, 0.99 on a grid of fifths
// (TestTiedDifferencesCover), flagged (Interval.Few) in 98–99 % of them,
// where fewer than 10 units differ. Where no unit differs, Diff says so
// (MethodNoneDiffer) rather than give [0, 0] as an interval.
//
// Several groups (seeds): the seed is the unit. Each seed is one trained
// model whose mean over the inputs moves with retraining noise that no
// resampling of inputs sees and that g seeds measure with g − 1 degrees
// of freedom only. The interval is Student's t on the seeds' means at
// g − 1 degrees of freedom (the estimate the mean of the seed means), its
// variance floored where the seed means agree more closely than their
// inputs' noise allows 39 times in 40 (seeds.go). Exact where seed means
// are normal with one variance, whatever share of it retraining makes;
// the two-level bootstrap this package gave — seeds resampled, then
// inputs, with the sign flips' and its own percentile p — was not.
// Coverage of the 95 % interval and the paired test's type-I error at
// 0.05, before and now, on 1 000 data sets of g seeds × 25 inputs whose
// seeds shift by noise of r times the variance of a seed's mean
// (TestSeedsAreTheUnit; standard errors of 0.7 points):
//
//	             coverage         type-I
//	seeds  r   before  now     before  now
//	1      0   0.944   0.944   0.046   0.048
//	1      1   0.836   0.836   0.137   0.138   one seed cannot see retraining
//	1      4   0.630   0.630   0.348   0.349   noise: its verdict is of that model
//	3      0   0.971   0.940   0.031   0.012
//	3      1   0.935   0.960   0.064   0.024
//	3      4   0.833   0.951   0.158   0.038
//	5      0   0.974   0.945   0.020   0.028
//	5      1   0.946   0.950   0.048   0.040
//	5      4   0.895   0.954   0.100   0.043
//
// The price is width and power: t at 2 degrees of freedom is 4.30 where
// the normal's 1.96. Without retraining noise, of the differences the
// inputs pooled find 80 % of the time (Student's t over all g × 25 of
// them, exact there) the paired test finds, before and now
// (TestSeedsCostPower, 500 data sets):
//
//	seeds  before  now   pooled inputs' t
//	2      0.68    0.15  0.79
//	3      0.62    0.35  0.79
//	5      0.54    0.51  0.78
//	10     0.56    0.66  0.79
//
// — what counting retraining noise that a few seeds measure poorly costs
// where there is none; where there is, a test over pooled inputs loses
// its level (the one-seed rows above). Replicates (rank probabilities)
// still resample seeds, then inputs: with few seeds their spread
// understates the noise between seeds.
//
// Few inputs. No interval is known to cover the mean of 20 lognormal
// values 95 % of the time (the best here: 0.92), nor any test to hold its
// level on every 20 skewed differences with a zero mean (Bahadur & Savage
// 1956: none can, for every distribution with a mean). Interval.Few flags
// where the units are too few for how skewed they are, by Cochran's rule
// (Sampling Techniques, 1977, §2.15): n ≤ 25·g₁²; 0/1 units below 15;
// any others below 10, or fewer than 10 off a value most of them tie at.
// g₁ is the larger of the sample's own skewness and the score's across
// the run (Bootstrap.Skewness: PooledSkewness of the run's other methods
// and seeds, each standardised): 20 values' own skewness is noise — 20
// lognormal values that happen to look symmetric went unflagged and
// covered 0.72. The report prints "few inputs: interval may be too
// narrow" beside such an interval. Coverage on 2 000 runs of 5 series of
// n units each, the interval of the first, flagged by its own skewness
// (before) and by the run's (now), with the share flagged and the
// coverage of the unflagged and the flagged intervals
// (TestFewFlagReadsTheRunsScore; "—": none):
//
//	                       own skewness           the run's
//	distribution     n    flagged unflag. flag.  flagged unflag. flag.
//	normal           20   0.09   0.948  0.921   0.09   0.948  0.923
//	lognormal        20   0.91   0.724  0.946   1.00   —      0.925
//	Bernoulli(0.9)   20   0      0.948  —       0      0.948  —
//	beta(1,20)       20   0.75   0.918  0.967   0.97   0.902  0.956
//	normal           100  0      0.953  —       0      0.953  —
//	lognormal        100  0.86   0.886  0.950   1.00   —      0.941
//	Bernoulli(0.9)   100  0      0.974  —       0      0.974  —
//	beta(1,20)       100  0.16   0.946  0.966   0.20   0.950  0.949
//
// (The run's rule left 61 of 2 000 beta(1,20) intervals at 20 units
// unflagged, 0.902 of them covering; 1 and 2 lognormal ones, which
// covered.) The flag read from the run's other methods alone (without
// the sample's own) left 13 % of those beta intervals unflagged, covering
// 0.937 — but left a visibly skewed method beside a plain one unflagged.
//
// Coverage of the 95 % interval of one group's mean, measured on 1 000
// data sets each (TestIntervalsCover; a standard error of 0.7 points),
// before (the percentile bootstrap this package gave) and now, and the
// share of the intervals now flagged:
//
//	distribution     n      before  now    flagged
//	normal           20     0.939   0.960  0.08
//	lognormal        20     0.871   0.925  0.92  no method reaches 0.93: flagged
//	Bernoulli(0.9)   20     0.879   0.960  0
//	beta(1,20)       20     0.904   0.948  0.74
//	normal           100    0.949   0.958  0
//	lognormal        100    0.927   0.943  0.86
//	Bernoulli(0.9)   100    0.951   0.962  0
//	beta(1,20)       100    0.948   0.958  0.17
//	normal           1000   0.955   0.964  0
//	lognormal        1000   0.953   0.959  0.15
//	Bernoulli(0.9)   1000   0.959   0.956  0
//	beta(1,20)       1000   0.963   0.969  0
//
// # Paired tests
//
// Bootstrap.Paired calls a difference between two methods only where two
// tests both reject:
//
//   - the sign-flip permutation test of the mean difference (SignFlip;
//     Fisher 1935), exact whenever the methods are exchangeable on each
//     input — no difference between them —, at any number of inputs:
//     enumerated over the sign patterns of the distinct nonzero
//     differences, with their multiplicities, up to 2⁴⁰ patterns (meeting
//     in the middle), else drawn. 4 of 1 200 inputs that differ, all one
//     way, give p = 2/2⁴ = 0.125 (the percentile bootstrap said 0.031);
//   - a test that does not need that symmetry, for differences whose
//     mean is 0 while one method's scores are skewed against the
//     other's: one group, the studentized bootstrap test (the larger of
//     its equal-tailed and symmetric p-values: each alone rejects 5.5–6 %
//     of centred exponential differences at 20 to 100 inputs, the larger
//     4 %); several, Student's t on the seeds' mean differences (the
//     seeds' table above), which counts the retraining noise that
//     flipping units' signs cannot (the two-level bootstrap's p this
//     package gave rejected 16 % of true nulls at 3 seeds and 10 % at 5
//     where retraining noise is 4 times an input mean's).
//
// The share of 2 000 data sets with no difference in which p < 0.05,
// before (the percentile bootstrap's p) and now (TestPairedTypeIError; a
// standard error of 0.5 points), with the share of the differences'
// intervals flagged. "Skewed scores" differ by two independent lognormal
// scores (the methods exchangeable); the others have a zero mean and a
// skewed distribution:
//
//	differences           n     before  now    flagged
//	normal                20    0.073   0.043  0.08
//	skewed scores         20    0.087   0.025  0.57
//	skewed, exponential   20    0.095   0.043  0.78
//	skewed, lognormal     20    0.149   0.074  0.91  no test holds 0.06: flagged
//	normal                100   0.057   0.051  0
//	skewed scores         100   0.069   0.044  0.25
//	skewed, exponential   100   0.070   0.049  0.29
//	skewed, lognormal     100   0.087   0.049  0.86
//	normal                1000  0.045   0.043  0
//	skewed scores         1000  0.049   0.047  0.03
//	skewed, exponential   1000  0.057   0.050  0
//	skewed, lognormal     1000  0.054   0.040  0.16
//
// The price is power at few inputs, the more so on heavy tails. The share
// of 1 000 data sets shifted by a share of their standard deviation in
// which it rejects at 0.05, beside Student's t test (TestPairedPower):
//
//	differences        n    shift  paired  t test
//	normal             20   0.5    0.51    0.56   the t test exact
//	Student's t, 3 df  20   0.5    0.62    0.70
//	Laplace            20   0.5    0.55    0.61
//	normal             100  0.25   0.71    0.72
//	Student's t, 3 df  100  0.25   0.70    0.74
//	Laplace            100  0.25   0.68    0.70
//
// Monte-Carlo p-values. A p-value drawn at random (the sign-flip test's
// beyond 2⁴⁰ patterns, the bootstrap tests', Kendall's W's beyond 2²⁰
// rankings) is (hits+1)/(draws+1), valid at any number of draws, with its
// binomial standard error (PValue.Error). A pilot of 500 draws doubles
// while its p lies within 3 standard errors of a threshold it will be read
// against — the caller's Alpha, or every level Holm may compare it with;
// then twice the pilot's last number of draws (at least 2 000) is drawn
// afresh, and that p is the one returned. The pilot stops where its p
// happens to lie far from a threshold, so that the p it stops at lies
// farther from the exact p than its standard error says: where the exact
// p is 0.05, 3.4 % of runs landed beyond 2.5 stated standard errors of it
// (2.5 % at 0.048, 2.0 % at 0.052; the normal's 1.2 %) when this package
// reported the p its doubling stopped at. A fresh batch of a number fixed
// before it is drawn has the error it states: 1.1–1.3 % of 20 000 runs at
// each exact p from 0.01 to 0.2 (TestMonteCarloErrorIsHonest). Twice the
// pilot's draws, it lies beyond 3 of its standard errors from the
// thresholds in most runs (PValue.Settled says where not); far from every
// threshold it costs 2 500 draws where the stopped p cost 2 000. Kendall's
// W is exact up to 2²⁰ rankings (8 methods of 2 protocols, 6 of 3, 4 of
// 4, …).
//
// SciPy 1.10 (Debian's python3-scipy) agrees with the exact p-values and
// Kendall's W, and within Monte-Carlo error with the drawn ones and the
// BCa intervals (TestPValuesAgreeWithSciPy, TestIntervalsAgreeWithSciPy).
//
// Cost. A bootstrap draws Resamples × units indices with no allocation per
// resample: 2 000 resamples of 1 000 inputs take a few milliseconds
// (BenchmarkMean1000), and so does the paired test of two methods on them
// (BenchmarkPaired1000).
package stats
