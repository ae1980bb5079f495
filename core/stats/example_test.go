package stats_test

import (
	"fmt"

	"faithlab/core/stats"
)

// Two attribution methods and a random control scored on the same 12 test
// inputs (a higher score is better): an interval for each mean, the paired
// difference of the first two, and the groups the ranking cannot separate.
func Example() {
	scores := [][]float64{
		{0.61, 0.55, 0.70, 0.48, 0.66, 0.59, 0.73, 0.52, 0.64, 0.58, 0.69, 0.62}, // IG
		{0.63, 0.50, 0.71, 0.49, 0.62, 0.60, 0.74, 0.49, 0.65, 0.55, 0.70, 0.60}, // Gradient
		{0.41, 0.44, 0.52, 0.38, 0.47, 0.50, 0.49, 0.40, 0.46, 0.43, 0.51, 0.45}, // Random
	}
	names := []string{"IG", "Gradient", "Random"}
	boot := stats.Bootstrap{Seed: 1} // 2 000 resamples, 95 %
	for m, s := range scores {
		iv := boot.Mean([][]float64{s}) // one seed: one group
		fmt.Printf("%-8s %.3f [%.3f, %.3f]\n", names[m], iv.Estimate, iv.Lo, iv.Hi)
	}
	d, p := boot.Diff([][]float64{scores[0]}, [][]float64{scores[1]})
	fmt.Printf("IG − Gradient: %.3f [%.3f, %.3f], bootstrap p = %.3f\n", d.Estimate, d.Lo, d.Hi, p)

	// Wilcoxon over the three pairs, Holm-corrected, then letters.
	pairs := [][2]int{{0, 1}, {0, 2}, {1, 2}}
	raw := make([]float64, len(pairs))
	for k, pr := range pairs {
		_, _, raw[k] = stats.Wilcoxon(scores[pr[0]], scores[pr[1]])
	}
	adj := stats.Holm(raw)
	letters := stats.Letters(3, func(i, j int) bool {
		for k, pr := range pairs {
			if pr == [2]int{i, j} {
				return adj[k] < 0.05
			}
		}
		return false
	})
	for m := range names {
		fmt.Printf("%-8s %s\n", names[m], letters[m])
	}
	// Output:
	// IG       0.614 [0.573, 0.655]
	// Gradient 0.607 [0.560, 0.652]
	// Random   0.455 [0.431, 0.479]
	// IG − Gradient: 0.007 [-0.005, 0.022], bootstrap p = 0.274
	// IG       a
	// Gradient a
	// Random   b
}
