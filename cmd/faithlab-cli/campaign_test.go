package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"faithlab/core/store"
)

// TestMain lets a test run this binary as faithlab-cli itself, so that it
// can kill it with SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv("FAITHLAB_CLI_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const campaignSpec = `name: kill-test
output: run
datasets: [{id: gmm, train_samples: 3000, test_samples: 300}]
model: {arch: mlp, epochs: 3}
methods: [gradient, gradxinput, random]
protocols:
  - {name: roar, params: {rates: [0.1, 0.3, 0.5, 0.7, 0.9]}}
  - {name: deletion, params: {samples: 100}}
retrain: {epochs: 3}
`

func writeSpec(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(p, []byte(campaignSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readCSV(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run", "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// `kill -9` in the middle of a campaign, then `run` again: the CSV is the
// same, byte for byte, as that of a run never interrupted.
func TestKill9ThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three campaigns")
	}
	ctx := context.Background()
	ref := t.TempDir()
	if err := runCampaign(ctx, []string{writeSpec(t, ref), "--quiet"}); err != nil {
		t.Fatal(err)
	}
	want := readCSV(t, ref)

	dir := t.TempDir()
	spec := writeSpec(t, dir)
	cmd := exec.Command(os.Args[0], "run", spec, "--quiet")
	cmd.Env = append(os.Environ(), "FAITHLAB_CLI_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "run", "results.jsonl")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(results)
		if bytes.Count(b, []byte("\n")) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no task finished in two minutes")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	b, _ := os.ReadFile(results)
	n := bytes.Count(b, []byte("\n"))
	if n >= 6 {
		t.Fatalf("the campaign had finished (%d tasks) before the kill", n)
	}
	if err := runCampaign(ctx, []string{spec, "--quiet"}); err != nil {
		t.Fatal(err)
	}
	if got := readCSV(t, dir); !bytes.Equal(got, want) {
		t.Errorf("CSV after kill -9 and resume (%d bytes) differs from the uninterrupted run's (%d bytes)", len(got), len(want))
	}
	b, _ = os.ReadFile(results)
	if got := bytes.Count(b, []byte("\n")); got != 6 {
		t.Errorf("%d records for 6 tasks: a task finished before the kill ran again", got)
	}
}

// Two shards, run apart (each with its own cache, as on two machines) and
// merged, equal one run.
func TestShardsMergeToOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three campaigns")
	}
	ctx := context.Background()
	one := t.TempDir()
	if err := runCampaign(ctx, []string{writeSpec(t, one), "--quiet"}); err != nil {
		t.Fatal(err)
	}
	var shardDirs []string
	for i := range 2 {
		dir := t.TempDir()
		if err := runCampaign(ctx, []string{writeSpec(t, dir), "--shard", []string{"0/2", "/2"}[i], "--quiet"}); err != nil && i == 0 {
			t.Fatal(err)
		} else if i == 1 && (err == nil || !strings.Contains(err.Error(), "SLURM_ARRAY_TASK_ID")) {
			t.Fatalf("--shard /2 without an array index: %v", err)
		}
		if i == 1 {
			t.Setenv("SLURM_ARRAY_TASK_ID", "1")
			if err := runCampaign(ctx, []string{writeSpec(t, dir), "--shard", "/2", "--quiet"}); err != nil {
				t.Fatal(err)
			}
		}
		shardDirs = append(shardDirs, filepath.Join(dir, "run", "shards", []string{"0-of-2", "1-of-2"}[i]))
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if err := runMerge(ctx, append([]string{"--out", merged}, shardDirs...)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(merged, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, readCSV(t, one)) {
		t.Error("merged shards' CSV differs from the single run's")
	}
	// The shards' caches (one per machine) stay behind: the merged run
	// carries the perturbed samples in its own.
	for _, d := range shardDirs {
		os.RemoveAll(filepath.Join(filepath.Dir(filepath.Dir(d)), "cache"))
	}
	run, _, err := store.OpenExisting(merged)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := run.Records()
	if err != nil {
		t.Fatal(err)
	}
	man, _ := run.Manifest()
	kept := 0
	for _, rec := range recs {
		for _, sm := range rec.Result.Samples {
			if _, ok, err := (&store.Cache{Dir: man.Cache}).Get(sm.Key, ".npy"); !ok || err != nil {
				t.Errorf("%s: sample %s not in the merged run's cache %s (%v)", rec.Label, sm.Name, man.Cache, err)
			}
			kept++
		}
	}
	if kept != 3*(5+6) {
		t.Errorf("%d samples in the merged run", kept)
	}
}

func TestSlurmScript(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "c.sbatch")
	if err := runSlurm(context.Background(), []string{writeSpec(t, dir), "--shards", "4", "--out", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#!/bin/bash", "#SBATCH --array=0-3", "run " + filepath.Join(dir, "campaign.yaml") + " --shard /4",
		"merge --out " + filepath.Join(dir, "run", "merged"), filepath.Join(dir, "run", "shards", "3-of-4")} {
		if !strings.Contains(string(b), want) {
			t.Errorf("script lacks %q:\n%s", want, b)
		}
	}
	if err := runSlurm(context.Background(), []string{writeSpec(t, dir)}); err == nil {
		t.Error("no --shards accepted")
	}
}
