package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"text/tabwriter"

	"faithlab/core/attr"
	"faithlab/core/attr/trace"
	"faithlab/core/perturb"
)

// runTraceCompare scores every attribution method and TRACE on the deletion
// metric at a patch grid (the TRACE paper's Table 1): per method, the mean
// LeRF, MoRF and LeRF−MoRF sums of the target's probability over n test images.
func runTraceCompare(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("trace-compare", flag.ContinueOnError)
	dsRef, dopt := dataFlags(fs)
	path := fs.String("model", "", "model file (required)")
	n := fs.Int("n", 10, "test images (from the first)")
	grid := fs.Int("grid", 7, "patch grid side (t = grid²)")
	iters := fs.Int("iterations", 5000, "TRACE-SA iterations K")
	seed := fs.Uint64("seed", 0, "seed of SmoothGrad, Random and SA")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m, _, ds, err := openModelData(*path, *dsRef, dopt, *seed)
	if err != nil {
		return err
	}
	N := min(*n, ds.Len())
	in := attr.Input{X: ds.X[:N*ds.Dim()], N: N, Shape: ds.Shape}
	if in.Target, err = attr.Predicted(ctx, m.Net, in.X, N, 256); err != nil {
		return err
	}
	methods := []attr.Method{}
	for _, name := range []string{"gradient", "gradxinput", "ig", "smoothgrad", "sgsq", "vargrad", "deeplift", "gradcam", "sobel", "random"} {
		meth, err := attr.New(name, attr.Params{Seed: *seed})
		if err != nil {
			return err
		}
		methods = append(methods, meth)
	}
	methods = append(methods,
		trace.TRACE{Algorithm: "greedy", Objective: trace.Le, Grid: *grid, Seed: *seed},
		trace.TRACE{Algorithm: "sa", Objective: trace.LeMo, Grid: *grid, Iterations: *iters, Seed: *seed})
	type row struct {
		name         string
		le, mo, lemo float64
	}
	var rows []row
	H, W := ds.Shape[1], ds.Shape[2]
	feats, err := perturb.NewFeatures(H, W, *grid)
	if err != nil {
		return err
	}
	for _, meth := range methods {
		maps, err := attr.Run(ctx, meth, m.Net, in)
		if err != nil {
			return err
		}
		if maps, err = attr.ReduceChannels(maps, "sum"); err != nil {
			return err
		}
		r := row{name: meth.Name()}
		for i := 0; i < N; i++ {
			f, err := trace.NetScorer(m.Net, in.Sample(i), make([]float32, in.Dim()), ds.Shape, *grid, in.Target[i], true, 256)
			if err != nil {
				return err
			}
			c, err := trace.Evaluate(ctx, f, trace.TrajectoryOf(trace.PatchScores(maps.Map(i), feats)))
			if err != nil {
				return err
			}
			r.le += c.Value(trace.Le) / float64(N)
			r.mo += -c.Value(trace.Mo) / float64(N)
			r.lemo += c.Value(trace.LeMo) / float64(N)
		}
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "%s done\n", meth.Name())
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].lemo > rows[j].lemo })
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "method\tLeRF ↑\tMoRF ↓\tLeRF−MoRF ↑\t\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t\n", r.name, r.le, r.mo, r.lemo)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Printf("(%s on %d images of %s; %d×%d patches, zero reference, probability of the predicted class, sums over t+1 = %d points)\n",
		m.Arch, N, ds.Name, *grid, *grid, *grid**grid+1)
	return nil
}
