package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"faithlab/core/protocol"
)

// runEvaluate is the one-command campaign: it writes the spec its flags
// describe to OUT/campaign.yaml and runs it, so that the same command (or
// `faithlab-cli run OUT/campaign.yaml`) resumes it.
func runEvaluate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("evaluate", flag.ContinueOnError)
	dsRef, dopt := dataFlags(fs)
	path := fs.String("model", "", "trained model file (required)")
	methods := fs.String("methods", "gradient,ig,smoothgrad,gradxinput,random,sobel", "attribution methods (see attribute)")
	protocols := fs.String("protocols", "deletion", "protocols: "+protocolNames())
	rates := fs.String("rates", "", "drop rates for ROAR, KAR, ROAD, Eval-X (default 0.1,…,0.9)")
	post := fs.String("post", "", "post-processing of every map, e.g. abs,gaussian:1")
	reduce := fs.String("reduce", "sum", "colour channels to one map: sum, mean or max")
	epochs := fs.Int("epochs", 5, "epochs of every retraining")
	trainN := fs.Int("train-samples", 0, "use the first n training images (0: all)")
	testN := fs.Int("test-samples", 0, "use the first n test images (0: all)")
	seed := fs.Uint64("seed", 0, "seed of retraining, random maps and noise")
	out := fs.String("out", "", "run folder: campaign.yaml, results.jsonl, results.csv, diagnostics.json (required)")
	var sets multiFlag
	fs.Var(&sets, "set", "protocol parameter PROTOCOL.NAME=VALUE (JSON value), repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *path == "" {
		return errors.New("--model FILE and --out DIR are required")
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
			if err != nil {
				return fmt.Errorf("--rates: %q is not a number", f)
			}
			rateList = append(rateList, r)
		}
	}
	var protos []map[string]any
	for _, name := range strings.Split(*protocols, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		p := params[name]
		if p == nil {
			p = map[string]any{}
		}
		if _, set := p["rates"]; !set && rateList != nil && hasParam(name, "rates") {
			p["rates"] = rateList
		}
		protos = append(protos, map[string]any{"name": name, "params": p})
	}
	modelPath, err := filepath.Abs(*path)
	if err != nil {
		return err
	}
	ds := map[string]any{"id": *dsRef, "train_samples": *trainN, "test_samples": *testN}
	if _, err := os.Stat(*dsRef); err == nil {
		abs, _ := filepath.Abs(*dsRef)
		ds["id"] = abs
		ds["label"], ds["image_size"], ds["channels"] = dopt.Label, dopt.ImageSize, dopt.Channels
	}
	var meths []string
	for _, m := range strings.Split(*methods, ",") {
		meths = append(meths, strings.TrimSpace(m))
	}
	spec, err := yaml.Marshal(map[string]any{
		"name": "evaluate", "output": ".", "datasets": []any{ds}, "model": map[string]any{"file": modelPath},
		"methods": meths, "post": []string{*post}, "reduce": *reduce, "protocols": protos,
		"seeds": []uint64{*seed}, "retrain": map[string]any{"epochs": *epochs},
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	specPath := filepath.Join(*out, "campaign.yaml")
	if old, err := os.ReadFile(specPath); err == nil && string(old) != string(spec) {
		return fmt.Errorf("%s holds another evaluation (%s): give this one its own --out folder", *out, specPath)
	}
	if err := os.WriteFile(specPath, spec, 0o644); err != nil {
		return err
	}
	return runCampaign(ctx, []string{specPath})
}

func protocolNames() string {
	var n []string
	for _, p := range protocol.All() {
		n = append(n, strings.ToLower(p.Info().Name))
	}
	return strings.Join(n, ", ")
}

// hasParam reports whether the named protocol takes the parameter.
func hasParam(proto, param string) bool {
	p, err := protocol.New(proto, nil)
	if err != nil {
		return false
	}
	for _, q := range p.Info().Params {
		if q.Name == param {
			return true
		}
	}
	return false
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
