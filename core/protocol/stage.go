package protocol

import (
	"context"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

// A campaign's time goes to stages — the base model, maps, masks,
// retraining, evaluation, the shift diagnostics, the diffusion prior —
// and what a user waits for is their sum. Stage runs a piece of work as a
// named stage: its CPU samples carry the label stage=NAME (a CPU profile
// breaks the time down with go tool pprof -tags), and a Stages in the
// context (WithStages) adds its wall time, less that of the stages nested
// in it, to the stage's total.
func Stage(ctx context.Context, name string, f func(context.Context) error) error {
	st, _ := ctx.Value(stagesKey{}).(*Stages)
	parent, _ := ctx.Value(frameKey{}).(*frame)
	fr := &frame{parent: parent}
	ctx = context.WithValue(ctx, frameKey{}, fr)
	t0 := time.Now()
	var err error
	pprof.Do(ctx, pprof.Labels("stage", name), func(ctx context.Context) { err = f(ctx) })
	d := time.Since(t0)
	if parent != nil {
		parent.add(d)
	}
	if st != nil {
		st.add(name, d-fr.children())
	}
	return err
}

type stagesKey struct{}
type frameKey struct{}

// frame is a running stage: the wall time of the stages nested in it.
type frame struct {
	parent *frame
	mu     sync.Mutex
	nested time.Duration
}

func (f *frame) add(d time.Duration) {
	f.mu.Lock()
	f.nested += d
	f.mu.Unlock()
}

func (f *frame) children() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nested
}

// Stages totals the wall time of each stage (its own, without the stages
// nested in it), safe for concurrent use.
type Stages struct {
	mu    sync.Mutex
	order []string
	total map[string]time.Duration
}

// WithStages returns a context whose Stage calls add to st.
func WithStages(ctx context.Context, st *Stages) context.Context {
	return context.WithValue(ctx, stagesKey{}, st)
}

func (s *Stages) add(name string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total == nil {
		s.total = map[string]time.Duration{}
	}
	if _, ok := s.total[name]; !ok {
		s.order = append(s.order, name)
	}
	s.total[name] += d
}

// StageTime is one stage's total.
type StageTime struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
}

// Times lists the stages' totals in the order they first ran.
func (s *Stages) Times() []StageTime {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StageTime, len(s.order))
	for i, n := range s.order {
		out[i] = StageTime{n, s.total[n].Seconds()}
	}
	return out
}

// staged is Stage for work with a result.
func staged[T any](ctx context.Context, name string, f func(context.Context) (T, error)) (T, error) {
	var v T
	err := Stage(ctx, name, func(ctx context.Context) error {
		var err error
		v, err = f(ctx)
		return err
	})
	return v, err
}

// Stage names.
const (
	stageMasks   = "masks"             // ranking features and filling the removed ones
	stageEval    = "evaluation"        // the models' passes over the perturbed inputs
	stageShift   = "shift diagnostics" // how far the perturbed inputs lie from the data
	stagePrior   = "diffusion prior"   // projections and in-painting
	stageRetrain = "retraining"
)

// eachChunk runs f on [0, n) split into one contiguous chunk per core.
func eachChunk(n int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	for c := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(c*n/w, (c+1)*n/w)
		}()
	}
	wg.Wait()
}
