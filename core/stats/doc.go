// Package stats gives every verdict its confidence: bootstrap intervals
// of mean scores, paired differences and rank probabilities (Bootstrap),
// paired tests and their correction over many pairs (Wilcoxon, Holm), the
// groups a ranking cannot separate (Letters), agreement between rankings
// (KendallTau, KendallW, Spearman), the reliability of a ranking over
// inputs (SplitHalf) and the interval width to expect before running
// (HalfWidthBound).
//
// Data. A score series is data[g][i]: unit i (a test input) of group g (a
// seed: one trained model, one run). NaN means "no value" and is skipped;
// a unit missing from the shorter of two series that are compared or
// resampled together counts as NaN. Paired functions (Diff, Replicates,
// Wilcoxon, the correlations) keep only the units where every series has a
// value. Other non-finite values are not skipped: an infinite score makes
// the mean infinite, to be seen, not hidden.
//
// Contract. Functions leave their inputs alone and never panic on any
// input: what cannot be computed (too few units, a constant ranking,
// invalid settings) is NaN, and each function says which. The same seed
// gives the same numbers, bit for bit, on every machine and Go version:
// one PCG (math/rand/v2, whose PCG-DXSM output Go fixes) per call, seeded
// from the seed, with this package's own bounded draws and shuffles.
//
// Why the percentile bootstrap, not BCa. The intervals are percentile
// intervals of the resampled means. The same resamples serve the paired
// differences (the same indices for both methods), the rank probabilities
// (all methods under each resample) and the two-level design (seeds, then
// inputs), where BCa's acceleration, a jackknife of one statistic on
// independent units, has no standard form. At the hundreds to thousands of
// inputs a campaign evaluates, the means are near-normal and percentile
// intervals cover close to nominal: TestIntervalsCoverTheTrueMean measures
// 93–97 % for 95 % intervals on normal scores, Bernoulli accuracies and
// seeds with a random effect. And percentile intervals stay inside the
// data's range — [0, 1] for accuracies — as BCa's do and normal
// (mean ± 1.96·SE) intervals do not.
//
// The two-level bootstrap (several groups) resamples seeds, then inputs
// within each chosen seed, so that retraining noise counts. It is
// conservative about the noise within a seed (counted once by the seed
// draw, again by the input draw) and, with few seeds, optimistic about the
// noise between seeds (a resample of g seeds varies by (g−1)/g of their
// spread, itself estimated from g values). Coverage of its 95 % intervals,
// measured on 400 simulated data sets each, where the variance between
// seeds is r times that of a seed's mean over its inputs: r = 0, 98 %;
// r = 1, 93 % with 3 seeds and 96 % with 5; r = 4, 85 % with 3 seeds and
// 92 % with 5. A few seeds cannot measure retraining noise that dominates.
// TestIntervalsCoverTheTrueMean and TestTwoLevelCoverageWithThreeSeeds
// hold these numbers.
//
// Cost. A bootstrap draws Resamples × units indices with no allocation per
// resample: 2 000 resamples of 1 000 inputs take a few milliseconds
// (BenchmarkMean1000).
package stats
