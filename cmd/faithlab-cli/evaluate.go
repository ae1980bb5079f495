package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"faithlab/core/campaign"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/spec"
)

// runEvaluate is the one-command campaign: it writes the spec its flags
// describe to OUT/campaign.yaml and runs it, so that the same command (or
// `faithlab-cli run OUT/campaign.yaml`) resumes it.
func runEvaluate(ctx context.Context, args []string) error {
	fs := newFlags("evaluate", "", "a one-command campaign: evaluate attribution methods of a trained model under protocols; OUT/campaign.yaml records it, and the same command (or `run OUT/campaign.yaml`) resumes it")
	dsRef, dopt := modelDataFlags(fs)
	path := fs.String("model", "", "trained model file, an ONNX classifier (.onnx, with PATH.json if it has one) or a TorchScript one (.pt) described by PATH.json (required)")
	engineSetting := engineFlag(fs)
	methods := fs.String("methods", "gradient,ig,smoothgrad,gradxinput,random,sobel", "attribution methods: "+strings.Join(methodNames(), ", "))
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
	if *dsRef == "" {
		// As eval and attribute: the dataset the model was trained on.
		m, err := readModel(*path, gemm.Gonum{})
		if err != nil {
			return err
		}
		if *dsRef, err = m.DataRef(""); err != nil {
			return fmt.Errorf("model %s does not record the dataset it was trained on: name one with --dataset", *path)
		}
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
	s := &spec.Spec{Name: "evaluate", Output: ".", Post: []string{*post}, Reduce: *reduce, Seeds: []uint64{*seed},
		Retrain: spec.Retrain{Epochs: *epochs}}
	if *engineSetting != "native" {
		s.Engine = *engineSetting
	}
	for _, name := range strings.Split(*protocols, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		p := params[name]
		if _, set := p["rates"]; !set && rateList != nil && hasParam(name, "rates") {
			if p == nil {
				p = map[string]any{}
			}
			p["rates"] = rateList
		}
		s.Protocols = append(s.Protocols, spec.Protocol{Name: name, Params: p})
	}
	for _, m := range strings.Split(*methods, ",") {
		s.Methods = append(s.Methods, spec.Method{Name: strings.TrimSpace(m)})
	}
	var err error
	if s.Model.File, err = filepath.Abs(*path); err != nil {
		return err
	}
	ds := spec.Dataset{Ref: *dsRef, TrainSamples: *trainN, TestSamples: *testN}
	if _, err := os.Stat(*dsRef); err == nil {
		ds.Ref, _ = filepath.Abs(*dsRef)
		ds.Options = *dopt
	}
	s.Datasets = []spec.Dataset{ds}
	c, _, err := campaign.Save(*out, s)
	if err != nil {
		return err
	}
	// The engine, the model, the dataset (named, or the model's own) and
	// the folder are the user's own, from this command line.
	trust := campaign.Trust{Engines: []string{s.Engine}, Folders: c.DatasetPaths()}.WithScripts(s.Model.File)
	err = runLoaded(ctx, c, job.Shard{}, false, "", trust, false)
	if err != nil && !errors.Is(err, errStopped) {
		c.Forget() // refused before it began: the folder as it was
	}
	return err
}

func protocolNames() string {
	var n []string
	for _, p := range campaign.Protocols() {
		n = append(n, strings.ToLower(p.Name))
	}
	return strings.Join(n, ", ")
}

// hasParam reports whether the named protocol takes the parameter.
func hasParam(proto, param string) bool {
	for _, p := range campaign.Protocols() {
		if strings.EqualFold(p.Name, proto) {
			for _, q := range p.Params {
				if q.Name == param {
					return true
				}
			}
		}
	}
	return false
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
