package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"faithlab/core/attr"
	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/model"
	"faithlab/core/perturb"
	"faithlab/core/protocol"
	"faithlab/core/train"
)

func runImpute(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("impute", flag.ContinueOnError)
	method := fs.String("method", "road", "zero, mean, blur or road")
	noise := fs.Float64("noise", 0.01, "road: standard deviation of the noise added to imputed pixels")
	sigma := fs.Float64("sigma", 5, "blur: Gaussian σ in pixels")
	seed := fs.Uint64("seed", 0, "seed of the road noise")
	in := fs.String("image", "", "image .npy, float32 (C,H,W) or (H,W) (required)")
	maskPath := fs.String("mask", "", "mask .npy (H,W): 1 kept, 0 removed (required)")
	out := fs.String("out", "", "imputed image .npy to write (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *maskPath == "" || *out == "" {
		return errors.New("--image, --mask and --out are required")
	}
	spec := *method
	switch spec {
	case "road":
		spec += ":" + strconv.FormatFloat(*noise, 'g', -1, 64)
	case "blur":
		spec += ":" + strconv.FormatFloat(*sigma, 'g', -1, 64)
	}
	ref, err := perturb.ParseReference(spec, nil)
	if err != nil {
		return fmt.Errorf("--method: %w", err)
	}
	img, err := data.LoadNPY(*in)
	if err != nil {
		return err
	}
	mask, err := data.LoadNPY(*maskPath)
	if err != nil {
		return err
	}
	shape := img.Shape
	if len(shape) == 2 {
		shape = []int{1, shape[0], shape[1]}
	}
	if len(shape) != 3 {
		return fmt.Errorf("%s: shape %v, want (C,H,W) or (H,W)", *in, img.Shape)
	}
	if len(mask.Shape) != 2 || mask.Shape[0] != shape[1] || mask.Shape[1] != shape[2] {
		return fmt.Errorf("%s: mask shape %v does not match the image's %d×%d (%s)", *maskPath, mask.Shape, shape[1], shape[2], *in)
	}
	if err := engine.CheckInput(img.Data, 1, shape); err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	if err := perturb.FillAll(ctx, ref, img.Data, shape, mask.Data, *seed, 0); err != nil {
		return fmt.Errorf("%s with %s: %w", *in, *maskPath, err)
	}
	return data.SaveNPY(*out, img.Shape, img.Data)
}

// evalRow is one line of results.jsonl: a protocol's result for a method,
// with what made it.
type evalRow struct {
	protocol.Result
	Dataset  string    `json:"dataset"`
	Model    string    `json:"model"`
	Post     string    `json:"post"`
	Seed     uint64    `json:"seed"`
	Seconds  float64   `json:"seconds"`
	Faithlab string    `json:"faithlab_version"`
	Finished time.Time `json:"finished"`
}

func runEvaluate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("evaluate", flag.ContinueOnError)
	dsRef, dopt := dataFlags(fs)
	path := fs.String("model", "", "trained model file (required)")
	methods := fs.String("methods", "gradient,ig,smoothgrad,gradxinput,random,sobel", "attribution methods (see attribute)")
	protocols := fs.String("protocols", "deletion", "protocols: "+protocolNames())
	rates := fs.String("rates", "", "drop rates for ROAR, KAR, ROAD, Eval-X (default 0.1,…,0.9)")
	post := fs.String("post", "", "post-processing of every map, e.g. abs,gaussian:1")
	reduce := fs.String("reduce", "sum", "colour channels to one map: sum, mean or max")
	epochs := fs.Int("epochs", 5, "epochs of every retraining (the recipe is the model's own otherwise)")
	trainN := fs.Int("train-samples", 0, "use the first n training images (0: all)")
	testN := fs.Int("test-samples", 0, "use the first n test images (0: all)")
	seed := fs.Uint64("seed", 0, "seed of retraining, random maps and noise")
	out := fs.String("out", "", "folder for results.jsonl, results.csv and cached maps (required)")
	var sets multiFlag
	fs.Var(&sets, "set", "protocol parameter PROTOCOL.NAME=VALUE (JSON value), repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("--out DIR is required")
	}
	steps, err := attr.ParseSteps(*post)
	if err != nil {
		return err
	}
	params := map[string]map[string]any{}
	for _, s := range sets {
		key, val, ok := strings.Cut(s, "=")
		pname, name, ok2 := strings.Cut(key, ".")
		if !ok || !ok2 {
			return fmt.Errorf("--set %q: want PROTOCOL.NAME=VALUE", s)
		}
		var v any
		if json.Unmarshal([]byte(val), &v) != nil {
			v = val // a bare string
		}
		pname = strings.ToLower(pname)
		if params[pname] == nil {
			params[pname] = map[string]any{}
		}
		params[pname][name] = v
	}
	var rateList []float64
	if *rates != "" {
		for _, f := range strings.Split(*rates, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !(r > 0 && r < 1) {
				return fmt.Errorf("--rates: %q is not a drop rate in (0, 1)", f)
			}
			rateList = append(rateList, r)
		}
	}
	var protos []protocol.Protocol
	for _, name := range strings.Split(*protocols, ",") {
		name = strings.TrimSpace(name)
		p := params[strings.ToLower(name)]
		if p == nil {
			p = map[string]any{}
		}
		switch strings.ToLower(name) {
		case "roar", "kar", "road", "evalx":
			if _, set := p["rates"]; !set && rateList != nil {
				p["rates"] = rateList
			}
		}
		pr, err := protocol.New(name, p)
		if err != nil {
			return err
		}
		protos = append(protos, pr)
	}
	m, trainSet, testSet, err := openModelData(*path, *dsRef, dopt, *seed)
	if err != nil {
		return err
	}
	if *trainN > 0 && *trainN < trainSet.Len() {
		trainSet = trainSet.Subset(seq(*trainN))
	}
	if *testN > 0 && *testN < testSet.Len() {
		testSet = testSet.Subset(seq(*testN))
	}
	if err := os.MkdirAll(filepath.Join(*out, "maps"), 0o755); err != nil {
		return err
	}
	resultsPath := filepath.Join(*out, "results.jsonl")
	done, err := finished(resultsPath)
	if err != nil {
		return err
	}
	var recipe train.Config
	if m.Training != nil {
		recipe = m.Training.Config
	}
	recipe.Epochs, recipe.Seed, recipe.ValFraction = *epochs, *seed, 0
	env := &protocol.Env{Net: m.Net, Train: trainSet, Test: testSet, Recipe: recipe, Seed: *seed,
		NewNet: func() (engine.Network, error) {
			nm, err := model.New(m.Arch, trainSet, kernel(), *seed)
			if err != nil {
				return nil, err
			}
			return nm.Net, nil
		},
		Progress: progressPrinter()}
	if perClass, err := knownTruth(m, testSet); err == nil {
		truths := map[string][]float32{}
		env.Truth = func(ctx context.Context, split string) ([]float32, error) {
			if t, ok := truths[split]; ok {
				return t, nil
			}
			ds := map[string]*data.Dataset{"train": trainSet, "test": testSet}[split]
			target, err := attr.Predicted(ctx, m.Net, ds.X, ds.Len(), 1024)
			if err != nil {
				return nil, err
			}
			t, err := protocol.ClassTruth(perClass, target)
			truths[split] = t
			return t, err
		}
	} else if wantsTruth(protos) {
		return fmt.Errorf("GroundTruth: %w", err)
	}
	for _, name := range strings.Split(*methods, ",") {
		meth, err := attr.New(strings.TrimSpace(name), attr.Params{Seed: *seed, Chunk: 256})
		if err != nil {
			return err
		}
		label := meth.Name()
		if *post != "" {
			label += "+" + *post
		}
		cache := map[string][]float32{}
		env.Method = label
		env.Maps = func(ctx context.Context, split string) ([]float32, error) {
			if m, ok := cache[split]; ok {
				return m, nil
			}
			ds := map[string]*data.Dataset{"train": trainSet, "test": testSet}[split]
			file := filepath.Join(*out, "maps", fmt.Sprintf("%s_%s_%d.npy", strings.ReplaceAll(label, ":", "-"), split, ds.Len()))
			maps, err := loadOrAttribute(ctx, file, meth, steps, *reduce, m.Net, ds)
			if err == nil {
				cache[split] = maps
			}
			return maps, err
		}
		for _, p := range protos {
			pname := p.Info().Name
			if done[label+"\x00"+pname] {
				fmt.Fprintf(os.Stderr, "%s %s: already in %s\n", label, pname, resultsPath)
				continue
			}
			t0 := time.Now()
			fmt.Fprintf(os.Stderr, "%s %s …\n", label, pname)
			res, err := p.Run(ctx, env)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", pname, label, err)
			}
			row := evalRow{Result: res, Dataset: testSet.Name, Model: *path, Post: *post, Seed: *seed,
				Seconds: time.Since(t0).Seconds(), Faithlab: model.Version, Finished: time.Now().UTC()}
			if err := appendJSONL(resultsPath, row); err != nil {
				return err
			}
			for _, s := range res.Scalars {
				fmt.Fprintf(os.Stderr, "  %-20s %8.4f (%s is better)\n", s.Name, s.Value, s.Better)
			}
		}
	}
	rows, err := readRows(resultsPath)
	if err != nil {
		return err
	}
	if err := writeTidyCSV(rows, filepath.Join(*out, "results.csv")); err != nil {
		return err
	}
	return writeDiagnostics(rows, filepath.Join(*out, "diagnostics.json"))
}

// diagnostic is the DPI paper's check of one retraining protocol: how much
// of its accuracy the masks' total variation alone explains (Table 3).
type diagnostic struct {
	Protocol  string             `json:"protocol"`
	Curve     string             `json:"curve"`
	Fit       protocol.Fit       `json:"fit"`
	Points    []protocol.TVPoint `json:"points"`
	Explained string             `json:"explained"`
}

// writeDiagnostics fits accuracy against mask total variation over all
// methods and rates of each protocol in the rows, prints the R² and writes
// the fits, with every protocol score's correlation across methods with
// ground-truth agreement where the rows have GroundTruth results.
func writeDiagnostics(rows []evalRow, out string) error {
	results := make([]protocol.Result, len(rows))
	for i, r := range rows {
		results[i] = r.Result
	}
	var diags []diagnostic
	for _, c := range []struct{ proto, acc, tv string }{
		{"ROAR", "accuracy", "mask_tv"}, {"KAR", "accuracy", "mask_tv"}, {"EvalX", "accuracy", "mask_tv"},
		{"ROAD", "accuracy_morf", "mask_tv_morf"}, {"ROAD", "accuracy_lerf", "mask_tv_lerf"},
	} {
		var of []protocol.Result
		for _, r := range results {
			if r.Protocol == c.proto {
				of = append(of, r)
			}
		}
		pts := protocol.TVPoints(of, c.acc, c.tv)
		fit, err := protocol.TVFit(pts)
		if err != nil {
			continue // fewer than two points, or one TV value
		}
		d := diagnostic{Protocol: c.proto, Curve: c.acc, Fit: fit, Points: pts,
			Explained: fmt.Sprintf("mask total variation alone explains %.0f%% of the variance of %s %s", 100*fit.R2, c.proto, c.acc)}
		fmt.Fprintf(os.Stderr, "%s: accuracy = %.4g·TV + %.4g, R² %.3f over %d (method, rate) points\n", c.proto+" "+c.acc, fit.Slope, fit.Intercept, fit.R2, fit.N)
		diags = append(diags, d)
	}
	var corr []protocol.TruthCorrelation
	for _, c := range protocol.CorrelateWithTruth(results) {
		if math.IsNaN(c.R) {
			continue // a constant score or agreement: no correlation
		}
		corr = append(corr, c)
		if c.Truth == "fa" || c.Truth == "rc" {
			fmt.Fprintf(os.Stderr, "%s %s vs ground-truth %s: Pearson r %+.2f over %d methods\n", c.Protocol, c.Score, c.Truth, c.R, c.Methods)
		}
	}
	j, err := json.MarshalIndent(struct {
		TVFits []diagnostic                `json:"tv_fits"`
		Truth  []protocol.TruthCorrelation `json:"truth_correlations"`
	}{diags, corr}, "", "  ")
	if err != nil {
		return err
	}
	return data.WriteFileAtomic(out, j)
}

// loadOrAttribute returns the H×W maps of ds from file, or computes them
// (method, post-processing, channel reduction) and saves them there.
func loadOrAttribute(ctx context.Context, file string, meth attr.Method, steps []attr.Step, reduce string, net engine.Network, ds *data.Dataset) ([]float32, error) {
	fs := protocol.FeatureShape(ds.Shape)
	hw := fs[1] * fs[2]
	if a, err := data.LoadNPY(file); err == nil && len(a.Data) == ds.Len()*hw {
		return a.Data, nil
	}
	t0 := time.Now()
	fmt.Fprintf(os.Stderr, "  %s maps of %d %s images …", meth.Name(), ds.Len(), ds.Name)
	in := attr.Input{X: ds.X, N: ds.Len(), Shape: ds.Shape}
	var err error
	if in.Target, err = attr.Predicted(ctx, net, in.X, in.N, 1024); err != nil {
		return nil, err
	}
	maps, err := attr.Run(ctx, meth, net, in)
	if err != nil {
		return nil, err
	}
	maps = attr.Apply(maps, steps)
	if maps.Shape[1] > 1 && fs[2] == ds.Shape[2] { // colour images; tabular features stay apart
		if maps, err = attr.ReduceChannels(maps, reduce); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(os.Stderr, " %.1f s\n", time.Since(t0).Seconds())
	return maps.Data, data.SaveNPY(file, []int{ds.Len(), fs[1], fs[2]}, maps.Data)
}

// readRows reads results.jsonl; a missing file has no rows.
func readRows(path string) ([]evalRow, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rows []evalRow
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for line := 1; sc.Scan(); line++ {
		var r evalRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w (delete the line to recompute it)", path, line, err)
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

// finished lists the (method, protocol) pairs already in results.jsonl, so
// that a re-run after an interruption does only what is missing.
func finished(path string) (map[string]bool, error) {
	rows, err := readRows(path)
	done := map[string]bool{}
	for _, r := range rows {
		done[r.Method+"\x00"+r.Protocol] = true
	}
	return done, err
}

// appendJSONL appends one JSON line and syncs it to disk.
func appendJSONL(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeTidyCSV writes every scalar and curve point of the rows as one CSV
// row: dataset, model, method, post, protocol, metric, x, value, seed.
func writeTidyCSV(rows []evalRow, out string) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"dataset", "model", "method", "post", "protocol", "metric", "x", "value", "seed"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rows {
		head := []string{r.Dataset, r.Model, r.Method, r.Post, r.Protocol}
		seed := strconv.FormatUint(r.Seed, 10)
		for _, s := range r.Scalars {
			w.Write(append(slices.Clone(head), s.Name, "", f(s.Value), seed))
		}
		for _, c := range r.Curves {
			for j := range c.X {
				w.Write(append(slices.Clone(head), c.Name, f(c.X[j]), f(c.Y[j]), seed))
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return data.WriteFileAtomic(out, buf.Bytes())
}

// progressPrinter shows a protocol's progress on one rewritten stderr line.
func progressPrinter() func(protocol.Progress) {
	last := time.Time{}
	return func(p protocol.Progress) {
		if time.Since(last) < 500*time.Millisecond && p.Done != p.Total {
			return
		}
		last = time.Now()
		if p.Train != nil {
			fmt.Fprintf(os.Stderr, "\r  %-40.40s epoch %d/%d batch %d/%d loss %.3f   ", p.Stage, p.Train.Epoch, p.Train.Epochs, p.Train.Batch, p.Train.Batches, p.Train.Loss)
			return
		}
		fmt.Fprintf(os.Stderr, "\r  %-40.40s %d/%d%30s\r", p.Stage, p.Done, p.Total, "")
	}
}

func protocolNames() string {
	var n []string
	for _, p := range protocol.All() {
		n = append(n, strings.ToLower(p.Info().Name))
	}
	return strings.Join(n, ", ")
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// knownTruth is the ground-truth attribution of each class when the problem
// has one: a linear model's weights (what the model does, exactly), else
// the data generator's (what tells the classes apart).
func knownTruth(m *model.Model, ds *data.Dataset) ([][]float32, error) {
	t, err := protocol.LinearTruth(m.Net)
	if err != nil && ds.Truth != nil {
		return ds.Truth, nil
	}
	return t, err
}

func wantsTruth(protos []protocol.Protocol) bool {
	for _, p := range protos {
		if p.Info().Category == "ground-truth" {
			return true
		}
	}
	return false
}
