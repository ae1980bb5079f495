package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"faithlab/core/attr"
	"faithlab/core/attr/trace"
	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/model"
)

// mapRecord is written beside every maps file: what made the maps, enough
// to make them again.
type mapRecord struct {
	Method   string         `json:"method"`
	Settings map[string]any `json:"settings"`
	Post     []string       `json:"post"`
	Channels string         `json:"channels,omitempty"`
	Target   string         `json:"target"`
	Model    string         `json:"model"`
	Arch     string         `json:"arch"`
	Dataset  string         `json:"dataset"`
	Split    string         `json:"split"`
	Offset   int            `json:"offset"`
	Count    int            `json:"count"`
	Shape    []int          `json:"shape"`
	Seconds  float64        `json:"seconds"`
	Faithlab string         `json:"faithlab_version"`
	Created  time.Time      `json:"created"`
	Classes  []int          `json:"targets"`
	Trace    []trace.Result `json:"trace,omitempty"` // per image: trajectory, objective, iterations, seconds
}

// newMethod builds a method of package attr or, for trace-sa and
// trace-greedy, a TRACE explanation.
func newMethod(name string, p attr.Params, tr trace.TRACE) (attr.Method, error) {
	switch strings.ToLower(name) {
	case "trace-sa":
		tr.Algorithm = "sa"
		return tr, nil
	case "trace-greedy":
		tr.Algorithm = "greedy"
		return tr, nil
	}
	return attr.New(name, p)
}

func runAttribute(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("attribute", flag.ContinueOnError)
	dsRef, dopt := dataFlags(fs)
	path := fs.String("model", "", "model file (required)")
	method := fs.String("method", "gradient", "method: "+strings.Join(append(attr.Names(), "trace-sa", "trace-greedy"), ", "))
	out := fs.String("out", "", "maps .npy to write (required); settings go to OUT.json")
	split := fs.String("split", "test", "train or test")
	offset := fs.Int("offset", 0, "first sample")
	count := fs.Int("n", 100, "number of samples (0: all from offset)")
	target := fs.String("target", "predicted", "class to explain: predicted or label")
	reduce := fs.String("reduce", "", "reduce colour channels to one: sum, mean or max (default: keep them)")
	post := fs.String("post", "", "post-processing steps, e.g. abs,gaussian:1,normalize")
	seed := fs.Uint64("seed", 0, "seed of random methods and of splits without a test set")
	var p attr.Params
	fs.IntVar(&p.Steps, "steps", 0, "IG steps (default 25)")
	fs.StringVar(&p.Rule, "rule", "", "IG quadrature: riemann-right or trapezoid")
	baseline := fs.String("baseline", "", "IG/DeepLift baseline: zero, mean or blur")
	fs.IntVar(&p.Samples, "samples", 0, "SmoothGrad/GradientSHAP/KernelSHAP samples (default 15/25/2048)")
	fs.Float64Var(&p.NoiseFrac, "noise", 0, "SmoothGrad noise σ as a fraction of the input range (default 0.15)")
	fs.Float64Var(&p.Stdev, "stdev", 0, "GradientSHAP input noise")
	fs.StringVar(&p.Layer, "layer", "", "Grad-CAM layer (default: the last convolutional activation)")
	fs.Float64Var(&p.DropRate, "drop-rate", 0, "BlockRandom: area of the rectangle")
	fs.IntVar(&p.Grid, "grid", 0, "KernelSHAP and TRACE: patch grid side (KernelSHAP 0: every input value is a feature; TRACE default 7)")
	fs.IntVar(&p.Chunk, "chunk", 256, "inputs per engine call (bounds memory)")
	var tr trace.TRACE
	objective := fs.String("objective", "", "TRACE objective: le, mo or lemo (default lemo for SA, le for greedy)")
	fs.IntVar(&tr.Iterations, "iterations", 0, "TRACE-SA iterations K (default 5000)")
	fs.Float64Var(&tr.T0, "t0", 0, "TRACE-SA initial temperature (default 0.1, or 2 with --logit)")
	fs.Float64Var(&tr.Cooling, "cooling", 0, "TRACE-SA cooling rate η (default 0.999)")
	fs.BoolVar(&tr.GreedyInit, "greedy-init", false, "TRACE-SA: start from TRACE-Greedy-Le")
	fs.BoolVar(&tr.Logit, "logit", false, "TRACE: score logits instead of probabilities")
	fs.Float64Var(&tr.Alpha, "alpha", 0, "TRACE heatmap exponent α (default 1)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("--out MAPS.npy is required")
	}
	p.Baseline, p.Seed = attr.Baseline(*baseline), *seed
	tr.Objective, tr.Grid, tr.Reference, tr.Seed, tr.Chunk = trace.Objective(*objective), p.Grid, p.Baseline, p.Seed, p.Chunk
	steps, err := attr.ParseSteps(*post)
	if err != nil {
		return err
	}
	m, trainSet, testSet, err := openModelData(*path, *dsRef, dopt, *seed)
	if err != nil {
		return err
	}
	ds := testSet
	switch *split {
	case "train":
		ds = trainSet
	case "test":
	default:
		return fmt.Errorf("--split %q: train or test", *split)
	}
	if *offset < 0 || *offset >= ds.Len() {
		return fmt.Errorf("--offset %d outside the %d samples of %s", *offset, ds.Len(), ds.Name)
	}
	n := ds.Len() - *offset
	if *count > 0 {
		n = min(n, *count)
	}
	if p.References == nil && strings.EqualFold(*method, "gradientshap") {
		// Expected gradients draw references from the training data.
		p.References = trainSet.X[:min(100, trainSet.Len())*trainSet.Dim()]
	}
	meth, err := newMethod(*method, p, tr)
	if err != nil {
		return err
	}
	dim := ds.Dim()
	in := attr.Input{X: ds.X[*offset*dim : (*offset+n)*dim], N: n, Shape: ds.Shape}
	switch *target {
	case "predicted":
		if in.Target, err = attr.Predicted(ctx, m.Net, in.X, n, p.Chunk); err != nil {
			return err
		}
	case "label":
		in.Target = ds.Y[*offset : *offset+n]
	default:
		return fmt.Errorf("--target %q: predicted or label", *target)
	}
	t0 := time.Now()
	var traced []trace.Result
	if t, ok := meth.(trace.TRACE); ok {
		meth = recordTrace{t, &traced}
	}
	maps, err := attr.Run(ctx, meth, m.Net, in)
	if err != nil {
		return err
	}
	maps = attr.Apply(maps, steps)
	if *reduce != "" {
		if maps, err = attr.ReduceChannels(maps, *reduce); err != nil {
			return err
		}
	}
	shape := maps.Shape
	if shape[1] == 1 {
		shape = []int{shape[0], shape[2], shape[3]}
	}
	if err := data.SaveNPY(*out, shape, maps.Data); err != nil {
		return err
	}
	rec := mapRecord{Trace: traced, Method: meth.Name(), Settings: meth.Settings(), Channels: *reduce, Target: *target,
		Model: *path, Arch: m.Arch, Dataset: ds.Name, Split: *split, Offset: *offset, Count: n, Shape: shape,
		Seconds: time.Since(t0).Seconds(), Faithlab: model.Version, Created: time.Now().UTC(), Classes: in.Target}
	for _, s := range steps {
		rec.Post = append(rec.Post, s.String())
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := data.WriteFileAtomic(*out+".json", b); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %d maps of %v in %.2f s → %s\n", meth.Name(), n, shape[1:], rec.Seconds, *out)
	return nil
}

// recordTrace runs a TRACE method and keeps its per-image results.
type recordTrace struct {
	trace.TRACE
	results *[]trace.Result
}

func (r recordTrace) Attribute(ctx context.Context, net engine.Network, in attr.Input) (attr.Maps, error) {
	maps, res, err := r.Explain(ctx, net, in)
	*r.results = res
	return maps, err
}
