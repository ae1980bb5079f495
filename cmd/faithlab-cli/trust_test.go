package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/campaign"
)

// markerProgram writes a program that leaves a file behind when it runs.
func markerProgram(t *testing.T) (program, ran string) {
	dir := t.TempDir()
	program, ran = filepath.Join(dir, "program"), filepath.Join(dir, "it-ran")
	if err := os.WriteFile(program, []byte("#!/bin/sh\ntouch "+ran+"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return program, ran
}

func ran(path string) bool { _, err := os.Stat(path); return err == nil }

// `run` on a spec someone sent runs no program it names and writes no
// folder outside its own until the user says so on the command line;
// the campaign.yaml that `evaluate` writes (with the user's own engine,
// allowed there) is such a file for whoever it is sent to.
func TestRunAllowsWhatTheSpecAsksOnlyFromTheCommandLine(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ctx := context.Background()
	program, marker := markerProgram(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "sent.yaml")
	os.WriteFile(spec, []byte("output: run\nengine: \"torch?python="+program+"\"\ndatasets: [{id: gmm, train_samples: 100, test_samples: 20}]\nmodel: {arch: mlp, epochs: 1}\nmethods: [gradient]\nprotocols: [deletion]\n"), 0o644)
	err := runCampaign(ctx, []string{spec, "--quiet"})
	if err == nil || !strings.Contains(err.Error(), "runs the program "+program) || !strings.Contains(err.Error(), "--allow-engine") {
		t.Errorf("run: %v", err)
	}
	if ran(marker) || ran(filepath.Join(dir, "run")) {
		t.Fatal("the program ran, or the run folder was written")
	}
	if err := runCampaign(ctx, []string{spec, "--quiet", "--allow-engine"}); err == nil {
		t.Error("a program that is no Python worked as a worker")
	}
	if !ran(marker) {
		t.Error("--allow-engine: the program did not run")
	}

	// A folder outside the spec's own: refused, unless given with --out.
	elsewhere := filepath.Join(t.TempDir(), "run")
	os.WriteFile(spec, []byte("output: "+elsewhere+"\ndatasets: [{id: gmm, train_samples: 100, test_samples: 20}]\nmodel: {arch: mlp, epochs: 1}\nmethods: [gradient]\nprotocols: [{name: deletion, params: {samples: 5}}]\n"), 0o644)
	if err := runCampaign(ctx, []string{spec, "--quiet"}); err == nil || !strings.Contains(err.Error(), "outside the spec's folder") || !strings.Contains(err.Error(), "--out DIR") {
		t.Errorf("output elsewhere: %v", err)
	}
	if ran(elsewhere) {
		t.Error("the folder outside was written")
	}
	if err := runCampaign(ctx, []string{spec, "--quiet", "--out", elsewhere}); err != nil {
		t.Errorf("--out: %v", err)
	}
	if !ran(filepath.Join(elsewhere, "results.csv")) {
		t.Error("--out: no results")
	}

	// evaluate --engine is the user's own choice; its campaign.yaml,
	// run again (or by someone it was sent to), asks anew.
	program, marker = markerProgram(t)
	out := filepath.Join(t.TempDir(), "eval")
	fixture := filepath.Join(t.TempDir(), "m.flm")
	if err := runTrain(ctx, []string{"--dataset", "gmm", "--model", "mlp", "--epochs", "1", "--out", fixture}); err != nil {
		t.Fatal(err)
	}
	runEvaluate(ctx, []string{"--model", fixture, "--methods", "gradient", "--protocols", "deletion", "--out", out, "--engine", "torch?python=" + program})
	if !ran(marker) {
		t.Fatal("evaluate --engine: the user's own program did not run")
	}
	os.Remove(marker)
	if err := runCampaign(ctx, []string{filepath.Join(out, "campaign.yaml"), "--quiet"}); err == nil || !strings.Contains(err.Error(), "runs the program") {
		t.Errorf("run of evaluate's campaign.yaml: %v", err)
	}
	if ran(marker) {
		t.Error("evaluate's campaign.yaml ran its program without being allowed")
	}
}

// The line the workbench suggests for running its campaign headless
// (campaign.RunArgs) grants what the campaign asks for: its output and
// cache lie in the workbench's folders, outside the spec's.
func TestSuggestedRunLinePassesTheConsentCheck(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := filepath.Join(t.TempDir(), "work bench")
	dir := filepath.Join(root, "campaigns", "mine")
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "campaign.yaml")
	os.WriteFile(path, []byte("name: mine\noutput: "+filepath.Join(root, "runs", "mine")+"\ncache: "+filepath.Join(root, "cache")+
		"\ndatasets: [{id: gmm, train_samples: 100, test_samples: 20}]\nmodel: {arch: mlp, epochs: 1}\nmethods: [gradient]\nprotocols: [deletion]\n"), 0o644)
	c, err := campaign.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	args, err := c.RunArgs()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := parseRun([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.c.Check(plain.trust, plain.engine); err == nil {
		t.Fatal("the spec alone passes the check: the test checks nothing")
	}
	r, err := parseRun(args)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.c.Check(r.trust, r.engine); err != nil {
		t.Errorf("faithlab-cli run %q: %v", args, err)
	}
	if r.c.Spec.Output != c.Spec.Output || r.c.Spec.Cache != c.Spec.Cache {
		t.Errorf("the line moves the run: output %s cache %s, want %s and %s", r.c.Spec.Output, r.c.Spec.Cache, c.Spec.Output, c.Spec.Cache)
	}
	if line, _ := c.RunLine(); !strings.Contains(line, "'"+path+"'") || !strings.Contains(line, "--out '") {
		t.Errorf("line %s: want its paths quoted", line)
	}
}
