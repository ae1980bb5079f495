package diffusion_test

import (
	"context"
	"fmt"

	"faithlab/core/data"
	"faithlab/core/diffusion"
)

// Sampling GOAR's synthetic mixture with its exact score: DDIM with 50
// steps turns noise into points whose class shares are those of the
// mixture.
func ExampleSample() {
	sched, _ := diffusion.NewSchedule(diffusion.Linear, 1000)
	mix := diffusion.MixtureOf(data.GaussianMixture{Dim: 8})
	prior, err := diffusion.NewMixturePrior(mix, sched, diffusion.Identity())
	if err != nil {
		panic(err)
	}
	res, err := diffusion.Sample(context.Background(), prior, 1000, diffusion.Options{Steps: 50, Seed: 1})
	if err != nil {
		panic(err)
	}
	plus := 0
	for i := range 1000 {
		var s float32
		for _, v := range res.X[i*8 : (i+1)*8] {
			s += v
		}
		if s > 0 {
			plus++
		}
	}
	fmt.Printf("%.1f of the samples lie on the plus side\n", float64(plus)/1000)
	// Output: 0.5 of the samples lie on the plus side
}
