// Package job runs campaigns. A spec expands into a plan of tasks, one per
// dataset × seed × method × post-processing × protocol, each depending on
// its dataset's base model; what the tasks share (the base model, the maps
// of a method, every model a protocol retrains) is built once, on demand,
// and kept in the content-addressed cache, so that a task whose inputs are
// unchanged is never recomputed, across runs and campaigns.
//
// The runner works on a bounded pool of goroutines, reports progress as
// Events on a channel (core never prints), stops within a second or two
// of its context's cancellation, and commits every finished task to the
// run's results file before the next starts: a run killed at any point
// resumes where it stopped and ends with the same results as one that was
// never interrupted. A failed task records its error and the campaign goes
// on with the tasks that do not depend on it.
package job

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"faithlab/core/attr"
	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/core/spec"
	"faithlab/core/store"
	"faithlab/core/train"
)

// Kind says what an Event reports.
type Kind string

// Event kinds.
const (
	Started  Kind = "started"
	Progress Kind = "progress"
	Finished Kind = "finished"
	Failed   Kind = "failed"
	Skipped  Kind = "skipped"  // done by an earlier run
	Repaired Kind = "repaired" // a damaged cache entry or record was set aside and is rebuilt; Err says which
	Warning  Kind = "warning"  // something the user should know (a file without a checksum, say); Err says what
	Note     Kind = "note"     // what the runner planned (its memory, say); Err says what
	// Cancelled: stopped by the user — alone (TaskControl.Cancel), or
	// with the campaign (its context cancelled with the cause
	// ErrStoppedByUser) — and not recorded, so that a resumed run does it
	// again.
	Cancelled Kind = "cancelled"
	// Interrupted: cut short by the campaign's end for another reason
	// than the user's (a signal, the front end gone), not recorded.
	Interrupted Kind = "interrupted"
	Done        Kind = "done" // the campaign (or shard) ended
)

// ErrStoppedByUser is the cause (context.WithCancelCause) a front end
// cancels a campaign with when its user asked: the tasks it cuts short
// are then Cancelled, not Interrupted.
var ErrStoppedByUser = errors.New("stopped by the user")

// State is what happened to a task, in the words every front end shows it
// with (the CLI's status, the workbench's task list).
type State string

// The states of a task.
const (
	StateDone        State = "done"
	StateFailed      State = "failed"
	StateCancelled   State = "cancelled by you" // not recorded: a launch runs it
	StateInterrupted State = "interrupted"      // not recorded: a launch runs it
	StateToRun       State = "to run"           // never started, or started in no launch that said so
	StateRunning     State = "running"
)

// Event is the runner's progress.
type Event struct {
	Time  time.Time
	Kind  Kind
	Task  string        // label of the task (empty for Done)
	Key   string        // the task's key, for TaskControl.Cancel
	Stage string        // the task's current stage in words, e.g. "ROAR 30% (epoch 2/5)", for Progress
	Step  int           // the stage's own progress: Step of Steps (epochs, batches, rates)
	Steps int           //
	Done  int           // tasks finished or failed, of Total in this shard
	Total int           //
	ETA   time.Duration // estimate of the time left, 0 when unknown
	Err   string        // for Failed, for Repaired the damaged entry, for Warning the warning
}

// Runner runs one campaign (or one shard of it).
type Runner struct {
	Spec   *spec.Spec
	Run    *store.Run
	Cache  *store.Cache
	Kernel gemm.Kernel
	// Engine computes the networks (nil: native): the spec's engine,
	// opened by the caller (campaign.Run).
	Engine *model.Engine
	Shard  Shard
	// Events, when set, receives the progress; the runner blocks on it, so
	// its reader must keep reading until Done.
	Events chan<- Event
	// Tasks, when set, lets the caller stop single running tasks.
	Tasks *TaskControl
	// Stages totals the wall time of the campaign's stages (base model,
	// maps, retraining, masks, evaluation, …; protocol.Stage), for a
	// front end to report; nil: not kept.
	Stages *protocol.Stages

	mu      sync.Mutex
	builds  map[string]*build // artefacts being built, by key
	sets    map[string]*sets
	done    int
	total   int
	elapsed time.Duration // of the tasks finished in this session
	ran     int
	workers int
}

type build struct {
	once sync.Once
	v    any // the artefact: []byte, *data.Array
	err  error
}

type sets struct {
	once        sync.Once
	train, test *data.Dataset
	err         error
}

// Execute runs every task of the shard that the run has not finished and
// returns the number that failed. Cancelling ctx stops it within a second
// or two, with every finished task stored.
func (r *Runner) Execute(ctx context.Context) (failed int, err error) {
	if r.Stages != nil {
		ctx = protocol.WithStages(ctx, r.Stages)
	}
	log, err := r.Run.Read()
	if err != nil {
		return 0, err
	}
	finished := map[string]bool{}
	for k, rec := range store.Latest(log.Records) {
		finished[k] = rec.Error == ""
	}
	r.builds, r.sets = map[string]*build{}, map[string]*sets{}
	var todo, skipped []Task
	for _, t := range Plan(r.Spec) {
		if !r.Shard.Has(t) {
			continue
		}
		r.total++
		if finished[t.Key] {
			skipped = append(skipped, t)
			continue
		}
		todo = append(todo, t)
	}
	// Counted once the whole plan is: each skip says "k of all" (no worker
	// runs yet, so the counts need no lock).
	for _, t := range skipped {
		r.done++
		r.emit(Event{Kind: Skipped, Task: t.Label, Key: t.Key})
	}
	workers := r.Spec.Workers
	if workers <= 0 {
		workers = max(1, runtime.NumCPU()/8) // each task's engine already uses up to 8 cores
	}
	r.workers = min(workers, max(1, len(todo)))
	queue := make(chan Task)
	var wg sync.WaitGroup
	var failures int
	var storeErr error
	for range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range queue {
				rec, alone, started := r.task(ctx, t)
				if ctx.Err() != nil {
					if started {
						// Cut short by the campaign's end: not a result.
						kind := Interrupted
						if errors.Is(context.Cause(ctx), ErrStoppedByUser) {
							kind = Cancelled
						}
						r.emit(Event{Kind: kind, Task: t.Label, Key: t.Key})
					}
					return
				}
				if alone {
					r.mu.Lock()
					r.done++
					r.mu.Unlock()
					r.emit(Event{Kind: Cancelled, Task: t.Label, Key: t.Key})
					continue
				}
				r.mu.Lock()
				if err := r.Run.Append(rec); err != nil && storeErr == nil {
					storeErr = err
				}
				r.done++
				if rec.Error != "" {
					failures++
				} else {
					r.elapsed += time.Duration(rec.Seconds * float64(time.Second))
					r.ran++
				}
				r.mu.Unlock()
				if rec.Error != "" {
					r.emit(Event{Kind: Failed, Task: t.Label, Key: t.Key, Err: rec.Error})
				} else {
					r.emit(Event{Kind: Finished, Task: t.Label, Key: t.Key})
				}
			}
		}()
	}
feed:
	for _, t := range todo {
		select {
		case queue <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	r.emit(Event{Kind: Done})
	if storeErr != nil {
		return failures, fmt.Errorf("storing results: %w", storeErr)
	}
	return failures, ctx.Err()
}

// emit sends an event with the campaign's counts and ETA filled in.
func (r *Runner) emit(e Event) {
	if r.Events == nil {
		return
	}
	r.mu.Lock()
	e.Time, e.Done, e.Total = time.Now(), r.done, r.total
	if r.ran > 0 {
		e.ETA = r.elapsed / time.Duration(r.ran) * time.Duration(r.total-r.done) / time.Duration(r.workers)
	}
	r.mu.Unlock()
	r.Events <- e
}

// task runs one task and returns its record (with the error, if it
// failed); alone reports that the task was cancelled by itself
// (TaskControl), with no record to keep; started, that it began before
// the campaign's context ended.
func (r *Runner) task(ctx context.Context, t Task) (rec store.Record, alone, started bool) {
	parent := ctx
	if parent.Err() != nil {
		return rec, false, false // taken from the queue as the campaign stopped
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if r.Tasks != nil {
		defer r.Tasks.running(t.Key, cancel)()
	}
	rec = r.run(ctx, t)
	return rec, ctx.Err() != nil && parent.Err() == nil, true
}

// run runs one task and returns its record.
func (r *Runner) run(ctx context.Context, t Task) store.Record {
	s := r.Spec
	ds, meth, post, pr := s.Datasets[t.Dataset], s.Methods[t.Method], s.Post[t.Post], s.Protocols[t.Protocol]
	rec := store.Record{Task: t.Key, Label: t.Label, Dataset: dsName(ds), Method: meth.Label(), Post: post,
		Protocol: pr.Name, Seed: t.Seed, Faithlab: model.Version}
	r.emit(Event{Kind: Started, Task: t.Label, Key: t.Key})
	t0 := time.Now()
	prot, err := pr.New()
	var res protocol.Result
	if err == nil {
		rec.Protocol = prot.Info().Name
		err = protocol.Stage(ctx, "protocol", func(ctx context.Context) error {
			var err error
			var mu sync.Mutex
			res, rec.Model, err = r.evaluate(ctx, t, prot, func(split, key string) {
				mu.Lock()
				defer mu.Unlock()
				if rec.Maps == nil {
					rec.Maps = map[string]string{}
				}
				rec.Maps[split] = key
			})
			return err
		})
	}
	if err == nil {
		err = r.keepSamples(t, res.Samples)
	}
	rec.Seconds, rec.Finished = time.Since(t0).Seconds(), time.Now().UTC()
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	rec.Result = &res
	return rec
}

// keepSamples stores each sample's values in the cache as .npy under a key
// of the task and the sample's name, and records the key in the sample.
func (r *Runner) keepSamples(t Task, samples []protocol.Sample) error {
	for i, sm := range samples {
		var buf bytes.Buffer
		if err := data.EncodeNPY(&buf, sm.Shape, sm.Values); err != nil {
			return fmt.Errorf("sample %s: %w", sm.Name, err)
		}
		key := store.Key("sample", t.Key, sm.Name)
		if err := r.Cache.Put(key, ".npy", buf.Bytes()); err != nil {
			return fmt.Errorf("sample %s: %w", sm.Name, err)
		}
		samples[i].Key = key
	}
	return nil
}

// evaluate runs the task's protocol and returns its result and the name of
// the model it explained; usedMaps hears the cache key of each split's
// maps the protocol asked for.
func (r *Runner) evaluate(ctx context.Context, t Task, prot protocol.Protocol, usedMaps func(split, key string)) (protocol.Result, string, error) {
	s := r.Spec
	meth, post := s.Methods[t.Method], s.Post[t.Post]
	progress := func(stage string, step, steps int) {
		r.emit(Event{Kind: Progress, Task: t.Label, Key: t.Key, Stage: stage, Step: step, Steps: steps})
	}
	base := t.Base
	m, trainSet, testSet, err := r.inputs(ctx, t, meth, progress)
	if err != nil {
		return protocol.Result{}, "", err
	}
	name := s.Model.File
	if name == "" {
		name = fmt.Sprintf("%s (%s)", m.Arch, base[:12])
	}
	method, err := meth.New(attr.Setup{Seed: t.Seed, Chunk: 256, Train: trainSet.X, TrainN: trainSet.Len(), Truth: trainSet.Truth})
	if err != nil {
		return protocol.Result{}, name, err
	}
	steps, err := attr.ParseSteps(post)
	if err != nil {
		return protocol.Result{}, name, err
	}
	var recipe train.Config
	if m.Training != nil {
		recipe = m.Training.Config
	}
	recipe.Epochs, recipe.Seed, recipe.ValFraction = s.Retrain.Epochs, t.Seed, 0
	label := meth.Label()
	if post != "" {
		label += "+" + post
	}
	eng := r.engine()
	net, err := eng.Network(ctx, m)
	if err != nil {
		return protocol.Result{}, name, err
	}
	defer engine.Release(net)
	env := &protocol.Env{Net: net, Train: trainSet, Test: testSet, Method: label, Recipe: recipe, Seed: t.Seed,
		NewNet: func() (engine.Network, error) { return eng.Fresh(ctx, m, trainSet, t.Seed) },
		Models: &models{r: r, base: base, from: m, data: trainKey(s.Datasets[t.Dataset], trainSet)}, Artefacts: artefacts{r},
		Prior: func(_ context.Context, path string) (diffusion.Prior, string, error) {
			return r.openPrior(s.Datasets[t.Dataset].Ref, path)
		},
		Progress: func(p protocol.Progress) {
			if p.Train != nil {
				progress(fmt.Sprintf("%s (epoch %d/%d)", p.Stage, p.Train.Epoch, p.Train.Epochs), p.Train.Epoch-1, p.Train.Epochs)
			} else {
				progress(p.Stage, p.Done, p.Total)
			}
		}}
	splits := map[string]*data.Dataset{"train": trainSet, "test": testSet}
	// The model's predictions on a split, the maps' targets: the same for
	// every method, so made once and cached beside the maps.
	targets := func(ctx context.Context, split string) ([]int, error) {
		ds := splits[split]
		a, err := r.array(ctx, drawnKey(store.Key("targets", base, t.Seed, split, ds.Len()), ds), func() (*data.Array, error) {
			target, err := engine.Predicted(ctx, net, ds.X, ds.Len(), 1024)
			a := &data.Array{Shape: []int{len(target)}, Data: make([]float32, len(target))}
			for i, c := range target {
				a.Data[i] = float32(c)
			}
			return a, err
		})
		if err != nil {
			return nil, err
		}
		if len(a.Data) != ds.Len() {
			return nil, fmt.Errorf("the cache's predictions on the %s split hold %d inputs, want %d", split, len(a.Data), ds.Len())
		}
		target := make([]int, len(a.Data))
		for i, c := range a.Data {
			if c != float32(int(c)) || int(c) < 0 || int(c) >= len(ds.Classes) {
				return nil, fmt.Errorf("the cache's predictions on the %s split: input %d has class %g, want one of 0…%d", split, i, c, len(ds.Classes)-1)
			}
			target[i] = int(c)
		}
		return target, nil
	}
	env.Maps = func(ctx context.Context, split string) ([]float32, error) {
		ds := splits[split]
		key := drawnKey(store.Key("maps", base, label, s.Reduce, t.Seed, split, ds.Len()), ds)
		if fk := filesKey(meth); fk != "" {
			key = store.Key("maps", key, fk)
		}
		a, err := r.array(ctx, key, func() (*data.Array, error) {
			stage := fmt.Sprintf("%s maps of %d %s samples", label, ds.Len(), split)
			progress(stage, 0, mapSteps)
			var last time.Time // the methods report every batch: a few a second are shown
			ctx = attr.WithProgress(ctx, func(done float64) {
				if now := time.Now(); done >= 1 || now.Sub(last) >= 200*time.Millisecond {
					last = now
					progress(stage, int(done*mapSteps), mapSteps)
				}
			})
			var maps []float32
			err := protocol.Stage(ctx, "maps", func(ctx context.Context) error {
				target, err := targets(ctx, split)
				if err != nil {
					return err
				}
				index, rows := ds.SplitPositions() // a spec's test_samples of an image folder are drawn from its split
				maps, err = explain(ctx, method, steps, s.Reduce, net, attr.Input{X: ds.X, N: ds.Len(), Shape: ds.Shape, Split: split, Target: target, Index: index, Rows: rows, SourceLen: ds.SourceLen})
				return err
			})
			fs := protocol.FeatureShape(ds.Shape)
			return &data.Array{Shape: []int{ds.Len(), fs[1], fs[2]}, Data: maps}, err
		})
		if err != nil {
			return nil, err
		}
		usedMaps(split, key)
		return a.Data, nil
	}
	env.Explain = func(ctx context.Context, net engine.Network, x []float32, n int, target []int) ([]float32, error) {
		return explain(ctx, method, steps, s.Reduce, net, attr.Input{X: x, N: n, Shape: testSet.Shape, Target: target})
	}
	if perClass, err := knownTruth(net, testSet); err == nil {
		env.Truth = func(ctx context.Context, split string) ([]float32, error) {
			target, err := targets(ctx, split)
			if err != nil {
				return nil, err
			}
			return protocol.ClassTruth(perClass, target)
		}
	}
	if testSet.Masks != nil {
		env.Masks = func(ctx context.Context, split string) ([]float32, error) {
			if split == "train" {
				if trainSet.Masks == nil {
					return nil, fmt.Errorf("the training split carries no masks")
				}
				return trainSet.Masks, nil
			}
			return testSet.Masks, nil
		}
	}
	res, err := prot.Run(ctx, env)
	if err == nil {
		res.Checks = checks(ctx, prot, env)
		err = predict(ctx, net, testSet.Classes, testSet.Shape, res.Samples)
	}
	res.Data = data.Kind(testSet.Shape)
	if !testSet.Unlabelled { // no labels (a folder of images alone): no chance, no accuracy
		res.Chance = protocol.Chance(testSet)
	}
	if err == nil && testSet.Len() > 0 && !testSet.Unlabelled {
		// The explained model's accuracy, from its predictions (cached):
		// what a model that learned little is told by.
		pred, err := targets(ctx, "test")
		if err != nil {
			return res, name, err
		}
		hit := 0
		for i, c := range pred {
			if c == testSet.Y[i] {
				hit++
			}
		}
		res.Base = float64(hit) / float64(len(pred))
	}
	return res, name, err
}

// explain is the maps of in's targets on net, post-processed and, for
// colour images, reduced over channels: a split's maps (for the classes
// the model predicts) and protocol.Env's Explain.
func explain(ctx context.Context, meth attr.Method, steps []attr.Step, reduce string, net engine.Network, in attr.Input) ([]float32, error) {
	maps, err := attr.Run(ctx, meth, net, in)
	if err != nil {
		return nil, err
	}
	maps = attr.Apply(maps, steps)
	if fs := protocol.FeatureShape(in.Shape); maps.Shape[1] > 1 && fs[2] == in.Shape[2] {
		if maps, err = attr.ReduceChannels(maps, reduce); err != nil {
			return nil, err
		}
	}
	return maps.Data, nil
}

// mapSteps is the resolution of a maps stage's progress (Event.Steps).
const mapSteps = 1000

// knownTruth is the ground-truth attribution of each class when the problem
// has one: a linear model's weights (what the model does, exactly), else
// the data generator's (what tells the classes apart).
func knownTruth(net engine.Network, ds *data.Dataset) ([][]float32, error) {
	t, err := protocol.LinearTruth(net)
	if err != nil && ds.Truth != nil {
		return ds.Truth, nil
	}
	return t, err
}

// TaskControl lets a front end stop single tasks of a running campaign
// (the workbench's per-task cancel button). The zero value is ready.
type TaskControl struct {
	mu     sync.Mutex
	cancel map[string]context.CancelFunc
}

// Cancel stops the running task with the key; it reports whether one was
// running. The task is not recorded: a later run of the campaign does it.
func (c *TaskControl) Cancel(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.cancel[key]
	if f != nil {
		f()
	}
	return f != nil
}

// running registers a task's cancel function until the returned func runs.
func (c *TaskControl) running(key string, cancel context.CancelFunc) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel == nil {
		c.cancel = map[string]context.CancelFunc{}
	}
	c.cancel[key] = cancel
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.cancel, key)
	}
}
