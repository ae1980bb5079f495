package campaign

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/store"
)

// TestMain lets a test run a campaign in a child process of this binary,
// so that it can kill it with SIGKILL.
func TestMain(m *testing.M) {
	if spec := os.Getenv("FAITHLAB_SERVE_SPEC"); spec != "" {
		if err := Serve(context.Background(), spec, Options{Kernel: best()}, os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if spec := os.Getenv("FAITHLAB_RUN_SPEC"); spec != "" {
		c, err := Load(spec)
		if err == nil {
			_, err = c.Run(context.Background(), Options{Kernel: best()})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
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

// onManifoldSpec is a campaign of GOAR and FUD on the mixture with its
// fitted prior: 6 tasks.
const onManifoldSpec = `name: kill-test-on-manifold
output: run
datasets: [{id: gmm, train_samples: 2000, test_samples: 300}]
model: {arch: mlp, epochs: 3}
methods: [gradient, gradxinput, random]
protocols:
  - {name: goar, params: {strengths: [0, 3, 6], steps: 10}}
  - {name: fud, params: {samples: 60, steps: 20, ratios: [0.2, 0.5, 0.8], trajectories: 1}}
retrain: {epochs: 2}
`

func load(t *testing.T, dir string) *Campaign { return loadSpec(t, dir, campaignSpec) }

func loadSpec(t *testing.T, dir, spec string) *Campaign {
	t.Helper()
	p := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func run(t *testing.T, c *Campaign, sh job.Shard) Outcome {
	t.Helper()
	out, err := c.Run(context.Background(), Options{Shard: sh, Kernel: best(), Trust: Trust{Engines: []string{c.Spec.Engine}}.WithScripts(c.Spec.Model.File)}) // the test is the user
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readCSV(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// `kill -9` in the middle of a campaign, then Run again: the CSV is the
// same, byte for byte, as that of a run never interrupted, and no task
// that had finished runs again.
func TestKill9ThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two campaigns")
	}
	t.Run("removal", func(t *testing.T) { testKill9ThenResume(t, campaignSpec, 6) })
	t.Run("GOAR and FUD", func(t *testing.T) { testKill9ThenResume(t, onManifoldSpec, 6) })
}

func testKill9ThenResume(t *testing.T, spec string, tasks int) {
	want := readCSV(t, run(t, loadSpec(t, t.TempDir(), spec), job.Shard{}).Dir)

	dir := t.TempDir()
	c := loadSpec(t, dir, spec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAITHLAB_RUN_SPEC="+filepath.Join(dir, "campaign.yaml"))
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
	// While the child runs, the run folder is its own.
	if _, err := c.Run(context.Background(), Options{Kernel: best()}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("process %d", cmd.Process.Pid)) {
		t.Errorf("a second run of a busy folder: %v, want a refusal naming process %d", err, cmd.Process.Pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	b, _ := os.ReadFile(results)
	n := bytes.Count(b, []byte("\n"))
	if n >= tasks {
		t.Fatalf("the campaign had finished (%d tasks) before the kill", n)
	}
	// The kill released the lock: the same campaign resumes.
	if got := readCSV(t, run(t, c, job.Shard{}).Dir); !bytes.Equal(got, want) {
		t.Errorf("CSV after kill -9 and resume (%d bytes) differs from the uninterrupted run's (%d bytes)", len(got), len(want))
	}
	b, _ = os.ReadFile(results)
	if got := bytes.Count(b, []byte("\n")); got != tasks {
		t.Errorf("%d records for %d tasks: a task finished before the kill ran again", got, tasks)
	}
	st := mustOpen(t, filepath.Join(dir, "run")).Status()
	if len(st.Done) != tasks || len(st.Failed)+len(st.Missing) != 0 {
		t.Errorf("status: %d done, %d failed, %d missing; want %d, 0, 0", len(st.Done), len(st.Failed), len(st.Missing), tasks)
	}
}

func mustOpen(t *testing.T, dir string) *Results {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Two shards, run apart (each with its own cache, as on two machines) and
// merged, equal one run; the merged run keeps the perturbed samples in its
// own cache.
func TestShardsMergeToOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three campaigns")
	}
	t.Run("removal", func(t *testing.T) { testShardsMergeToOneRun(t, campaignSpec, 6) })
	t.Run("GOAR and FUD", func(t *testing.T) { testShardsMergeToOneRun(t, onManifoldSpec, 6) })
}

func testShardsMergeToOneRun(t *testing.T, spec string, tasks int) {
	one := run(t, loadSpec(t, t.TempDir(), spec), job.Shard{})
	var shardDirs []string
	for i := range 2 {
		out := run(t, loadSpec(t, t.TempDir(), spec), job.Shard{I: i, Of: 2})
		if want := fmt.Sprintf("%d-of-2", i); filepath.Base(out.Dir) != want {
			t.Fatalf("shard %d ran in %s", i, out.Dir)
		}
		shardDirs = append(shardDirs, out.Dir)
	}
	// A shard's own folder, done, has nothing to run; a status of its
	// parent sees the shard's records and the other shard's tasks to run.
	if st := mustOpen(t, shardDirs[0]).Status(); len(st.Done) != tasks/2 || len(st.Missing) != 0 {
		t.Errorf("status of shard 0's folder: %d done, %d missing; want %d and 0", len(st.Done), len(st.Missing), tasks/2)
	}
	if st := mustOpen(t, filepath.Dir(filepath.Dir(shardDirs[0]))).Status(); len(st.Done) != tasks/2 || len(st.Missing) != tasks/2 {
		t.Errorf("status of shard 0's campaign folder: %d done, %d missing; want %d and %d", len(st.Done), len(st.Missing), tasks/2, tasks/2)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	m, err := Merge(merged, nil, shardDirs...)
	if err != nil {
		t.Fatal(err)
	}
	if m.Done != tasks || m.Failed+m.Missing+m.LostSamples != 0 {
		t.Errorf("merge: %+v", m)
	}
	if !bytes.Equal(readCSV(t, merged), readCSV(t, one.Dir)) {
		t.Error("merged shards' CSV differs from the single run's")
	}
	if _, err := Merge(merged, nil, shardDirs...); err == nil {
		t.Error("a merge into a folder that holds results was accepted")
	}
	for _, d := range shardDirs {
		os.RemoveAll(filepath.Join(filepath.Dir(filepath.Dir(d)), "cache"))
	}
	r := mustOpen(t, merged)
	kept := 0
	for _, rec := range r.Status().Done {
		for _, sm := range rec.Result.Samples {
			if _, ok, err := (&store.Cache{Dir: r.Manifest.Cache}).Get(sm.Key, ".npy"); !ok || err != nil {
				t.Errorf("%s: sample %s not in the merged run's cache %s (%v)", rec.Label, sm.Name, r.Manifest.Cache, err)
			}
			kept++
		}
	}
	if kept == 0 {
		t.Error("the merged run keeps no samples")
	}
}

func TestSaveRefusesAnotherCampaignsFolder(t *testing.T) {
	c := load(t, t.TempDir())
	dir := t.TempDir()
	s := *c.Spec
	if _, _, err := Save(dir, &s); err != nil {
		t.Fatal(err)
	}
	s.Seeds = []uint64{7}
	if _, _, err := Save(dir, &s); err == nil || !strings.Contains(err.Error(), "holds another campaign") {
		t.Errorf("saving another campaign over the first: %v", err)
	}
}

// best is the kernel the CLI would use (gonum's when OpenBLAS is missing).
func best() gemm.Kernel {
	k, _ := gemm.Best()
	return k
}

// A run stopped part way says so, with what is left to run; one run to
// the end says it ended.
func TestRunStateSaysStoppedOrEnded(t *testing.T) {
	dir := t.TempDir()
	c := loadSpec(t, dir, campaignSpec)
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan job.Event)
	go func() {
		for e := range events {
			if e.Kind == job.Finished {
				cancel()
			}
		}
	}()
	if _, err := c.Run(ctx, Options{Kernel: best(), Events: events, Trust: Trust{Engines: []string{c.Spec.Engine}}.WithScripts(c.Spec.Model.File)}); err == nil {
		t.Fatal("a run cancelled after its first task ended without an error")
	}
	if s := mustOpen(t, filepath.Join(dir, "run")).State(); !strings.Contains(s, "stopped ") || !regexp.MustCompile(`with [0-9]+ tasks? to run`).MatchString(s) {
		t.Errorf("state of a stopped run: %q", s)
	}
	run(t, c, job.Shard{})
	if s := mustOpen(t, filepath.Join(dir, "run")).State(); !strings.Contains(s, ", ended ") {
		t.Errorf("state of a finished run: %q", s)
	}
}

// The shipped campaigns fit their data (Applies), where their data is
// here; a table given a protocol that takes images, or a subset size
// beyond its features, is refused naming each, before any work; so is a
// cap on a split above what the split holds.
func TestShippedCampaignsFitTheirDataAndMisfitsAreNamed(t *testing.T) {
	specs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "campaigns", "*.yaml"))
	if len(specs) == 0 {
		t.Fatal("no shipped campaigns found")
	}
	for _, path := range specs {
		if b := filepath.Base(path); strings.HasPrefix(b, "cifar-sized") || strings.HasPrefix(b, "field224") {
			continue // its data and model are generated by make bench-campaigns, and large
		}
		c, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := c.Applies(); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	dir := t.TempDir()
	spec := `name: misfit
output: run
datasets: [{id: iris}]
model: {arch: mlp, epochs: 1}
methods: [gradient, gradcam]
protocols: [{name: irof}, {name: faithfulnesscorrelation}, {name: faithfulnesscorrelation, params: {ns: [2]}}, {name: road}]
seeds: [1]
`
	path := filepath.Join(dir, "misfit.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Run(context.Background(), Options{Kernel: best()})
	for _, want := range []string{"iris: method gradcam:", "iris: protocol irof: IROF takes image data, not tables of 4 features", "subset size 28 is not below the 4 features"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("misfits: %v, want %q", err, want)
		}
	}
	if err != nil && (strings.Contains(err.Error(), "ns: [2]\n") || strings.Contains(err.Error(), "protocol road")) {
		t.Errorf("a protocol that fits named: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
		t.Error("a campaign refused before any work made its run folder")
	}

	// A cap above a split: refused by the same check, before the folder.
	capped := loadSpec(t, t.TempDir(), strings.Replace(spec, "{id: iris}", "{id: iris, train_samples: 500}", 1))
	if _, err := capped.Run(context.Background(), Options{Kernel: best()}); err == nil || !strings.Contains(err.Error(), "500 training samples asked for, its training split holds") {
		t.Errorf("a cap above the training split: %v", err)
	}
	if _, err := os.Stat(capped.Spec.Output); err == nil {
		t.Error("a campaign whose cap exceeds its split made its run folder")
	}
}
