package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/train"
)

func dataFlags(fs *flag.FlagSet) (*string, *data.Options) {
	ds := fs.String("dataset", "fashion-mnist", "dataset id ("+strings.Join(data.IDs(), ", ")+") or path")
	opt := &data.Options{}
	fs.StringVar(&opt.Label, "label", "", "CSV label column, by name or index (default: last)")
	fs.IntVar(&opt.ImageSize, "image-size", 28, "image folders: resize to this side")
	fs.IntVar(&opt.Channels, "channels", 1, "image folders: 1 (grey) or 3 (RGB)")
	return ds, opt
}

// modelDataFlags are dataFlags for commands that use a model: the dataset
// defaults to the model's own, split and read as the model records, and an
// image folder is read at the model's input size and channels; a size or
// channel count given that the model does not take is an error.
func modelDataFlags(fs *flag.FlagSet) (*string, *data.Options) {
	ds := fs.String("dataset", "", "dataset id ("+strings.Join(data.IDs(), ", ")+") or path (default: the model's own, split as for its training)")
	opt := &data.Options{}
	fs.StringVar(&opt.Label, "label", "", "CSV label column, by name or index (default: last)")
	fs.IntVar(&opt.ImageSize, "image-size", 0, "image folders: resize to this side (default: the model's input size)")
	fs.IntVar(&opt.Channels, "channels", 0, "image folders: 1 (grey) or 3 (RGB) (default: the model's input channels)")
	return ds, opt
}

func kernel() gemm.Kernel {
	k, err := gemm.Best()
	if err != nil {
		fmt.Fprintf(os.Stderr, "note: %v; using %s\n", err, k.Name())
	}
	return k
}

func runTrain(ctx context.Context, args []string) error {
	fs := newFlags("train", "", "train a built-in model on a dataset and save it (GOAR's recipe unless flags say otherwise)")
	dsRef, dopt := dataFlags(fs)
	arch := fs.String("model", "goar-cnn", "architecture: "+strings.Join(model.Architectures(), ", "))
	out := fs.String("out", "", "model file to write (required; checked before training)")
	asJSON := fs.Bool("json", false, "print one JSON object with the result")
	engineSetting := engineFlag(fs)
	d := train.Config{}.Defaults()
	var cfg train.Config
	fs.IntVar(&cfg.Epochs, "epochs", 0, fmt.Sprintf("most epochs; early stopping may end sooner (default %d)", d.Epochs))
	fs.IntVar(&cfg.BatchSize, "batch", 0, fmt.Sprintf("batch size (default %d)", d.BatchSize))
	fs.Float64Var(&cfg.LR, "lr", 0, fmt.Sprintf("learning rate (default %g)", d.LR))
	fs.StringVar(&cfg.Optimizer, "optimizer", "", "adam or sgd (default "+d.Optimizer+")")
	fs.Float64Var(&cfg.Momentum, "momentum", 0, "SGD momentum")
	fs.Float64Var(&cfg.WeightDecay, "weight-decay", 0, "L2 weight decay")
	fs.StringVar(&cfg.Schedule, "schedule", "", "constant or cosine (default "+d.Schedule+")")
	fs.Float64Var(&cfg.ValFraction, "val", 0, "validation fraction for early stopping (0: 1/12 when early stopping can end the run, i.e. epochs > patience; negative: none)")
	fs.IntVar(&cfg.Patience, "patience", 0, fmt.Sprintf("early-stopping patience in epochs (default %d; negative: never)", d.Patience))
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed of initialisation, shuffling and splits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fs, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if *out == "" {
		return usageError(fs, "--out FILE is required")
	}
	if err := model.CheckWritable(*out); err != nil {
		return err
	}
	dopt.Seed = cfg.Seed
	trainSet, testSet, err := data.Open(*dsRef, *dopt)
	if err != nil {
		return err
	}
	eng, err := openEngine(ctx, *engineSetting)
	if err != nil {
		return err
	}
	defer eng.Close()
	fmt.Fprintf(os.Stderr, "training %s on %s (%d samples of %v) on the %s engine\n", *arch, trainSet.Name, trainSet.Len(), trainSet.Shape, eng)
	m, err := model.Fit{Arch: *arch, Config: cfg, Train: trainSet, Test: testSet, Kernel: kernel(), Engine: eng, Out: *out,
		Source: &model.Source{Ref: *dsRef, Options: dopt.Applied(trainSet.Shape)}}.Run(ctx, newTrainProgress(os.Stderr))
	if err != nil {
		return err
	}
	rec, ev := m.Training, m.Test
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{
			"model": *out, "arch": *arch, "dataset": trainSet.Name, "epochs": len(rec.History), "best_epoch": rec.BestEpoch,
			"stopped": rec.Stopped, "seconds": rec.Seconds, "test_accuracy": ev.Accuracy, "test_loss": ev.Loss, "seed": cfg.Seed,
			"kernel": m.Net.Kernel(), "engine": eng.String(), "faithlab_version": model.Version,
		})
	}
	why := map[string]string{"epochs": "all epochs run", "early-stopping": "stopped early"}[rec.Stopped]
	if why == "" {
		why = rec.Stopped
	}
	fmt.Printf("saved %s: test accuracy %.4f after %d epochs (%s, %.1f s)\n", *out, ev.Accuracy, len(rec.History), why, rec.Seconds)
	return nil
}

// loadModel loads a model file, an ONNX classifier or a TorchScript one
// with its description (PATH.json), and says on standard error what the user
// should know of the file (model.FileNotice).
func loadModel(path string) (*model.Model, error) {
	if n := model.FileNotice(path); n != "" {
		fmt.Fprintln(os.Stderr, "warning:", n)
	}
	m, err := readModel(path, kernel())
	if err != nil {
		return nil, err
	}
	if n := model.ONNXNotice(m); n != "" {
		fmt.Fprintln(os.Stderr, "note:", n)
	}
	if n := model.InputNotice(path); n != "" {
		fmt.Fprintln(os.Stderr, "note:", n)
	}
	return m, nil
}

// readModel reads a model file of any kind (Faithlab, ONNX, TorchScript),
// saying nothing of it.
func readModel(path string, kern gemm.Kernel) (*model.Model, error) {
	if model.IsTorchScript(path) {
		return model.LoadTorchScript(path)
	}
	return model.Load(path, kern)
}

// openModel loads a model file and opens a dataset as the model saw it in
// training (model.Data): its own dataset when dsRef is "", saying on
// standard error how an image folder's files became the model's inputs
// (model.Conversions).
func openModel(path, dsRef string, dopt *data.Options) (*model.Model, *data.Dataset, *data.Dataset, error) {
	if path == "" {
		return nil, nil, nil, errors.New("--model FILE is required")
	}
	m, err := loadModel(path)
	if err != nil {
		return nil, nil, nil, err
	}
	trainSet, testSet, err := m.Data(dsRef, *dopt)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the data for model %s: %w", path, err)
	}
	if c := model.Conversions(&m.Header, testSet); c != "" {
		fmt.Fprintln(os.Stderr, "note: images as read:", c) // the words the workbench's screens say
	}
	return m, trainSet, testSet, nil
}

func runEval(ctx context.Context, args []string) error {
	fs := newFlags("eval", "", "accuracy and per-class accuracy of a model on a dataset's test split (the split the model was trained with); with --logits, every input's logits and predicted class")
	dsRef, dopt := modelDataFlags(fs)
	path := fs.String("model", "", "model file, an ONNX classifier (.onnx, with PATH.json if it has one) or a TorchScript one (.pt) described by PATH.json (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	logitsOut := fs.String("logits", "", logitsUsage)
	engineSetting := engineFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fs, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if *logitsOut != "" {
		if err := checkLogitsOut(*logitsOut); err != nil {
			return err
		}
		// The logits need no labels: a folder of images alone is read
		// as it is, and no accuracy is claimed of it.
		dopt.Unlabelled = true
	}
	m, _, testSet, err := openModel(*path, *dsRef, dopt)
	if err != nil {
		return err
	}
	eng, err := openEngine(ctx, *engineSetting)
	if err != nil {
		return err
	}
	defer eng.Close()
	net, err := eng.Network(ctx, m)
	if err != nil {
		return err
	}
	var logits []float32
	var keep func(i int, row []float32)
	if *logitsOut != "" {
		k := net.Classes()
		logits = make([]float32, testSet.Len()*k)
		keep = func(i int, row []float32) { copy(logits[i*k:], row) }
	}
	ev, err := train.EvaluateEach(ctx, net, testSet, 512, keep)
	if err != nil {
		return err
	}
	if *logitsOut != "" {
		y := testSet.Y
		if testSet.Unlabelled {
			y = make([]int, testSet.Len())
			for i := range y {
				y[i] = -1 // no label
			}
		}
		if err := writeLogits(*logitsOut, logits, y, net.Classes()); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "logits of %d inputs × %d classes → %s (class k: %s)\n", testSet.Len(), net.Classes(), *logitsOut, classList(m.Classes))
	}
	if testSet.Unlabelled {
		if *asJSON {
			return json.NewEncoder(os.Stdout).Encode(map[string]any{"model": *path, "dataset": testSet.Name, "samples": testSet.Len(), "logits": *logitsOut, "classes": m.Classes, "labelled": false})
		}
		fmt.Printf("%s on %s: %d inputs without labels, so no accuracy; their logits and predicted classes are in %s\n", *path, testSet.Name, testSet.Len(), *logitsOut)
		return nil
	}
	if *asJSON {
		out := map[string]any{"model": *path, "dataset": testSet.Name, "accuracy": ev.Accuracy, "loss": ev.Loss,
			"samples": ev.Samples, "class_accuracy": classMap(m.Classes, ev.ClassAccuracy), "classes": m.Classes}
		if *logitsOut != "" {
			out["logits"] = *logitsOut
		}
		return json.NewEncoder(os.Stdout).Encode(out)
	}
	fmt.Printf("%s on %s: accuracy %.4f, loss %.4f (%d samples)\n", *path, testSet.Name, ev.Accuracy, ev.Loss, ev.Samples)
	absent := 0
	for i, a := range ev.ClassAccuracy {
		if slices.Max(ev.Confusion[i]) == 0 && len(m.Classes) > 10 { // a 1000-class model on a few of its classes
			absent++
			continue
		}
		fmt.Printf("  %-14s %.4f\n", m.Classes[i], a)
	}
	if absent > 0 {
		fmt.Printf("  (the other %d classes have no test samples)\n", absent)
	}
	return nil
}

func classMap(names []string, acc []float64) map[string]float64 {
	out := map[string]float64{}
	for i, a := range acc {
		out[names[i]] = a
	}
	return out
}

func runDatasets(_ context.Context, args []string) error {
	listDatasets(os.Stdout)
	return nil
}

// listDatasets writes a line for each built-in dataset: the sizes of its
// splits, its sample shape, its classes and whether it carries
// ground-truth masks, or why it cannot be opened.
func listDatasets(w io.Writer) {
	for _, id := range data.IDs() {
		s, err := data.Describe(id)
		if err != nil {
			fmt.Fprintf(w, "%-21s unavailable: %v\n", id, err)
			continue
		}
		masks := ""
		if s.Masks {
			masks = "  ground-truth masks"
		}
		fmt.Fprintf(w, "%-21s %6d train  %6d test  shape %v  %d classes%s\n", id, s.Train, s.Test, s.Shape, len(s.Classes), masks)
	}
}
