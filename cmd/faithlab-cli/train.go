package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
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

func kernel() gemm.Kernel {
	k, err := gemm.Best()
	if err != nil {
		fmt.Fprintf(os.Stderr, "note: %v; using %s\n", err, k.Name())
	}
	return k
}

func runTrain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	dsRef, dopt := dataFlags(fs)
	arch := fs.String("model", "goar-cnn", "architecture: goar-cnn, mlp")
	out := fs.String("out", "", "model file to write (required)")
	asJSON := fs.Bool("json", false, "print one JSON object with the result")
	var cfg train.Config
	fs.IntVar(&cfg.Epochs, "epochs", 100, "most epochs (early stopping may end sooner)")
	fs.IntVar(&cfg.BatchSize, "batch", 256, "batch size")
	fs.Float64Var(&cfg.LR, "lr", 3e-4, "learning rate")
	fs.StringVar(&cfg.Optimizer, "optimizer", "adam", "adam or sgd")
	fs.Float64Var(&cfg.Momentum, "momentum", 0, "SGD momentum")
	fs.Float64Var(&cfg.WeightDecay, "weight-decay", 0, "L2 weight decay")
	fs.StringVar(&cfg.Schedule, "schedule", "constant", "constant or cosine")
	fs.Float64Var(&cfg.ValFraction, "val", 0, "validation fraction for early stopping (0: 1/12 when early stopping can end the run, i.e. epochs > patience; negative: none)")
	fs.IntVar(&cfg.Patience, "patience", 5, "early-stopping patience in epochs (negative: never)")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed of initialisation, shuffling and splits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("--out FILE is required")
	}
	dopt.Seed = cfg.Seed
	trainSet, testSet, err := data.Open(*dsRef, *dopt)
	if err != nil {
		return err
	}
	m, err := model.New(*arch, trainSet, kernel(), cfg.Seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "training %s on %s (%d samples of %v) with %s\n", *arch, trainSet.Name, trainSet.Len(), trainSet.Shape, m.Net.Kernel())
	rec, err := train.Train(ctx, m.Net, trainSet, cfg, func(p train.Progress) {
		if p.EpochDone {
			e := p.Last
			val := ""
			if e.ValLoss != 0 {
				val = fmt.Sprintf("  val_loss %.4f  val_acc %.4f", e.ValLoss, e.ValAcc)
			}
			fmt.Fprintf(os.Stderr, "epoch %3d  loss %.4f  acc %.4f%s  %.0f img/s\n", e.Epoch, e.Loss, e.Accuracy, val, e.ImagesSec)
		}
	})
	if err != nil {
		return err
	}
	m.Training = &rec
	ev, err := train.Evaluate(ctx, m.Net, testSet, 512)
	if err != nil {
		return err
	}
	if err := m.Save(*out); err != nil {
		return err
	}
	res := map[string]any{
		"model": *out, "arch": *arch, "dataset": trainSet.Name, "epochs": len(rec.History), "best_epoch": rec.BestEpoch,
		"stopped": rec.Stopped, "seconds": rec.Seconds, "test_accuracy": ev.Accuracy, "test_loss": ev.Loss, "seed": cfg.Seed,
		"kernel": m.Net.Kernel(), "faithlab_version": model.Version,
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	fmt.Printf("saved %s: test accuracy %.4f after %d epochs (%s, %.1f s)\n", *out, ev.Accuracy, len(rec.History), rec.Stopped, rec.Seconds)
	return nil
}

// openModelData loads a model file and a dataset's splits and checks that
// they fit each other; seed splits datasets that have no test split (use the
// training seed to get the same split).
func openModelData(path, dsRef string, dopt *data.Options, seed uint64) (*model.Model, *data.Dataset, *data.Dataset, error) {
	if path == "" {
		return nil, nil, nil, errors.New("--model FILE is required")
	}
	m, err := model.Load(path, kernel())
	if err != nil {
		return nil, nil, nil, err
	}
	dopt.Seed = seed
	trainSet, testSet, err := data.Open(dsRef, *dopt)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := m.Prepare(testSet); err != nil {
		return nil, nil, nil, err
	}
	return m, trainSet, testSet, nil
}

func runEval(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	dsRef, dopt := dataFlags(fs)
	path := fs.String("model", "", "model file (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	seed := fs.Uint64("seed", 0, "seed of the train/test split for sets without one (use the training seed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m, _, testSet, err := openModelData(*path, *dsRef, dopt, *seed)
	if err != nil {
		return err
	}
	ev, err := train.Evaluate(ctx, m.Net, testSet, 512)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"model": *path, "dataset": testSet.Name,
			"accuracy": ev.Accuracy, "loss": ev.Loss, "samples": ev.Samples, "class_accuracy": classMap(m.Classes, ev.ClassAccuracy)})
	}
	fmt.Printf("%s on %s: accuracy %.4f, loss %.4f (%d samples)\n", *path, testSet.Name, ev.Accuracy, ev.Loss, ev.Samples)
	for i, a := range ev.ClassAccuracy {
		fmt.Printf("  %-14s %.4f\n", m.Classes[i], a)
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
	for _, id := range data.IDs() {
		tr, te, err := data.Open(id, data.Options{})
		if err != nil {
			fmt.Printf("%-14s unavailable: %v\n", id, err)
			continue
		}
		fmt.Printf("%-14s %6d train  %6d test  shape %v  %d classes\n", id, tr.Len(), te.Len(), tr.Shape, len(tr.Classes))
	}
	return nil
}
