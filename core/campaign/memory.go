package campaign

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/model"
	"faithlab/core/param"
	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/spec"
)

// A campaign's memory is the data, held once and shared by every task, and
// what the tasks running at once hold beside it: their maps, ranks and
// perturbed copies of the data, the previews their results keep and the
// filling's buffers (protocol.Footprint), the maps a task
// computes, the inputs of one engine call (engine.Batch: 2 MiB of them
// whatever their size), the explained network with the buffers its passes
// keep (measured on a copy: at 224×224 a ResNet-18-sized network's per-core
// pieces hold most of a task), a second such network where the task runs
// one beside it (MPRT's randomised copy, the answer's checks' copies of a
// faithfulness protocol: job.Checked), and the networks it trains with their
// optimiser state and each core's working buffers. None of it grows with the number of
// methods, seeds or tasks, nor with rates but for a result's eight
// previews at each: every artefact streams from the cache
// when a task needs it and is dropped when the task ends. Memory plans it
// before any work; Run refuses a campaign that cannot fit the user's cap
// (memory_gb, Settings' memory cap), and sets the collector's soft limit
// to the planned live heap, so that the process stays near the plan: the
// garbage of one stage is collected before it adds to the next stage's
// peak. Every term of Live is an upper bound (a task's maps, ranks and
// perturbed copies counted as if all were held at once), so the limit
// leaves the collector room above what is really live.

// MemoryPlan is what a campaign is expected to hold at its peak.
type MemoryPlan struct {
	Data    int64 // the datasets, in float32, once
	Task    int64 // the largest task's working set
	Workers int   // tasks at once
	Live    int64 // the runtime, the data and Workers tasks: the collector's soft limit
	Peak    int64 // the resident memory to expect: Live and the pages not yet returned
	// Worker is a PyTorch worker's own peak on this machine, measured when
	// a run starts it (Run): its process beside this one. 0 otherwise.
	Worker int64
}

// Memory model constants, from runs measured with /usr/bin/time -v on the
// shipped campaigns (make bench-campaigns): the Go runtime, the binary and
// the BLAS's buffers; and the resident memory above the soft limit (freed
// pages the runtime has not yet returned to the system).
const (
	runtimeBytes = 120 << 20
	headroom     = 1.1
)

// Memory plans the campaign's memory (see MemoryPlan) from its datasets'
// sizes, its protocols' footprints and its architecture.
func (c *Campaign) Memory() (MemoryPlan, error) {
	s := c.Spec
	var p MemoryPlan
	p.Workers = workers(s.Workers, len(c.Tasks(job.Shard{})))
	for _, d := range s.Datasets {
		trainSet, testSet, err := c.samples(d)
		if err != nil {
			return p, err
		}
		trainN, testN := int64(trainSet.Len()), int64(testSet.Len())
		dim := engine.Size(trainSet.Shape)
		fs := protocol.FeatureShape(trainSet.Shape)
		hw := fs[1] * fs[2]
		p.Data += (trainN + testN) * int64(4*dim+8)
		net, err := netBytes(s, trainSet)
		if err != nil {
			return p, err
		}
		for _, pr := range s.Protocols {
			proto, err := pr.New()
			if err != nil {
				return p, err
			}
			f := protocol.FootprintOf(proto, dim, hw)
			evaluated := testN
			if k, ok := param.Values(proto)["samples"].(int); ok && k > 0 && int64(k) < evaluated {
				evaluated = int64(k)
			}
			task := int64(f.Train*float64(trainN) + f.Test*float64(evaluated) + f.Held)
			// The maps a task computes (a method's first), before they
			// stream back from the cache.
			mapped := evaluated
			if f.Train > 0 {
				mapped = trainN
			}
			task += mapped*int64(4*dim) + batchBytes(trainSet.Shape, hw) + net.explained
			if f.Model || job.Checked(proto) {
				// A randomised copy, or the answer's checks' copy (perturbed,
				// then randomised: one at a time), each run as the model is
				// beside it; a vit_b_16's at 224×224 was 2 of a task's 5.9 GB.
				task += net.explained
			}
			if protocol.RetrainingsOf(proto) > 0 || f.Train > 0 {
				task += net.training
			}
			p.Task = max(p.Task, task)
		}
	}
	p.Live = runtimeBytes + p.Data + int64(p.Workers)*p.Task
	p.Peak = int64(float64(p.Live) * headroom)
	return p, nil
}

// workers is how many tasks the runner runs at once (job.Runner's rule).
func workers(spec, tasks int) int {
	w := spec
	if w <= 0 {
		w = max(1, runtime.NumCPU()/8)
	}
	return min(w, max(1, tasks))
}

// measuredPasses holds passBytes's figure for each network (model file,
// architecture, input shape, weight count, cores) this process has
// measured.
var measuredPasses sync.Map

// netSize is what the networks of a task hold: the explained one (its
// weights and the buffers its passes keep) and one being trained.
type netSize struct{ explained, training int64 }

// netBytes sizes the campaign's networks on ds. The explained network
// holds its weights and their gradient buffers (allocated by the native
// engine whatever the task: the runtime counts them against its limit,
// though an attribution never touches them and they stay out of the
// resident memory) and its pass buffers, measured (passBytes) on the
// native engine; an ONNX file is mapped while it is read and not held
// (onnx.ParseFile). On another engine the passes are the worker's, in its
// own process (MemoryPlan.Worker), and this one holds the weights three
// times (the torch engine's mirror: their values, their gradients and what
// the worker was last sent) and a TorchScript file's bytes, kept to build
// the module again in a new worker. Training holds the weights, their
// gradients and Adam's two moments, a gradient slot per piece of a batch,
// and each core's activations for a piece.
func netBytes(s *spec.Spec, ds *data.Dataset) (netSize, error) {
	arch := s.Model.Arch
	var m *model.Model
	if f := s.Model.File; f != "" {
		if model.IsTorchScript(f) {
			st, err := os.Stat(f)
			if err != nil {
				return netSize{}, err
			}
			w, err := model.ScriptWeightBytes(f)
			if err != nil {
				return netSize{}, err
			}
			return netSize{explained: st.Size() + 3*w}, nil
		}
		var err error
		if m, err = model.Load(f, gemm.Gonum{}); err != nil {
			return netSize{}, err
		}
		arch = m.Arch
	}
	if m == nil || m.ONNX == nil { // an ONNX model's own layers, else a fresh built-in
		var err error
		if m, err = model.New(arch, ds, gemm.Gonum{}, 1); err != nil {
			return netSize{}, err
		}
	}
	var params int64
	for _, q := range m.Net.Params() {
		params += int64(len(q.Data))
	}
	var size netSize
	size.explained = 2 * 4 * params // the weights and their gradient buffers
	if kind, _ := model.EngineKind(s.Engine); kind != "native" {
		size.explained = 3 * 4 * params
	} else {
		key := fmt.Sprint(s.Model.File, "|", arch, "|", ds.Shape, "|", params, "|", runtime.GOMAXPROCS(0))
		pass, ok := measuredPasses.Load(key)
		if !ok {
			b, err := passBytes(m.Net)
			if err != nil {
				return size, err
			}
			pass, _ = measuredPasses.LoadOrStore(key, b)
		}
		size.explained += pass.(int64)
	}
	const slots = 8 // a batch of 256 in pieces of 32, their passes of 8 samples
	activations := int64(runtime.GOMAXPROCS(0)) * 8 * int64(engine.Size(ds.Shape)) * 4 * 200
	size.training = params*4*(4+slots) + activations
	return size, nil
}

// passBytes measures the buffers a network keeps for the passes a task runs
// on it (passes, on a copy), as the heap it grew by, read after a
// collection before and after the passes (the copy's own weights made
// before): what the engine keeps for its layers, its per-core copies and
// their pieces. Measured rather than modelled, since
// those are the engine's own to choose; the same network gives the same
// figure to a few KiB — to a few tens under load — so a process measures
// a network once (measuredPasses) and every plan of it is the same.
func passBytes(net engine.Network) (int64, error) {
	// Two collections: a sync.Pool's items outlive one (its victim cache).
	probe := net.Clone()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := passes(context.Background(), probe); err != nil {
		return 0, err
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(probe)
	return max(0, int64(after.HeapAlloc)-int64(before.HeapAlloc)), nil
}

// passes runs on net the largest calls a task makes of it: a batch of
// logits and one of input gradients, engine.Batch inputs each (the size of
// the protocols' and the attributions' calls).
func passes(ctx context.Context, net engine.Network) error {
	shape := net.InputShape()
	n, k := engine.Batch(shape, 256), net.Classes()
	x := make([]float32, n*engine.Size(shape))
	if _, err := engine.Logits(ctx, net, x, n); err != nil {
		return fmt.Errorf("measuring %s's memory: %w", net.Arch(), err)
	}
	_, err := engine.Differentiate(ctx, net, x, n, engine.InputGrad, func(_ int, _, d []float32) {
		clear(d)
		for r := range len(d) / k {
			d[r*k] = 1
		}
	})
	if err != nil {
		return fmt.Errorf("measuring %s's memory: %w", net.Arch(), err)
	}
	return nil
}

// workerPeak runs what two tasks in turn ask of a PyTorch worker on this
// machine (pid) — each loads the campaign's network, runs its largest
// calls (passes) and releases it — and returns the worker's peak resident
// memory afterwards (Linux's VmHWM): what its own process holds, beside
// the campaign's. The second task's load, onto a heap the first one's
// passes have used, is the higher (at 224×224 a ResNet-18's load takes
// about three times its file for a moment). 0 where /proc does not say.
func (c *Campaign) workerPeak(ctx context.Context, eng *model.Engine, pid int) (int64, error) {
	s := c.Spec
	var m *model.Model
	var err error
	switch f := s.Model.File; {
	case f != "" && model.IsTorchScript(f):
		m, err = model.LoadTorchScript(f)
	case f != "":
		m, err = model.Load(f, gemm.Gonum{})
	default:
		var tr *data.Dataset
		if tr, _, err = c.samples(s.Datasets[0]); err == nil {
			m, err = model.New(s.Model.Arch, tr, gemm.Gonum{}, 1)
		}
	}
	if err != nil {
		return 0, err
	}
	for range 2 {
		net, err := eng.Network(ctx, m)
		if err != nil {
			return 0, err
		}
		err = passes(ctx, net)
		engine.Release(net)
		if err != nil {
			return 0, err
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, nil
	}
	for _, line := range strings.Split(string(status), "\n") {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			if err == nil {
				return v << 10, nil
			}
		}
	}
	return 0, nil
}

// batchBytes is what a task holds per engine call beside the network: the
// inputs of one call (engine.Batch of them; the protocols' perturbed
// copies and their masks), and an attribution's float64 sums for a block
// of them.
func batchBytes(shape []int, hw int) int64 {
	dim := int64(engine.Size(shape))
	return int64(engine.Batch(shape, 1024))*(4*dim+4*int64(hw)) + int64(engine.Batch(shape, 256))*8*dim
}

// String words the plan.
func (p MemoryPlan) String() string {
	s := fmt.Sprintf("peak memory about %s (the data %s, %s at once of up to %s each)", gib(p.Peak), gib(p.Data), report.Count(p.Workers, "task"), gib(p.Task))
	if p.Worker > 0 {
		s += fmt.Sprintf(", and the PyTorch worker's about %s", gib(p.Worker))
	}
	return s
}

// gib writes a byte count in GiB or MiB, as memory_gb and Settings' cap
// count it.
func gib(b int64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
