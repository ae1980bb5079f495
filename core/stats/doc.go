// Package stats gives every verdict its confidence: intervals of mean
// scores and paired differences (Bootstrap.Mean, Bootstrap.Diff), a paired
// test of no difference whose level holds at any number of inputs
// (Bootstrap.Paired, SignFlip) and its correction over many pairs (Holm),
// the groups a ranking cannot separate (Letters), rank probabilities
// (Bootstrap.Replicates), agreement between rankings (KendallTau, KendallW,
// Spearman), the reliability of a ranking over inputs (SplitHalf), the
// Wilcoxon signed-rank test (shown beside the paired test) and the
// interval width to expect before running (HalfWidthBound).
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
// Several groups (seeds) get a two-level percentile bootstrap: seeds
// resampled, then inputs within each chosen seed, so that retraining noise
// counts; the estimate is the mean of the seeds' means. It is conservative
// about the noise within a seed (counted once by the seed draw, again by
// the input draw) and, with few seeds, optimistic about the noise between
// seeds (a resample of g seeds varies by (g−1)/g of their spread, itself
// estimated from g values). Coverage of its 95 % intervals, where the
// variance between seeds is r times that of a seed's mean over its inputs:
// r = 0, 98 %; r = 1, 96 % with 5 seeds; r = 4, 83–85 % with 3 seeds. A
// few seeds cannot measure retraining noise that dominates
// (TestTwoLevelCoverageWithFiveSeeds, TestTwoLevelCoverageWithThreeSeeds).
//
// Few inputs. No interval is known to cover the mean of 20 lognormal
// values 95 % of the time (the best here: 0.92), nor any test to hold its
// level on every 20 skewed differences with a zero mean (Bahadur & Savage
// 1956: none can, for every distribution with a mean). Interval.Few flags
// where the units are too few for how skewed they are, by Cochran's rule
// (Sampling Techniques, 1977, §2.15): n ≤ 25·g₁², g₁ their sample
// skewness; 0/1 units below 15; any others below 10. The report prints "few inputs: interval
// may be too narrow" beside such an interval.
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
//   - a bootstrap test that does not need that symmetry, for differences
//     whose mean is 0 while one method's scores are skewed against the
//     other's: one group, the studentized bootstrap test (the larger of
//     its equal-tailed and symmetric p-values: each alone rejects 5.5–6 %
//     of centred exponential differences at 20 to 100 inputs, the larger
//     4 %); several, the two-level bootstrap's percentile p, which counts
//     the retraining noise that flipping units' signs cannot.
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
//	skewed scores         20    0.087   0.026  0.57
//	skewed, exponential   20    0.095   0.042  0.78
//	skewed, lognormal     20    0.149   0.075  0.91  no test holds 0.06: flagged
//	normal                100   0.057   0.051  0
//	skewed scores         100   0.069   0.045  0.25
//	skewed, exponential   100   0.070   0.049  0.29
//	skewed, lognormal     100   0.087   0.049  0.86
//	normal                1000  0.045   0.043  0
//	skewed scores         1000  0.049   0.046  0.03
//	skewed, exponential   1000  0.057   0.049  0
//	skewed, lognormal     1000  0.054   0.038  0.16
//
// The price is power at few inputs: on normal differences of half a
// standard deviation at 20 inputs it rejects 50 % of the time, where the
// t-test (exact there) does 56 %; 0.70 at 100 inputs and a quarter, and
// 0.72 at 1 000 and 0.08, as the t-test.
//
// Monte-Carlo p-values. A p-value drawn at random (the sign-flip test's
// beyond 2⁴⁰ patterns, the bootstrap tests', Kendall's W's beyond 2²⁰
// rankings) is (hits+1)/(draws+1), valid at any number of draws, with its
// standard error (PValue.Error); draws start at 2 000 and double while it
// lies within 3 standard errors of a threshold it will be read against —
// the caller's Alpha, or every level Holm may compare it with — so that
// no decision rests on Monte-Carlo noise (PValue.Settled). Kendall's W is
// exact up to 2²⁰ rankings (8 methods of 2 protocols, 6 of 3, 4 of 4, …).
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
