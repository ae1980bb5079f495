package stats_test

import (
	"fmt"

	"faithlab/core/stats"
)

// Two attribution methods and a random control scored on the same 12 test
// inputs (a higher score is better): an interval for each mean, the paired
// difference of the first two with its test, and the groups the ranking
// cannot separate.
func Example() {
	scores := [][]float64{
		{0.61, 0.55, 0.70, 0.48, 0.66, 0.59, 0.73, 0.52, 0.64, 0.58, 0.69, 0.62}, // IG
		{0.63, 0.50, 0.71, 0.49, 0.62, 0.60, 0.74, 0.49, 0.65, 0.55, 0.70, 0.60}, // Gradient
		{0.41, 0.44, 0.52, 0.38, 0.47, 0.50, 0.49, 0.40, 0.46, 0.43, 0.51, 0.45}, // Random
	}
	names := []string{"IG", "Gradient", "Random"}
	boot := stats.Bootstrap{Seed: 1, Range: []float64{0, 1}} // 2 000 resamples, 95 %
	for m, s := range scores {
		iv := boot.Mean([][]float64{s}) // one seed: one group
		fmt.Printf("%-8s %.3f [%.3f, %.3f]\n", names[m], iv.Estimate, iv.Lo, iv.Hi)
	}

	// The three pairs, each read against Holm's levels 0.05/3, 0.05/2,
	// 0.05; then letters.
	pairs := [][2]int{{0, 1}, {0, 2}, {1, 2}}
	levels := []float64{0.05 / 3, 0.05 / 2, 0.05}
	raw := make([]float64, len(pairs))
	for k, pr := range pairs {
		a, b := [][]float64{scores[pr[0]]}, [][]float64{scores[pr[1]]}
		d, p := boot.Diff(a, b), boot.Paired(a, b, levels)
		fmt.Printf("%s − %s: %.3f [%.3f, %.3f], p = %.4f (exact: %v)\n", names[pr[0]], names[pr[1]], d.Estimate, d.Lo, d.Hi, p.P, p.Exact)
		raw[k] = p.P
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
	// IG       0.614 [0.563, 0.662]
	// Gradient 0.607 [0.553, 0.663]
	// Random   0.455 [0.423, 0.484]
	// IG − Gradient: 0.007 [-0.007, 0.025], p = 0.3687 (exact: true)
	// IG − Random: 0.159 [0.128, 0.188], p = 0.0010 (exact: false)
	// Gradient − Random: 0.152 [0.117, 0.190], p = 0.0010 (exact: false)
	// IG       a
	// Gradient a
	// Random   b
}
