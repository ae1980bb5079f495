package campaign

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	if n, err := strconv.Atoi(os.Getenv("FAITHLAB_NICE_PROBE")); err == nil {
		setNice(n) // lowerPriority's, at a nice above the test's own
		done := make(chan bool)
		go func() { done <- true }() // a thread or two more, made after
		<-done
		fmt.Println(threadNices())
		os.Exit(0)
	}
	if os.Getenv("FAITHLAB_LOWER_PROBE") != "" {
		lowerPriority() // as a worker starts
		done := make(chan bool)
		go func() { done <- true }()
		<-done
		fmt.Println(threadNices())
		os.Exit(0)
	}
	if os.Getenv("FAITHLAB_SERVE_SPEEDS") != "" {
		if err := ServeSpeeds(context.Background(), best(), os.Stdin, os.Stdout, true); err != nil {
			fmt.Fprintln(os.Stderr, err)
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

// statesSpec is a quick campaign of four tasks, one at a time.
const statesSpec = `name: states
output: run
datasets: [{id: gmm, train_samples: 300, test_samples: 40}]
model: {arch: mlp, epochs: 1}
methods: [gradient, random]
protocols:
  - {name: deletion, params: {samples: 20}}
  - {name: deletion, params: {samples: 30}}
workers: 1
`

// stopAtSecondStart runs c and cancels it, with cause, as a task starts
// after one finished: that task is cut short.
func stopAtSecondStart(t *testing.T, c *Campaign, cause error) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	events := make(chan job.Event)
	go func() {
		finished := false
		for e := range events {
			switch {
			case e.Kind == job.Finished:
				finished = true
			case e.Kind == job.Started && finished:
				cancel(cause)
			}
		}
	}()
	if _, err := c.Run(ctx, Options{Kernel: best(), Events: events}); err == nil {
		t.Fatal("a run cancelled part way ended without an error")
	}
}

// A task's state says what happened to it, in the same words everywhere
// (Status.Words, State, the CLI's status): cut short by the user's stop
// it is "cancelled by you", by another end (a signal, the front end gone,
// a killed process) "interrupted", never started "to run"; a launch
// records its estimate beside its wall time; a launch of a finished
// campaign runs nothing and changes no file of its folder.
func TestTaskStatesSayWhatHappened(t *testing.T) {
	dir := t.TempDir()
	c := loadSpec(t, dir, statesSpec)
	out := filepath.Join(dir, "run")
	stopAtSecondStart(t, c, job.ErrStoppedByUser)
	r := mustOpen(t, out)
	st := r.Status()
	tasks := c.Tasks(job.Shard{})
	if got, want := st.Words(), "1 of 4 tasks done, 1 cancelled by you, 2 to run"; got != want {
		t.Errorf("after the user's stop: %q, want %q", got, want)
	}
	if got := st.State(tasks[1].Key); got != job.StateCancelled {
		t.Errorf("the task the stop cut short: %q", got)
	}
	if s := r.State(); !strings.Contains(s, "ended ") || !strings.Contains(s, "with 3 tasks left (1 cancelled by you, 2 to run)") {
		t.Errorf("state of a run the user stopped: %q", s)
	}
	stopAtSecondStart(t, c, nil) // cancelled for no reason of the user's: a signal
	st = mustOpen(t, out).Status()
	if got, want := st.Words(), "2 of 4 tasks done, 1 interrupted, 1 to run"; got != want {
		t.Errorf("after an interruption: %q, want %q", got, want)
	}
	// A process killed with a task under way never wrote its end.
	runDir := &store.Run{Dir: out}
	man, err := runDir.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	killed := man
	killed.Running, killed.Ended = []string{tasks[3].Key}, time.Time{}
	if err := runDir.SetManifest(killed); err != nil {
		t.Fatal(err)
	}
	r = mustOpen(t, out)
	if got := r.Status().State(tasks[3].Key); got != job.StateInterrupted {
		t.Errorf("the task a killed process ran: %q", got)
	}
	if s := r.State(); !strings.Contains(s, "interrupted") {
		t.Errorf("state of a killed run: %q", s)
	}
	if _, err := c.Run(context.Background(), Options{Kernel: best(), Estimate: 12.5}); err != nil {
		t.Fatal(err)
	}
	r = mustOpen(t, out)
	if got, want := r.Status().Words(), "4 of 4 tasks done"; got != want {
		t.Errorf("after the resume: %q, want %q", got, want)
	}
	ls := r.Manifest.Launches
	if len(ls) != 3 || ls[2].Estimate != 12.5 || ls[2].Tasks != 2 || ls[2].Wall <= 0 || ls[2].Ratio() <= 0 || ls[0].Estimate != 0 {
		t.Errorf("launches recorded: %+v", ls)
	}
	if len(r.Manifest.Running)+len(r.Manifest.Stopped) > 0 {
		t.Errorf("a finished run keeps tasks under way %v or stopped %v", r.Manifest.Running, r.Manifest.Stopped)
	}
	// Launched again: nothing runs, and nothing changes.
	files := map[string][]byte{}
	stats := map[string]time.Time{}
	for _, name := range []string{"manifest.json", "results.jsonl", "results.csv", "REPORT.md", "diagnostics.json"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(filepath.Join(out, name))
		files[name], stats[name] = b, st.ModTime()
	}
	time.Sleep(20 * time.Millisecond)
	again, err := c.Run(context.Background(), Options{Kernel: best(), Estimate: 3})
	if err != nil || again.Summary == "" {
		t.Fatalf("a launch of the finished campaign: %v, summary %q", err, again.Summary)
	}
	for name, b := range files {
		now, _ := os.ReadFile(filepath.Join(out, name))
		st, _ := os.Stat(filepath.Join(out, name))
		if !bytes.Equal(now, b) || !st.ModTime().Equal(stats[name]) {
			t.Errorf("a launch that ran nothing rewrote %s", name)
		}
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
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if benchGenerated(b) {
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

// A worker measures a campaign's speeds in its own process (the
// workbench's estimate), its priors' with them, and says how busy the
// machine was meanwhile; an estimate from them is the one an estimate
// here makes from the same speeds.
func TestSpeedsMeasuredInAWorkerProcess(t *testing.T) {
	c := loadSpec(t, t.TempDir(), onManifoldSpec)
	worker := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "FAITHLAB_SERVE_SPEEDS=1")
		return cmd
	}
	m, err := MeasureIn(context.Background(), worker(), c)
	if err != nil {
		t.Fatal(err)
	}
	if m.PID == os.Getpid() || m.PID == 0 || m.Speeds.Train <= 0 || m.Speeds.Gradient <= 0 || len(m.Priors) == 0 || time.Since(m.At) > time.Minute {
		t.Errorf("measured in the worker: %+v", m)
	}
	book := SpeedBook{Measure: func(ctx context.Context, c *Campaign) (Measured, error) { return MeasureIn(ctx, worker(), c) }}
	z, err := book.Estimate(context.Background(), c, best())
	if err != nil {
		t.Fatal(err)
	}
	var here SpeedBook
	here.Keep(c, z.Measured)
	again, err := here.Estimate(context.Background(), c, best())
	if err != nil || again.String() != z.String() || z.Seconds <= 0 {
		t.Errorf("the same speeds estimated %q here, %q from the worker (%v)", again, z, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MeasureIn(ctx, worker(), c); err == nil {
		t.Error("a cancelled measurement returned speeds")
	}
}

// threadNices lists the nice value of each of this process's threads
// (Linux's /proc; none elsewhere).
func threadNices() string {
	var nices []string
	paths, _ := filepath.Glob("/proc/self/task/*/stat")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 16 {
			nices = append(nices, f[16]) // field 19 of stat: nice
		}
	}
	return strings.Join(nices, " ")
}
