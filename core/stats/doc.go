// Package stats holds the statistics that give a campaign's verdicts
// their confidence: bootstrap intervals of means over test inputs (and
// over seeds, then inputs), paired comparisons of methods, the Wilcoxon
// signed-rank test, Holm's correction, the compact letter display of the
// methods a test cannot tell apart, Kendall's τ and W for whether
// protocols agree, and the split-half reliability of a ranking.
//
// Data are float64 slices the caller owns and the functions leave alone;
// NaN marks a value that is undefined (Kendall's τ of a constant curve) and
// is left out, as the scores' own means leave it out.
//
// Intervals are percentile bootstrap intervals, not BCa. The same
// resamples serve every use the campaigns make of them — a method's mean,
// the paired difference of two methods, the chance that a method ranks
// first, and the two-level design that resamples seeds and then inputs,
// where BCa's acceleration has no standard form; at the hundreds to
// thousands of inputs a campaign evaluates, the means are close to normal
// and percentile intervals cover close to their nominal level (the
// package's coverage test checks 93–97 % for 95 % on skewed and clustered
// data); and percentile intervals stay inside the values' range, so an
// accuracy's interval never leaves [0, 1]. A Bootstrap is seeded: the same
// data and seed give the same interval, bit for bit.
package stats
