package stats

import (
	"math/rand/v2"
	"testing"
)

// normalSeries is n draws of N(mu, sd) from seed.
func normalSeries(seed uint64, n int, mu, sd float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n)
	for i := range x {
		x[i] = mu + sd*r.NormFloat64()
	}
	return x
}

// 2 000 resamples of 1 000 units: one headline score's interval.
func BenchmarkMean1000(b *testing.B) {
	data := [][]float64{normalSeries(1, 1000, 0.5, 0.2)}
	for b.Loop() {
		Bootstrap{Seed: 1}.Mean(data)
	}
}

// 2 000 resamples of 5 methods × 1 000 units: a protocol's rank
// probabilities.
func BenchmarkReplicates5x1000(b *testing.B) {
	series := make([][][]float64, 5)
	for m := range series {
		series[m] = [][]float64{normalSeries(uint64(m), 1000, 0.5, 0.2)}
	}
	for b.Loop() {
		Bootstrap{Seed: 1}.Replicates(series)
	}
}

// The paired test of two methods on 1 000 inputs, far from any threshold:
// 2 000 sign flips and 2 000 studentized resamples.
func BenchmarkPaired1000(b *testing.B) {
	a := [][]float64{normalSeries(1, 1000, 0.5, 0.2)}
	c := [][]float64{normalSeries(2, 1000, 0.5, 0.2)}
	for b.Loop() {
		Bootstrap{Seed: 1}.Paired(a, c, []float64{0.05})
	}
}
