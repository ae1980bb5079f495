package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"faithlab/core/campaign"
	"faithlab/core/param"
	"faithlab/core/report"
)

// methodFlags adds a flag for every parameter of every method (from the
// methods' own descriptions: `--steps`, `--noise-frac`, …) and returns the
// parameters the command line set, by name, once parsed.
func methodFlags(fs *flag.FlagSet) func() map[string]any {
	set := map[string]any{}
	var errs []error
	seen := map[string]bool{}
	for _, info := range campaign.Methods() {
		for _, p := range info.Params {
			if seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			var users []string
			for _, m := range campaign.Methods() {
				for _, q := range m.Params {
					if q.Name == p.Name {
						users = append(users, m.Name)
					}
				}
			}
			name, kind := p.Name, p.Kind
			usage := fmt.Sprintf("%s (%s)", p.Doc, strings.Join(users, ", "))
			if len(p.Choices) > 0 {
				usage += ": " + strings.Join(p.Choices, ", ")
			}
			parse := func(v string) error {
				var x any
				var err error
				switch kind {
				case "int":
					x, err = strconv.Atoi(v)
				case "float64":
					x, err = strconv.ParseFloat(v, 64)
				case "bool":
					x, err = strconv.ParseBool(v)
				default:
					x = v
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("--%s %q: not a %s", strings.ReplaceAll(name, "_", "-"), v, kind))
					return nil
				}
				if f, ok := x.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
					errs = append(errs, fmt.Errorf("--%s %s: want a finite number", strings.ReplaceAll(name, "_", "-"), v))
					return nil
				}
				set[name] = x
				return nil
			}
			flagName := strings.ReplaceAll(name, "_", "-")
			if kind == "bool" {
				fs.BoolFunc(flagName, usage, parse)
			} else {
				fs.Func(flagName, usage, parse)
			}
			if name == "noise_frac" {
				fs.Func("noise", "the same as --noise-frac", parse)
			}
		}
	}
	return func() map[string]any {
		if len(errs) > 0 {
			return map[string]any{"": errs[0]}
		}
		return set
	}
}

func runAttribute(ctx context.Context, args []string) error {
	fs := newFlags("attribute", "", "compute attribution maps for a model on a dataset and save them as .npy, with a .json record")
	dsRef, dopt := modelDataFlags(fs)
	path := fs.String("model", "", "model file, an ONNX classifier (.onnx, with PATH.json if it has one) or a TorchScript one (.pt) described by PATH.json (required)")
	engineSetting := engineFlag(fs)
	method := fs.String("method", "gradient", "method: "+strings.Join(methodNames(), ", "))
	out := fs.String("out", "", "maps .npy to write (required); what made them goes to OUT.json")
	var q campaign.Request
	fs.StringVar(&q.Split, "split", "test", "train or test")
	fs.IntVar(&q.Offset, "offset", 0, "first sample")
	fs.IntVar(&q.Count, "n", 100, "number of samples (0: all from offset)")
	fs.StringVar(&q.Target, "target", "predicted", "class to explain: predicted or label")
	fs.StringVar(&q.Reduce, "reduce", "", "reduce colour channels to one: sum, mean or max (default: keep them)")
	fs.StringVar(&q.Post, "post", "", "post-processing steps, e.g. abs,gaussian:1,normalize")
	fs.Uint64Var(&q.Seed, "seed", 0, "seed of random methods")
	fs.IntVar(&q.Chunk, "chunk", 256, "inputs per engine call (bounds memory)")
	params := methodFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fs, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if *out == "" {
		return usageError(fs, "--out MAPS.npy is required")
	}
	if q.Count < 0 {
		return fmt.Errorf("--n %d: want 0 (all) or more", q.Count)
	}
	if q.Chunk < 1 {
		return fmt.Errorf("--chunk %d: want at least 1", q.Chunk)
	}
	if q.Offset < 0 {
		return fmt.Errorf("--offset %d: want 0 or more", q.Offset)
	}
	p := params()
	if err, bad := p[""].(error); bad {
		return err
	}
	if err := checkMethodFlags(*method, p); err != nil {
		return err
	}
	q.Method, q.Params = *method, p
	dopt.Unlabelled = q.Target == "predicted" // a folder of images alone: explained at the predicted class
	m, trainSet, testSet, err := openModel(*path, *dsRef, dopt)
	if err != nil {
		return err
	}
	if q.Engine, err = openEngine(ctx, *engineSetting); err != nil {
		return err
	}
	defer q.Engine.Close()
	ex, err := campaign.Attribute(ctx, m, trainSet, testSet, q)
	if err != nil {
		return err
	}
	if err := ex.Save(*out, *path, m.Arch); err != nil {
		return err
	}
	short := ""
	if q.Count > ex.Maps.N() {
		short = fmt.Sprintf(" (the split holds %d from --offset %d, not %d)", ex.Maps.N(), q.Offset, q.Count)
	}
	fmt.Fprintf(os.Stderr, "%s: %s of %v%s in %.2f s → %s\n", ex.Method, report.Count(ex.Maps.N(), "map"), ex.Maps.Shape[1:], short, ex.Elapsed.Seconds(), *out)
	return nil
}

func methodNames() []string {
	var names []string
	for _, m := range campaign.Methods() {
		names = append(names, m.Name)
	}
	return names
}

// checkMethodFlags checks the numbers the command line gave a method's
// parameters against the ranges the method states, before any model or
// data is loaded, and names the flag in the error. Parameters the method
// does not take, and unknown methods, are left to the method's own checks.
func checkMethodFlags(method string, set map[string]any) error {
	for _, info := range campaign.Methods() {
		if !strings.EqualFold(info.Name, method) {
			continue
		}
		for _, p := range info.Params {
			v, ok := set[p.Name]
			if !ok || p.Range == "" {
				continue
			}
			var x float64
			switch v := v.(type) {
			case int:
				x = float64(v)
			case float64:
				x = v
			default:
				continue
			}
			if in, err := param.Within(x, p.Range); err == nil && !in {
				return fmt.Errorf("--%s %v: %s takes a value %s", strings.ReplaceAll(p.Name, "_", "-"), v, info.Name, param.Describe(p.Range))
			}
		}
	}
	return nil
}
