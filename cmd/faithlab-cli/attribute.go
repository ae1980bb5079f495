package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"faithlab/core/attr/trace"
	"faithlab/core/campaign"
	"faithlab/core/data"
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
	dsRef, dopt := dataFlags(fs)
	path := fs.String("model", "", "model file (required)")
	method := fs.String("method", "gradient", "method: "+strings.Join(methodNames(), ", "))
	out := fs.String("out", "", "maps .npy to write (required); settings go to OUT.json")
	split := fs.String("split", "test", "train or test")
	offset := fs.Int("offset", 0, "first sample")
	count := fs.Int("n", 100, "number of samples (0: all from offset)")
	target := fs.String("target", "predicted", "class to explain: predicted or label")
	reduce := fs.String("reduce", "", "reduce colour channels to one: sum, mean or max (default: keep them)")
	post := fs.String("post", "", "post-processing steps, e.g. abs,gaussian:1,normalize")
	seed := fs.Uint64("seed", 0, "seed of random methods and of splits without a test set")
	chunk := fs.Int("chunk", 256, "inputs per engine call (bounds memory)")
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
	if *split != "train" && *split != "test" {
		return fmt.Errorf("--split %q: train or test", *split)
	}
	if *count < 0 {
		return fmt.Errorf("--n %d: want 0 (all) or more", *count)
	}
	if *chunk < 1 {
		return fmt.Errorf("--chunk %d: want at least 1", *chunk)
	}
	p := params()
	if err, bad := p[""].(error); bad {
		return err
	}
	m, trainSet, testSet, err := openModelData(*path, *dsRef, dopt, *seed)
	if err != nil {
		return err
	}
	ds := testSet
	if *split == "train" {
		ds = trainSet
	}
	ex, err := campaign.Attribute(ctx, m, trainSet, ds, campaign.Request{Method: *method, Params: p, Post: *post, Reduce: *reduce,
		Offset: *offset, Count: *count, Target: *target, Seed: *seed, Chunk: *chunk})
	if err != nil {
		return err
	}
	shape := ex.Maps.Shape
	if shape[1] == 1 {
		shape = []int{shape[0], shape[2], shape[3]}
	}
	if err := data.SaveNPY(*out, shape, ex.Maps.Data); err != nil {
		return err
	}
	rec := mapRecord{Trace: ex.Trace, Method: ex.Method, Settings: ex.Settings, Post: ex.Post, Channels: *reduce, Target: *target,
		Model: *path, Arch: m.Arch, Dataset: ds.Name, Split: *split, Offset: *offset, Count: ex.Maps.N(), Shape: shape,
		Seconds: ex.Elapsed.Seconds(), Faithlab: model.Version, Created: time.Now().UTC(), Classes: ex.Targets}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := data.WriteFileAtomic(*out+".json", b); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %d maps of %v in %.2f s → %s\n", ex.Method, ex.Maps.N(), shape[1:], rec.Seconds, *out)
	return nil
}

func methodNames() []string {
	var names []string
	for _, m := range campaign.Methods() {
		names = append(names, m.Name)
	}
	return names
}
