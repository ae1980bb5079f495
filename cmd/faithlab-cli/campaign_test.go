package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"faithlab/core/campaign"
)

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
	b, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// run, status, export and merge are wiring over core/campaign, whose
// tests cover kill -9 and resume, shards and merge; these check the wiring.
func TestRunStatusExportMergeWiring(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign")
	}
	ctx := context.Background()
	dir := t.TempDir()
	if err := runCampaign(ctx, []string{writeSpec(t, dir), "--shard", "0/2", "--quiet"}); err != nil {
		t.Fatal(err)
	}
	if err := runCampaign(ctx, []string{writeSpec(t, dir), "--shard", "/2", "--quiet"}); err == nil || !strings.Contains(err.Error(), "SLURM_ARRAY_TASK_ID") {
		t.Fatalf("--shard /2 without an array index: %v", err)
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	if err := runCampaign(ctx, []string{writeSpec(t, dir), "--shard", "/2", "--quiet"}); err != nil {
		t.Fatal(err)
	}
	shards := []string{filepath.Join(dir, "run", "shards", "0-of-2"), filepath.Join(dir, "run", "shards", "1-of-2")}
	merged := filepath.Join(dir, "merged")
	if err := runMerge(ctx, append([]string{"--out", merged}, shards...)); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "out.csv")
	if err := runExportResults(ctx, []string{merged, "--csv", csv}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(csv)
	if b := readCSV(t, merged); len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("export wrote %d bytes, the merged run's CSV has %d", len(a), len(b))
	}
	if err := runStatus(ctx, []string{filepath.Join(dir, "run")}); err != nil {
		t.Error(err)
	}
}

func TestSlurmFlagsReachTheScript(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "c.sbatch")
	if err := runSlurm(context.Background(), []string{writeSpec(t, dir), "--shards", "4", "--out", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The script's content is campaign.Slurm's, tested there: here, that
	// the flags reach it.
	if !strings.Contains(string(b), "#SBATCH --array=0-3") {
		t.Errorf("--shards 4 did not reach the script:\n%s", b)
	}
	if err := runSlurm(context.Background(), []string{writeSpec(t, dir)}); err == nil {
		t.Error("no --shards accepted")
	}
}

// A run the user stops says what it kept and ends with errStopped, which
// main turns into exit status 128 + the signal without a second, raw error line.
func TestStoppedRunSaysWhatItKept(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := runCampaign(ctx, []string{writeSpec(t, t.TempDir()), "--quiet"}); !errors.Is(err, errStopped) {
		t.Fatalf("a run stopped before it began: %v, want errStopped", err)
	}
}

// SIGTERM, as a cluster's scheduler sends at a job's time limit, stops the
// context as Ctrl-C does and is reported as itself, so that main exits 143;
// a command that does not return (a phase that does not watch the context)
// is ended stopGrace after the signal, with that status.
func TestSIGTERMStopsAndIsNamed(t *testing.T) {
	exited := make(chan int, 1)
	start := time.Now()
	ctx, stopped := stopOnSignal(func(code int) { exited <- code })
	if _, ok := stopped(); ok {
		t.Fatal("a signal reported before any came")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not stop the context")
	}
	if sig, ok := stopped(); !ok || sig != syscall.SIGTERM || 128+int(sig) != 143 {
		t.Fatalf("stopped() = %v, %v; want SIGTERM (exit 143)", sig, ok)
	}
	select {
	case code := <-exited:
		if waited := time.Since(start); code != 143 || waited < stopGrace || waited > stopGrace+5*time.Second {
			t.Errorf("ended with %d after %v, want 143 after %v", code, waited, stopGrace)
		}
	case <-time.After(stopGrace + 10*time.Second):
		t.Fatal("a command that did not return was never ended")
	}
}

// `run` launches on the estimate `run --estimate` gives, and the run keeps
// it beside the launch's wall time, which `status` prints with their
// ratio (status's wiring); the speeds it measured are kept for the next estimate, and a
// relaunch with nothing to run adds no launch.
func TestRunKeepsItsEstimateBesideItsWallTime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	spec := writeTiny(t, dir, "campaign.yaml", "run")
	said, err := stderrOf(t, func() error { return runCampaign(ctx, []string{spec}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(said, "estimated: 4 tasks to run, about ") {
		t.Errorf("run said:\n%s", said)
	}
	r, err := openRun(filepath.Join(dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	ls := r.Manifest.Launches
	if len(ls) != 1 || !(ls[0].Estimate > 0) || !(ls[0].Wall > 0) {
		t.Fatalf("launches %+v: want one with its estimate and wall time", ls)
	}
	c, err := campaign.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !campaign.UserSpeedBook().Known(c) {
		t.Error("the speeds the launch measured are not kept for the next estimate")
	}
	if err := runCampaign(ctx, []string{spec, "--quiet"}); err != nil {
		t.Fatal(err)
	}
	if r, err = openRun(filepath.Join(dir, "run")); err != nil || len(r.Manifest.Launches) != 1 {
		t.Errorf("a relaunch with nothing to run: %d launches (%v)", len(r.Manifest.Launches), err)
	}
}
