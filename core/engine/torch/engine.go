package torch

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// Options tune how workers start and how long they may stay silent. The
// zero value is ready.
type Options struct {
	// NonDeterministic lets cuDNN pick its fastest, non-deterministic
	// algorithms; by default the worker sets cudnn.deterministic and
	// torch.use_deterministic_algorithms (warn only).
	NonDeterministic bool
	// StartTimeout bounds a worker's start: ssh login, Python, import
	// torch, CUDA (default 2 min).
	StartTimeout time.Duration
	// HangTimeout is how long a request may go without a reply or a
	// heartbeat (the worker sends one every HangTimeout/10, at most every
	// 2 s) before the worker is taken for hung and stopped (default 60 s).
	HangTimeout time.Duration
	// CancelGrace is how long a cancelled request may take to stop before
	// the worker is stopped (default 20 s).
	CancelGrace time.Duration
	// SSH is the ssh program (default "ssh").
	SSH string
	// Stderr, when set, receives a copy of the worker's stderr.
	Stderr io.Writer
}

func (o Options) startTimeout() time.Duration { return or(o.StartTimeout, 2*time.Minute) }
func (o Options) hangTimeout() time.Duration  { return or(o.HangTimeout, time.Minute) }
func (o Options) cancelGrace() time.Duration  { return or(o.CancelGrace, 20*time.Second) }
func (o Options) heartbeat() time.Duration    { return min(2*time.Second, o.hangTimeout()/10) }

func (o Options) sshProgram() string {
	if o.SSH != "" {
		return o.SSH
	}
	return "ssh"
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Info describes an engine's worker, for a run's manifest.
type Info struct {
	Engine        string `json:"engine"`        // the setting, e.g. "torch@ssh://gpu1"
	Torch         string `json:"torch_version"` // torch.__version__
	Python        string `json:"python"`
	Device        string `json:"device"` // "cpu", "cuda:0"
	DeviceName    string `json:"device_name"`
	CUDA          string `json:"cuda,omitempty"`
	Threads       int    `json:"threads"`
	Deterministic bool   `json:"deterministic"`
	PID           int    `json:"pid"` // the worker's process, on its machine
}

// Engine serves networks from a PyTorch worker process. Its networks
// keep their weights on the Go side too (Params), so that a worker that
// died is replaced on the next request and each network rebuilt there
// from what it holds; the request under way when it died fails.
// An Engine is safe for concurrent use: requests from its networks are
// served one at a time.
type Engine struct {
	t   Target
	opt Options

	mu     sync.Mutex
	w      *worker
	gen    int   // counts the workers started; a network built in an older one is rebuilt
	nextID int64 // network ids, unique over the engine's life
	free   []int64
	closed bool
}

// Open parses an engine setting (see Target) and starts its worker, so
// that a missing interpreter, torch or host is reported at once.
func Open(ctx context.Context, setting string, opt Options) (*Engine, error) {
	t, err := ParseTarget(setting)
	if err != nil {
		return nil, err
	}
	e := &Engine{t: t, opt: opt}
	if _, _, err := e.conn(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// Target is where the engine's worker runs.
func (e *Engine) Target() Target { return e.t }

// Info describes the running worker (starting one if none runs).
func (e *Engine) Info(ctx context.Context) (Info, error) {
	w, _, err := e.conn(ctx)
	if err != nil {
		return Info{Engine: e.t.String()}, err
	}
	h := w.hello
	return Info{Engine: e.t.String(), Torch: h.Torch, Python: h.Python, Device: h.Device, DeviceName: h.DeviceName,
		CUDA: h.CUDA, Threads: h.Threads, Deterministic: h.Deterministic, PID: h.PID}, nil
}

// Close ends the worker. The engine's networks fail afterwards.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	if e.w != nil {
		e.w.close()
		e.w = nil
	}
	return nil
}

// conn returns the running worker and its generation, starting one when
// none runs or the last one broke.
func (e *Engine) conn(ctx context.Context) (*worker, int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, 0, fmt.Errorf("torch engine on %s is closed", e.t.where())
	}
	if e.w != nil && e.w.broken == nil {
		return e.w, e.gen, nil
	}
	if e.w != nil {
		go e.w.close() // already killed: collect it
		e.w = nil
	}
	w, err := startWorker(ctx, e.t, e.opt)
	if err != nil {
		return nil, 0, err
	}
	e.w, e.free = w, nil
	e.gen++
	return w, e.gen, nil
}

// alive reports whether worker generation gen still runs unbroken.
func (e *Engine) alive(gen int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.w != nil && e.w.broken == nil && e.gen == gen
}

// newID returns a fresh network id.
func (e *Engine) newID() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextID++
	return e.nextID
}

// release queues a collected network's id; the next request frees it
// in the worker.
func (e *Engine) release(id int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.free = append(e.free, id)
}

// takeFree returns the queued ids and empties the queue.
func (e *Engine) takeFree() []int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := e.free
	e.free = nil
	return f
}
