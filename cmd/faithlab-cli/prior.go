package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"faithlab/core/campaign"
	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine"
	"faithlab/core/job"
	"faithlab/core/model"
)

// runTrainPrior is `faithlab-cli train-prior`.
func runTrainPrior(ctx context.Context, args []string) error {
	fs := newFlags("train-prior", "", "train a diffusion prior (ε-prediction, DDPM) on a dataset; the saved weights are the moving average")
	dsRef, dopt := dataFlags(fs)
	arch := fs.String("arch", "unet-s", "denoiser architecture: unet-s")
	out := fs.String("out", "", "prior file to write (required; checked before training)")
	ckpt := fs.String("checkpoint", "", "training state file, saved as it goes and resumed from when present, also to train a finished run for more epochs (default: OUT.ckpt; \"none\": none)")
	asJSON := fs.Bool("json", false, "print one JSON object with the result")
	var cfg diffusion.TrainConfig
	fs.IntVar(&cfg.Epochs, "epochs", 10, "passes over the training split")
	fs.IntVar(&cfg.BatchSize, "batch", 128, "batch size")
	fs.Float64Var(&cfg.LR, "lr", 2e-4, "Adam's learning rate after warm-up")
	fs.IntVar(&cfg.Warmup, "warmup", 500, "steps of linear learning-rate warm-up")
	fs.Float64Var(&cfg.EMA, "ema", 0.999, "decay of the weights' moving average")
	fs.StringVar(&cfg.Schedule, "schedule", diffusion.Linear, "noise schedule: linear (β 1e-4…0.02) or cosine")
	fs.IntVar(&cfg.T, "steps", 1000, "diffusion steps T")
	fs.IntVar(&cfg.CheckpointEvery, "checkpoint-every", 100, "optimiser steps between checkpoints")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed of initialisation, order, timesteps and noise")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fs, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if *out == "" {
		return usageError(fs, "--out FILE is required")
	}
	if *arch != "unet-s" {
		return usageError(fs, fmt.Sprintf("--arch %s: the built-in denoiser is unet-s", *arch))
	}
	if err := model.CheckWritable(*out); err != nil {
		return err
	}
	switch *ckpt {
	case "":
		cfg.Checkpoint = *out + ".ckpt"
	case "none":
	default:
		cfg.Checkpoint = *ckpt
	}
	dopt.Seed = cfg.Seed
	trainSet, _, err := data.Open(*dsRef, *dopt)
	if err != nil {
		return err
	}
	sc := diffusion.ScalingFor(trainSet)
	m, err := model.NewPrior(trainSet, model.Diffusion{Schedule: cfg.Schedule, Steps: cfg.T, DataLo: sc.Lo, DataHi: sc.Hi}, kernel(), cfg.Seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "training %s prior on %s (%d samples of %v, data [%g, %g] → [−1, 1]) with %s\n",
		*arch, trainSet.Name, trainSet.Len(), trainSet.Shape, sc.Lo, sc.Hi, m.Prior.Kernel())
	last := time.Now()
	rec, err := diffusion.TrainPrior(ctx, m.Prior, trainSet, cfg, func(p diffusion.TrainProgress) {
		switch {
		case p.EpochDone:
			e := p.Last
			fmt.Fprintf(os.Stderr, "epoch %3d/%d  loss %.5f  %.0f s  %.1f img/s\n", e.Epoch, p.Epochs, e.Loss, e.Seconds, e.ImagesSec)
		case time.Since(last) > 30*time.Second:
			last = time.Now()
			fmt.Fprintf(os.Stderr, "epoch %3d/%d  batch %4d/%d  loss %.5f\n", p.Epoch, p.Epochs, p.Batch, p.Batches, p.Loss)
		}
	})
	if err != nil {
		if cfg.Checkpoint != "" && errors.Is(err, context.Canceled) {
			return fmt.Errorf("%w (the same command resumes from %s)", err, cfg.Checkpoint)
		}
		return err
	}
	rec.Kernel = m.Prior.Kernel()
	if m.Diffusion.Training, err = json.Marshal(rec); err != nil {
		return err
	}
	if err := m.Save(*out); err != nil {
		return err
	}
	if cfg.Checkpoint != "" {
		fmt.Fprintf(os.Stderr, "the checkpoint %s stays: the same command with more --epochs trains on from it\n", cfg.Checkpoint)
	}
	final := 0.0
	if len(rec.History) > 0 {
		final = rec.History[len(rec.History)-1].Loss
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"prior": *out, "arch": *arch, "dataset": trainSet.Name,
			"epochs": len(rec.History), "steps": rec.Steps, "loss": final, "seconds": rec.Seconds, "resumed": rec.Resumed,
			"seed": cfg.Seed, "kernel": rec.Kernel, "faithlab_version": model.Version})
	}
	fmt.Printf("saved %s: loss %.5f after %d epochs (%d steps, %.0f s, resumed %d times)\n", *out, final, len(rec.History), rec.Steps, rec.Seconds, rec.Resumed)
	return nil
}

// samplerFlags are the flags every sampling command shares.
type samplerFlags struct {
	prior, out, traj *string
	opt              diffusion.Options
	record           *int
	clip             *string
}

func addSamplerFlags(fs *flag.FlagSet, steps int) *samplerFlags {
	f := &samplerFlags{
		prior:  fs.String("prior", "", "prior: a prior file, fashion-mnist (the shipped unet-s), gmm (the exact score of the gmm dataset's mixture) or empirical:DATASET (the training-free denoiser of a dataset's training split) (required)"),
		out:    fs.String("out", "", ".npy to write, in the dataset's own value range (required)"),
		traj:   fs.String("trajectory", "", ".npy to write the first --record samples' trajectories to: (steps, 2, record, C, H, W), x_t then the predicted x̂₀ at each step, timesteps in FILE.json"),
		record: fs.Int("record", 8, "how many samples' trajectories --trajectory keeps"),
		clip:   fs.String("clip", "auto", "clip the predicted x̂₀ to the data range: auto (for priors of [0, 1] images), on or off"),
	}
	fs.StringVar(&f.opt.Method, "method", "ddim", "ddim or ddpm (ancestral, every step)")
	fs.IntVar(&f.opt.Steps, "steps", steps, "DDIM steps on the grid over T")
	fs.Float64Var(&f.opt.Eta, "eta", 0, "DDIM η: 0 deterministic, 1 DDPM's variance")
	fs.Uint64Var(&f.opt.Seed, "seed", 0, "noise seed")
	fs.IntVar(&f.opt.Batch, "batch", 256, "samples advanced together (bounds memory)")
	return f
}

// open loads the prior and completes the options.
func (f *samplerFlags) open(fs *flag.FlagSet) (diffusion.Prior, error) {
	if *f.prior == "" || *f.out == "" {
		return nil, usageError(fs, "--prior and --out are required")
	}
	if *f.traj != "" {
		f.opt.Record = *f.record
	}
	p, err := openPrior(*f.prior)
	if err != nil {
		return nil, err
	}
	switch *f.clip {
	case "auto":
		f.opt.Clip = p.Scaling() == diffusion.Scaling{Lo: 0, Hi: 1}
	case "on", "off":
		f.opt.Clip = *f.clip == "on"
	default:
		return nil, usageError(fs, fmt.Sprintf("--clip %s: want auto, on or off", *f.clip))
	}
	last := time.Now()
	f.opt.Progress = func(p diffusion.Progress) {
		if time.Since(last) > 10*time.Second {
			last = time.Now()
			fmt.Fprintf(os.Stderr, "%d of %d samples, step %d of %d\n", p.Done, p.Total, p.Step, p.Steps)
		}
	}
	return p, nil
}

// write saves the result and, when asked, its trajectory.
func (f *samplerFlags) write(res *diffusion.Result, shape []int, n int) error {
	if err := data.SaveNPY(*f.out, append([]int{n}, shape...), res.X); err != nil {
		return err
	}
	tr := res.Trajectory
	if *f.traj == "" || tr == nil {
		return nil
	}
	r := len(tr.X[0]) / engine.Size(shape)
	var all []float32
	for i := range tr.T {
		all = append(append(all, tr.X[i]...), tr.X0[i]...)
	}
	if err := data.SaveNPY(*f.traj, append([]int{len(tr.T), 2, r}, shape...), all); err != nil {
		return err
	}
	meta, err := json.MarshalIndent(map[string]any{"t": tr.T, "axes": "step, (x_t, predicted x0), sample, C, H, W", "range": "data"}, "", "  ")
	if err != nil {
		return err
	}
	return data.WriteFileAtomic(*f.traj+".json", meta)
}

// openPrior opens a prior by file name or name: fashion-mnist (the shipped
// one), gmm, empirical:DATASET.
func openPrior(ref string) (diffusion.Prior, error) {
	sched := func(kind string, T int) *diffusion.Schedule {
		s, _ := diffusion.NewSchedule(kind, T) // a built-in kind
		return s
	}
	switch {
	case ref == "fashion-mnist":
		p, _, err := job.OpenPrior(ref, "", kernel())
		return p, err
	case ref == "gmm":
		return diffusion.NewMixturePrior(diffusion.MixtureOf(data.GaussianMixture{Dim: 20}), sched(diffusion.Linear, 1000), diffusion.Identity())
	case strings.HasPrefix(ref, "empirical:"):
		ds, _, err := data.Open(strings.TrimPrefix(ref, "empirical:"), data.Options{})
		if err != nil {
			return nil, err
		}
		return diffusion.NewEmpirical(ds, sched(diffusion.Linear, 1000), diffusion.ScalingFor(ds), kernel())
	}
	if n := model.FileNotice(ref); n != "" {
		fmt.Fprintln(os.Stderr, "warning:", n)
	}
	p, _, err := job.OpenPrior("", ref, kernel())
	return p, err
}

// runSample is `faithlab-cli sample`.
func runSample(ctx context.Context, args []string) error {
	fs := newFlags("sample", "", "draw samples from a diffusion prior (DDIM or DDPM), written as (n, C, H, W) .npy in the data's range")
	f := addSamplerFlags(fs, 50)
	n := fs.Int("n", 16, "number of samples")
	start := fs.Int("start", 0, "highest step to start from (0: T−1)")
	judge := fs.String("judge", "", "classifier file: print the class it assigns each sample and how well its energy score tells the samples from as many of its test images (AUROC), beside test images with half their pixels zeroed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var clf *model.Model
	if *judge != "" {
		var err error
		if clf, err = loadModel(*judge); err != nil {
			return err
		}
	}
	p, err := f.open(fs)
	if err != nil {
		return err
	}
	if clf != nil && !slices.Equal(clf.Net.InputShape(), p.Shape()) {
		return fmt.Errorf("--judge %s reads inputs of %v, the prior makes %v", *judge, clf.Net.InputShape(), p.Shape())
	}
	f.opt.Start = *start
	res, err := diffusion.Sample(ctx, p, *n, f.opt)
	if err != nil {
		return err
	}
	if err := f.write(res, p.Shape(), *n); err != nil || clf == nil {
		return err
	}
	c, err := campaign.CheckPrior(ctx, clf, res.X, *n, f.opt.Seed)
	if err != nil {
		return fmt.Errorf("--judge %s: %w", *judge, err)
	}
	fmt.Printf("%d samples as %s classifies them (uniform: %.1f %%):\n", c.Samples, *judge, 100/float64(len(c.Counts)))
	for k, cnt := range c.Counts {
		fmt.Printf("  %-14s %5d  %5.1f %%\n", c.Classes[k], cnt, 100*float64(cnt)/float64(c.Samples))
	}
	fmt.Printf("largest distance of a class's share from uniform: %.1f points\n", 100*c.MaxShareGap())
	fmt.Printf("energy AUROC against %d test images: samples %.3f, test images with half their pixels zeroed %.3f (0.5: indistinguishable)\n",
		c.Reference, c.AUROC, c.ZeroAUROC)
	return nil
}

// loadImages reads (C,H,W), (N,C,H,W) or (H,W) images for a prior of shape.
func loadImages(path string, shape []int) ([]float32, int, error) {
	a, err := data.LoadNPY(path)
	if err != nil {
		return nil, 0, err
	}
	dim := engine.Size(shape)
	switch {
	case slices.Equal(a.Shape, shape) || len(a.Shape) == 2 && shape[0] == 1 && a.Shape[0] == shape[1] && a.Shape[1] == shape[2]:
		return a.Data, 1, nil
	case len(a.Shape) == 4 && slices.Equal(a.Shape[1:], shape):
		return a.Data, a.Shape[0], nil
	}
	if len(a.Data)%dim == 0 && len(a.Shape) == 2 && a.Shape[1] == dim {
		return a.Data, a.Shape[0], nil // tabular rows
	}
	return nil, 0, fmt.Errorf("%s: shape %v does not hold samples of the prior's %v", path, a.Shape, shape)
}

// runProject is `faithlab-cli project`.
func runProject(ctx context.Context, args []string) error {
	fs := newFlags("project", "", "project images onto a prior's data (SDEdit, as GOAR: noise to step --t, denoise to 0)")
	f := addSamplerFlags(fs, 25)
	in := fs.String("image", "", "images .npy: (C,H,W), (N,C,H,W) or (H,W), in the data's range (required)")
	t := fs.Int("t", 280, "step to noise to (GOAR: the step of the perturbation's size plus 0.16·T); the sampler starts at the highest grid step at or below it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := f.open(fs)
	if err != nil {
		return err
	}
	if *in == "" {
		return usageError(fs, "--image is required")
	}
	x, n, err := loadImages(*in, p.Shape())
	if err != nil {
		return err
	}
	res, err := diffusion.Project(ctx, p, x, n, *t, f.opt)
	if err != nil {
		return err
	}
	return f.write(res, p.Shape(), n)
}

// runInpaint is `faithlab-cli inpaint`.
func runInpaint(ctx context.Context, args []string) error {
	fs := newFlags("inpaint", "", "fill the removed pixels (mask 0) of images from a prior, keeping the others exactly (FUD's in-painting)")
	f := addSamplerFlags(fs, 50)
	in := fs.String("image", "", "images .npy: (C,H,W), (N,C,H,W) or (H,W), in the data's range (required)")
	maskPath := fs.String("mask", "", "mask .npy: 1 kept, 0 filled; (H,W) for every image and channel, (N,H,W) per image, or the images' own shape (required)")
	repaint := fs.Bool("repaint", false, "keep the kept pixels noised to each step (RePaint) instead of as they are (FUD Eq. 14)")
	clf := fs.String("classifier", "", "classifier file for FUD's correction ε̂ = ε + s·√(1−ᾱ)·∇log P(y|x) on the last steps (optional)")
	label := fs.Int("label", -1, "the class y of the correction (−1: each image's predicted class)")
	frac := fs.Float64("guide-frac", 0.05, "the correction runs on the steps t < guide-frac·T (FUD: 0.05)")
	scale := fs.Float64("guide-scale", 1, "the correction's scale s")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := f.open(fs)
	if err != nil {
		return err
	}
	if *in == "" || *maskPath == "" {
		return usageError(fs, "--image and --mask are required")
	}
	shape := p.Shape()
	x, n, err := loadImages(*in, shape)
	if err != nil {
		return err
	}
	mk, err := data.LoadNPY(*maskPath)
	if err != nil {
		return err
	}
	dim, hw := engine.Size(shape), shape[1]*shape[2]
	var mask []float32
	switch len(mk.Data) {
	case dim, n * dim:
		mask = mk.Data
	case hw, n * hw: // per pixel: the same for every channel
		per := len(mk.Data) / hw
		mask = make([]float32, per*dim)
		for i := range per {
			for c := range shape[0] {
				copy(mask[(i*shape[0]+c)*hw:], mk.Data[i*hw:(i+1)*hw])
			}
		}
	default:
		return fmt.Errorf("%s: mask of shape %v fits neither the images' %d×%d pixels nor their shape %v", *maskPath, mk.Shape, shape[1], shape[2], shape)
	}
	ip := diffusion.Inpainting{Mask: mask, RePaint: *repaint}
	if *clf != "" {
		m, err := loadModel(*clf)
		if err != nil {
			return err
		}
		if !slices.Equal(m.InputShape, shape) {
			return fmt.Errorf("classifier %s takes %v, the prior makes %v", *clf, m.InputShape, shape)
		}
		targets, err := classifierTargets(ctx, m.Net, x, n, *label)
		if err != nil {
			return err
		}
		ip.Guide, ip.GuideFrac, ip.GuideScale = logProbGrad(m.Net, targets), *frac, *scale
	}
	res, err := diffusion.Inpaint(ctx, p, x, n, ip, f.opt)
	if err != nil {
		return err
	}
	return f.write(res, shape, n)
}

// classifierTargets is label for every image, or each image's predicted class.
func classifierTargets(ctx context.Context, net engine.Network, x []float32, n, label int) ([]int, error) {
	if label >= net.Classes() {
		return nil, fmt.Errorf("--label %d: the classifier has %d classes", label, net.Classes())
	}
	if label >= 0 {
		t := make([]int, n)
		for i := range t {
			t[i] = label
		}
		return t, nil
	}
	return engine.Predicted(ctx, net, x, n, 0)
}

// logProbGrad is ∇ₓ log softmax(net(x))_y for each sample's target y.
func logProbGrad(net engine.Network, targets []int) diffusion.ClassifierGrad {
	return func(ctx context.Context, first int, x []float32, n int, grad []float32) error {
		k := net.Classes()
		g, err := engine.Differentiate(ctx, net, x, n, engine.InputGrad, func(lo int, logits, d []float32) {
			engine.Softmax(d, logits, k)
			for r := 0; r*k < len(logits); r++ {
				for j := range k {
					d[r*k+j] = -d[r*k+j]
				}
				d[r*k+targets[first+lo+r]]++
			}
		})
		if err != nil {
			return err
		}
		copy(grad, g)
		return nil
	}
}
