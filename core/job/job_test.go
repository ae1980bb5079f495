package job

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/report"
	"faithlab/core/spec"
	"faithlab/core/store"
)

const gmmSpec = `name: t
output: run
datasets: [{id: gmm, train_samples: 600, test_samples: 120}]
model: {arch: mlp, epochs: 2}
methods: [gradient, random, {name: smoothgrad, params: {samples: 4}}]
protocols:
  - {name: roar, params: {rates: [0.3, 0.7]}}
  - {name: deletion, params: {samples: 40}}
  - groundtruth
retrain: {epochs: 1}
`

func newRunner(t *testing.T, dir, src string) *Runner {
	t.Helper()
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	run, err := store.Open(s.Output, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return &Runner{Spec: s, Run: run, Cache: &store.Cache{Dir: filepath.Join(dir, "cache")}, Kernel: gemm.Gonum{}}
}

// csvOf is the run's tidy CSV, in plan order.
func csvOf(t *testing.T, r *Runner) string {
	t.Helper()
	log, err := r.Run.Read()
	recs := log.Records
	if err != nil {
		t.Fatal(err)
	}
	latest := store.Latest(recs)
	var ok []store.Record
	for _, task := range Plan(r.Spec) {
		if rec, found := latest[task.Key]; found && rec.Error == "" {
			ok = append(ok, rec)
		}
	}
	var buf bytes.Buffer
	if err := report.WriteCSV(&buf, "id", ok, report.Confident(ok, report.ConfidenceOptions{})); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A run cancelled part-way and resumed (with a cold cache, as a new
// machine would have) ends with the same results as one never stopped.
func TestCancelThenResume(t *testing.T) {
	whole := newRunner(t, t.TempDir(), gmmSpec)
	events := make(chan Event, 1000)
	whole.Events = events
	if failed, err := whole.Execute(context.Background()); err != nil || failed != 0 {
		t.Fatalf("uninterrupted run: %d failed, %v", failed, err)
	}
	close(events)
	var kinds []Kind
	for e := range events {
		kinds = append(kinds, e.Kind)
	}
	if kinds[len(kinds)-1] != Done || !strings.Contains(string(kinds[0]), "started") {
		t.Errorf("events %v", kinds)
	}
	want := csvOf(t, whole)
	if strings.Count(want, "\n") < 50 {
		t.Fatalf("CSV of %d lines", strings.Count(want, "\n"))
	}
	// Perturbed samples are in the cache under the keys their records name.
	recs := records(whole.Run)
	kept := 0
	for _, rec := range recs {
		if rec.Result.Chance < 0.5 || rec.Result.Chance > 0.6 { // gmm's two classes, near even
			t.Errorf("%s: chance %g", rec.Label, rec.Result.Chance)
		}
		if rec.Result.Base < 0.6 || rec.Result.Base > 1 { // the explained model's accuracy, for every protocol
			t.Errorf("%s: base accuracy %g", rec.Label, rec.Result.Base)
		}
		for _, sm := range rec.Result.Samples {
			if _, ok, err := whole.Cache.Get(sm.Key, ".npy"); !ok || err != nil {
				t.Errorf("%s: sample %s not in the cache (%v)", rec.Label, sm.Name, err)
			}
			kept++
		}
	}
	if kept != 3*(2+2+2+6) { // three methods: ROAR's originals, maps and two rates; Deletion's originals, maps and three fractions in two orders
		t.Errorf("%d samples kept", kept)
	}

	dir := t.TempDir()
	r := newRunner(t, dir, gmmSpec)
	ctx, cancel := context.WithCancel(context.Background())
	ev := make(chan Event)
	r.Events = ev
	go func() {
		for e := range ev {
			if e.Kind == Finished && e.Done == 4 {
				cancel()
			}
		}
	}()
	if _, err := r.Execute(ctx); err != context.Canceled {
		t.Fatalf("cancelled run: %v", err)
	}
	close(ev)
	recs = records(r.Run)
	if len(recs) < 4 || len(recs) >= len(Plan(r.Spec)) {
		t.Fatalf("%d of %d tasks stored after the cancel", len(recs), len(Plan(r.Spec)))
	}
	os.RemoveAll(filepath.Join(dir, "cache"))
	again := newRunner(t, dir, gmmSpec)
	resumed := make(chan Event, 1000)
	again.Events = resumed
	if failed, err := again.Execute(context.Background()); err != nil || failed != 0 {
		t.Fatalf("resumed run: %d failed, %v", failed, err)
	}
	close(resumed)
	skips := 0
	for e := range resumed {
		// The tasks done before count as 1, 2, … of all the tasks.
		if e.Kind == Skipped {
			if skips++; e.Done != skips || e.Total != len(Plan(r.Spec)) {
				t.Errorf("skip %d said %d of %d, want %d of %d", skips, e.Done, e.Total, skips, len(Plan(r.Spec)))
			}
		}
	}
	if skips < 4 {
		t.Errorf("%d tasks skipped on resume, want the 4 or more done before", skips)
	}
	if got := csvOf(t, again); got != want {
		t.Errorf("resumed CSV differs from the uninterrupted one")
	}
	recs = records(again.Run)
	if len(recs) != len(Plan(r.Spec)) {
		t.Errorf("%d records for %d tasks: finished tasks ran again", len(recs), len(Plan(r.Spec)))
	}
}

// A task that fails records its error; the others run.
func TestFailedTaskDoesNotStopTheCampaign(t *testing.T) {
	src := strings.Replace(gmmSpec, "id: gmm,", "id: digits,", 1)
	r := newRunner(t, t.TempDir(), src) // digits has no ground truth: GroundTruth fails
	failed, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	recs := records(r.Run)
	if failed != 3 || len(recs) != 9 {
		t.Fatalf("%d failed of %d records, want 3 of 9", failed, len(recs))
	}
	for _, rec := range recs {
		if (rec.Protocol == "GroundTruth") != (rec.Error != "") {
			t.Errorf("%s: error %q", rec.Label, rec.Error)
		}
	}
	// Resuming retries only the failed tasks.
	if failed, _ := r.Execute(context.Background()); failed != 3 {
		t.Errorf("resume: %d failed", failed)
	}
	if recs2 := records(r.Run); len(recs2) != 12 {
		t.Errorf("%d records after resuming, want 12", len(recs2))
	}
}

// Shards split the plan without overlap, and their union is the plan.
func TestShardsPartitionThePlan(t *testing.T) {
	r := newRunner(t, t.TempDir(), gmmSpec)
	plan := Plan(r.Spec)
	seen := map[string]int{}
	for i := range 4 {
		for _, task := range plan {
			if (Shard{I: i, Of: 4}).Has(task) {
				seen[task.Key]++
			}
		}
	}
	if len(seen) != len(plan) {
		t.Fatalf("%d tasks covered of %d", len(seen), len(plan))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("task %s in %d shards", k[:8], n)
		}
	}
}

// A shard's name reads back as the shard; the whole plan and anything
// else do not.
func TestShardNamesReadBack(t *testing.T) {
	for _, sh := range []Shard{{0, 2}, {3, 4}} {
		if got, ok := ParseShard(sh.String()); !ok || got != sh {
			t.Errorf("%q read back as %v, %v", sh.String(), got, ok)
		}
	}
	for _, s := range []string{"", "1/1", "4/4", "-1/3", "a/b", "2"} {
		if sh, ok := ParseShard(s); ok {
			t.Errorf("%q read as shard %v", s, sh)
		}
	}
}

// A base model that cannot be built fails every task that needs it, at
// once: it is not rebuilt for each.
func TestFailedBaseModelFailsItsTasksOnce(t *testing.T) {
	src := strings.Replace(gmmSpec, "model: {arch: mlp, epochs: 2}", "model: {arch: goar-cnn, epochs: 2}", 1)
	r := newRunner(t, t.TempDir(), src) // a CNN cannot take 20×1×1 samples
	events := make(chan Event, 100)
	r.Events = events
	failed, err := r.Execute(context.Background())
	close(events)
	if err != nil || failed != 9 {
		t.Fatalf("%d failed, %v; want all 9", failed, err)
	}
	recs := records(r.Run)
	for _, rec := range recs {
		if !strings.Contains(rec.Error, "base model") || !strings.Contains(rec.Error, "too small") {
			t.Errorf("%s: %q", rec.Label, rec.Error)
		}
	}
	if len(r.builds) != 1 {
		t.Errorf("%d artefacts attempted, want the one base model", len(r.builds))
	}
}

// Cancelling one running task leaves it unrecorded while the others go on
// to the end; a resumed run does it, and the results are those of a run
// never interrupted.
func TestCancelOneTaskLeavesItForTheResume(t *testing.T) {
	want := csvOf(t, func() *Runner {
		r := newRunner(t, t.TempDir(), gmmSpec)
		if _, err := r.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
		return r
	}())
	dir := t.TempDir()
	r := newRunner(t, dir, gmmSpec)
	r.Tasks = &TaskControl{}
	ev := make(chan Event)
	r.Events = ev
	var victim string
	go func() {
		for e := range ev {
			// The fourth task (Random under ROAR): cancelled at its first progress.
			if e.Kind == Progress && victim == "" && e.Key == Plan(r.Spec)[3].Key {
				victim = e.Key
				if !r.Tasks.Cancel(e.Key) {
					t.Error("Cancel found no running task")
				}
			}
		}
	}()
	failed, err := r.Execute(context.Background())
	close(ev)
	if err != nil || failed != 0 {
		t.Fatalf("run with one task cancelled: %d failed, %v", failed, err)
	}
	recs := records(r.Run)
	if len(recs) != len(Plan(r.Spec))-1 {
		t.Fatalf("%d records for %d tasks with one cancelled", len(recs), len(Plan(r.Spec)))
	}
	for _, rec := range recs {
		if rec.Task == victim {
			t.Fatal("the cancelled task was recorded")
		}
	}
	if r.Tasks.Cancel(victim) {
		t.Error("a finished run still lists the task as running")
	}
	again := newRunner(t, dir, gmmSpec)
	if _, err := again.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := csvOf(t, again); got != want {
		t.Error("results after cancelling one task and resuming differ from an uninterrupted run's")
	}
}

// A method that cannot explain the campaign's data fails its tasks with
// the reason before any model is trained for them.
func TestMethodNotForTheDataFailsBeforeTraining(t *testing.T) {
	for _, tc := range []struct{ dataset, method, wants string }{
		{"gmm", "gradcam", "gradcam explains image data, not tabular data"},
		{"digits", "vlambda", "vlambda needs a dataset whose generator knows the ground truth"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			src := strings.Replace(gmmSpec, "id: gmm,", "id: "+tc.dataset+",", 1)
			src = strings.Replace(src, "methods: [gradient, random, {name: smoothgrad, params: {samples: 4}}]", "methods: ["+tc.method+"]", 1)
			r := newRunner(t, t.TempDir(), src)
			failed, err := r.Execute(context.Background())
			if err != nil || failed != 3 {
				t.Fatalf("%d failed, %v; want all 3", failed, err)
			}
			recs := records(r.Run)
			for _, rec := range recs {
				if !strings.Contains(rec.Error, tc.wants) {
					t.Errorf("%s: %q, want %q", rec.Label, rec.Error, tc.wants)
				}
			}
			if len(r.builds) != 0 {
				t.Errorf("%d artefacts built, want none", len(r.builds))
			}
		})
	}
}

// records reads a run's records, leaving out damaged ones.
func records(run *store.Run) []store.Record {
	log, _ := run.Read()
	return log.Records
}

// A build whose network's worker died fails the task that ran it only:
// a task waiting on the same artefact builds it again itself, while any
// other failure is every waiting task's at once (the failed base model
// above).
func TestALostWorkerFailsOnlyTheTaskWhoseBuildItWas(t *testing.T) {
	r := &Runner{builds: map[string]*build{}}
	started, release := make(chan struct{}), make(chan struct{})
	builds := 0
	var mu sync.Mutex
	builder := func(fail error) func() (any, error) {
		return func() (any, error) {
			mu.Lock()
			builds++
			first := builds == 1
			mu.Unlock()
			if first {
				close(started)
				<-release
				return nil, fail
			}
			return "built", nil
		}
	}
	none := func() (any, bool, error) { return nil, false, nil }
	for _, tc := range []struct {
		fail       error
		waiterGets error // nil: the waiter builds it again
	}{
		{fmt.Errorf("maps: %w", fakeLost{}), nil},
		{errors.New("maps: non-finite"), errors.New("maps: non-finite")},
	} {
		builds, started, release = 0, make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() { _, err := r.once(context.Background(), "k", none, builder(tc.fail)); first <- err }()
		<-started
		waiter := make(chan error, 1)
		go func() {
			v, err := r.once(context.Background(), "k", none, builder(tc.fail))
			if err == nil && v != "built" {
				err = fmt.Errorf("got %v", v)
			}
			waiter <- err
		}()
		time.Sleep(50 * time.Millisecond) // the waiter waits on the first build
		close(release)
		if err := <-first; err != tc.fail {
			t.Errorf("%v: the builder got %v", tc.fail, err)
		}
		err := <-waiter
		switch {
		case tc.waiterGets == nil && err != nil:
			t.Errorf("%v: the waiter got %v, want its own build", tc.fail, err)
		case tc.waiterGets != nil && (err == nil || err.Error() != tc.waiterGets.Error()):
			t.Errorf("%v: the waiter got %v, want the builder's failure", tc.fail, err)
		}
		r.builds = map[string]*build{}
	}
}

type fakeLost struct{}

func (fakeLost) Error() string        { return "worker died" }
func (fakeLost) Is(target error) bool { return target == engine.ErrWorkerLost }

// A protocol with no parameters set is one setting whether its spec holds
// no map (a file) or an empty one (the workbench's form): its tasks have
// one key, so that the records of a run are found from either.
func TestNoParametersAndEmptyParametersAreOneTask(t *testing.T) {
	s := &spec.Spec{Datasets: []spec.Dataset{{Ref: "gmm"}}, Model: spec.Model{Arch: "mlp"}, Seeds: []uint64{1}, Post: []string{""},
		Methods: []spec.Method{{Name: "gradient"}}}
	keys := func(params map[string]any) string {
		c := *s
		c.Protocols = []spec.Protocol{{Name: "deletion", Params: params}}
		return Plan(&c)[0].Key
	}
	if a, b := keys(nil), keys(map[string]any{}); a != b {
		t.Errorf("deletion with no params keyed %s, with empty params %s", a[:12], b[:12])
	}
	if a, b := keys(nil), keys(map[string]any{"samples": 10}); a == b {
		t.Error("a parameter set does not change the key")
	}
}
