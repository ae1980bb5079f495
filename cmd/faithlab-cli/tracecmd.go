package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"

	"faithlab/core/campaign"
)

// runTraceCompare is `faithlab-cli trace-compare`: every method and TRACE
// scored on the TRACE paper's deletion metric (Table 1).
func runTraceCompare(ctx context.Context, args []string) error {
	fs := newFlags("trace-compare", "", "score attribution methods and TRACE on the deletion metric (TRACE paper, Table 1)")
	dsRef, dopt := modelDataFlags(fs)
	path := fs.String("model", "", "model file (required)")
	n := fs.Int("n", 10, "test images (from the first)")
	grid := fs.Int("grid", 7, "patch grid side (t = grid²)")
	iters := fs.Int("iterations", 5000, "TRACE-SA iterations K")
	seed := fs.Uint64("seed", 0, "seed of SmoothGrad, Random and SA")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *grid < 1 || *iters < 1 {
		return fmt.Errorf("--n %d, --grid %d, --iterations %d: each must be at least 1", *n, *grid, *iters)
	}
	m, _, ds, err := openModel(*path, *dsRef, dopt)
	if err != nil {
		return err
	}
	rows, err := campaign.TraceCompare(ctx, m, ds, *n, *grid, *iters, *seed, func(name string) { fmt.Fprintf(os.Stderr, "%s done\n", name) })
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "method\tLeRF ↑\tMoRF ↓\tLeRF−MoRF ↑\t\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t\n", r.Method, r.LeRF, r.MoRF, r.LeRFMinusMoRF)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Printf("(%s on %d images of %s; %d×%d patches, zero reference, probability of the predicted class, sums over t+1 = %d points)\n",
		m.Arch, min(*n, ds.Len()), ds.Name, *grid, *grid, *grid**grid+1)
	return nil
}
