package campaign

import (
	"fmt"
	"runtime"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/job"
	"faithlab/core/model"
	"faithlab/core/param"
	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/spec"
)

// A campaign's memory is the data, held once and shared by every task, and
// what the tasks running at once hold beside it: their maps, ranks and
// perturbed copies of the data (protocol.Footprint), the maps a task
// computes, and the networks it trains with their optimiser state and
// each core's working buffers. None of it grows with the number of
// methods, rates, seeds or tasks: every artefact streams from the cache
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
			task := int64(f.Train*float64(trainN) + f.Test*float64(evaluated))
			// The maps a task computes (a method's first), before they
			// stream back from the cache.
			mapped := evaluated
			if f.Train > 0 {
				mapped = trainN
			}
			task += mapped * int64(4*dim)
			if protocol.RetrainingsOf(proto) > 0 || f.Train > 0 || f.Model {
				task += net
			}
			p.Task = max(p.Task, task+net)
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

// netBytes is what training one network of the campaign's architecture
// holds: its weights, gradients and Adam's two moments, a gradient slot per
// piece of a batch, and each core's activations for a piece.
func netBytes(s *spec.Spec, ds *data.Dataset) (int64, error) {
	arch := s.Model.Arch
	var m *model.Model
	if f := s.Model.File; f != "" {
		if model.IsTorchScript(f) {
			return 0, nil // in the PyTorch worker's process
		}
		var err error
		if m, err = model.Load(f, nil); err != nil {
			return 0, err
		}
		arch = m.Arch
	}
	if m == nil || m.ONNX == nil { // an ONNX model's own layers, else a fresh built-in
		var err error
		if m, err = model.New(arch, ds, nil, 1); err != nil {
			return 0, err
		}
	}
	var params int64
	for _, q := range m.Net.Params() {
		params += int64(len(q.Data))
	}
	const slots = 8 // a batch of 256 in pieces of 32, their passes of 8 samples
	activations := int64(runtime.GOMAXPROCS(0)) * 8 * int64(engine.Size(ds.Shape)) * 4 * 200
	return params*4*(4+slots) + activations, nil
}

// String words the plan.
func (p MemoryPlan) String() string {
	return fmt.Sprintf("peak memory about %s (the data %s, %s at once of up to %s each)", gib(p.Peak), gib(p.Data), report.Count(p.Workers, "task"), gib(p.Task))
}

// gib writes a byte count in GiB or MiB, as memory_gb and Settings' cap
// count it.
func gib(b int64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
