package native

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// piece is how many samples one replica takes at a time, and the samples
// whose parameter gradient shares a slot; pass is how many of them one
// forward and backward take at a time, their parameter gradients added
// into the slot. A pass of 8 28×28 images keeps more of goar-cnn's
// activations and im2col buffers in a core's cache than one of 16 (c1's
// output alone is 72 KiB an image, against an L2 of 512 KiB on the machine
// measured); a whole batch of 256 spills them to memory, and the
// elementwise layers then wait on it. Pieces of 32 keep the slots to clear
// and sum, and the laid-out layers' gradients to flush, few. goar-cnn's
// training (faithlab-cli train, three alternating pairs of runs) went from
// 10 105–11 286 img/s an epoch in pieces of 16 to 11 573–12 091. The piece
// and pass sizes, not the core count, fix the order of every sum, so a
// gradient is the same bit for bit on any number of cores.
const (
	piece = 32
	pass  = 8
)

// inputPiece is the piece, and the pass, of a pass that wants no parameter
// gradient (an attribution's input gradients), which keeps more of its pass
// in cache: goar-cnn's saliency passes ran 8–25 % faster in pieces of 4
// than of 16 (BenchmarkGradientInput, alternating runs).
const inputPiece = 4

var _ engine.Gradienter = (*Net)(nil)

// Gradient implements engine.Gradienter. The batch is cut into pieces of
// 32 samples (4 when no parameter gradient is wanted) that replicas of the
// network — one per core, sharing its weights, each on a single-threaded
// GEMM — take through forward, outGrad and backward, 8 samples (4) at a
// time so that each pass runs in cache. Each piece's parameter gradient
// lands in its own slot and the slots are added in piece order. Batch
// statistics (batch norm in training) and DeepLift's rescale rule, whose
// reference is per batch, need the whole batch in one pass: those networks
// run Forward and Backward as usual.
func (m *Net) Gradient(ctx context.Context, x []float32, n int, want engine.Want, outGrad engine.OutputGrad) ([]float32, error) {
	if err := engine.CheckInput(x, n, m.shape); err != nil {
		return nil, fmt.Errorf("%s gradient: %w", m.arch, err)
	}
	if !m.pieceable() {
		return m.wholeBatch(ctx, x, n, want, outGrad)
	}
	m.n = 0 // what the replicas run leaves nothing here to differentiate
	piece, pass := m.gradientCut(n, want)
	pieces := (n + piece - 1) / piece
	reps := m.replicasFor(min(runtime.GOMAXPROCS(0), pieces))
	dim := engine.Size(m.shape)
	var dx []float32
	if want&engine.InputGrad != 0 {
		dx = grow(&m.dxin, n*dim)
	}
	var slots []float32
	size := m.paramSize()
	if want&engine.ParamGrad != 0 {
		slots = grow(&m.slots, pieces*size)
	}
	err := eachPiece(pieces, len(reps), func(r, p int) error {
		lo, hi := p*piece, min((p+1)*piece, n)
		var slot []float32
		if slots != nil {
			slot = slots[p*size : (p+1)*size]
		}
		return reps[r].piece(ctx, x[lo*dim:hi*dim], hi-lo, lo, pass, want, outGrad, dx, slot)
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%s gradient: %w", m.arch, err)
	}
	if slots != nil {
		addSlots(m.gradParams(), slots, pieces, size, &m.gradSum)
	}
	return dx, nil
}

// gradientCut is the piece and pass sizes of a Gradient call of n samples.
// A call of input gradients too small for two pieces is cut in two, so that
// two replicas share it: engine.Batch's four 224×224 images, in one piece,
// left a core idle through an attribution's passes. The cut follows the
// call's count and the input's shape, not the cores.
func (m *Net) gradientCut(n int, want engine.Want) (samples, perPass int) {
	if want&engine.ParamGrad != 0 {
		return piece, pass
	}
	p := m.samplesPerPass(inputPiece)
	if n > 1 && n <= p {
		p = (n + 1) / 2
	}
	return p, p
}

var _ engine.Inferrer = (*Net)(nil)

// Infer implements engine.Inferrer: the batch in passes of 8 samples
// (Gradient's) on one replica per core, forward only; large inputs a
// sample a pass (samplesPerPass), a transformer's four (inferPass). A forward pass of 1024 images through
// whole-batch layers holds hundreds of MB of activations and im2col
// buffers that spill out of cache; passes of 8 do not.
func (m *Net) Infer(ctx context.Context, x []float32, n int) ([]float32, error) {
	if err := engine.CheckInput(x, n, m.shape); err != nil {
		return nil, fmt.Errorf("%s forward: %w", m.arch, err)
	}
	pass := m.inferPass()
	if !m.pieceable() || n <= pass && pass > 1 {
		return m.forward(ctx, x, n)
	}
	m.n = 0
	pieces := (n + pass - 1) / pass
	reps := m.replicasFor(min(runtime.GOMAXPROCS(0), pieces))
	dim, k := engine.Size(m.shape), m.classes
	out := grow(&m.inferred, n*k)
	err := eachPiece(pieces, len(reps), func(r, p int) error {
		lo, hi := p*pass, min((p+1)*pass, n)
		logits, err := reps[r].forward(ctx, x[lo*dim:hi*dim], hi-lo)
		if err == nil {
			copy(out[lo*k:hi*k], logits)
		}
		return err
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%s forward: %w", m.arch, err)
	}
	return out, nil
}

// inferPass is how many samples a pass of Infer takes: Gradient's pass
// (samplesPerPass), but a transformer's large inputs in passes of
// inputPiece, as its input gradients: its GEMMs are a sample's tokens (197
// rows at 224×224) times a weight matrix that OpenBLAS packs again at
// every call, which a sample's rows alone leave a sixth of the GEMM's time
// (vit_b_16's forward in passes of 4 took 5–15 % less CPU than of 1).
func (m *Net) inferPass() int {
	p := m.samplesPerPass(pass)
	if p == 1 && slices.ContainsFunc(m.nodes, func(l node) bool { _, ok := l.(*rowLinear); return ok }) {
		p = m.samplesPerPass(inputPiece)
	}
	return p
}

// samplesPerPass is p, or 1 for inputs so large that a call carries fewer
// than p of them (engine.Batch: four 224×224 images): those then run a
// sample a pass on a replica per core, where a call's few ran in one pass
// on one core. The cut follows the input's shape, not the cores, so a
// sample's numbers do not depend on the machine.
func (m *Net) samplesPerPass(p int) int {
	if engine.Batch(m.shape, 0) < p {
		return 1
	}
	return p
}

// wholeBatch is Gradient for networks whose batch must not be cut, with
// ctx looked at between layers: resnet18 in training spends seconds in
// one whole-batch pass.
func (m *Net) wholeBatch(ctx context.Context, x []float32, n int, want engine.Want, outGrad engine.OutputGrad) ([]float32, error) {
	logits, err := m.forward(ctx, x, n)
	if err != nil {
		return nil, err
	}
	dl := make([]float32, len(logits))
	outGrad(0, logits, dl)
	return m.backward(ctx, dl, want)
}

// piece runs samples lo… of a batch (x holds n of them) forward and back on
// a replica, pass samples at a time: the input gradient goes to its rows of
// dx, the parameter gradient to slot (nil: none asked for).
func (m *Net) piece(ctx context.Context, x []float32, n, lo, pass int, want engine.Want, outGrad engine.OutputGrad, dx, slot []float32) error {
	if slot != nil {
		clear(slot)
		for _, q := range m.gradParams() {
			q.Grad, slot = slot[:len(q.Grad):len(q.Grad)], slot[len(q.Grad):]
		}
	}
	defer func() {
		for _, l := range m.lays {
			l.flushGrad()
		}
	}()
	dim := len(x) / n
	for s := 0; s < n; s += pass {
		e := min(s+pass, n)
		logits, err := m.forward(ctx, x[s*dim:e*dim], e-s)
		if err != nil {
			return err
		}
		dl := grow(&m.dlogits, len(logits))
		outGrad(lo+s, logits, dl)
		g, err := m.backward(ctx, dl, want)
		if err != nil {
			return err
		}
		if dx != nil {
			copy(dx[(lo+s)*dim:], g)
		}
	}
	return nil
}

// pieceable says whether a pass over part of a batch gives that part's share
// of the whole batch's pass.
func (m *Net) pieceable() bool {
	ok := true
	walk(m.nodes, func(l node) {
		switch l := l.(type) {
		case *batchNorm:
			ok = ok && !m.train
		case rescaler:
			ok = ok && !l.rescaling()
		}
	})
	return ok
}

// laidOut is a layer whose passes read its weights in a layout of their own
// (conv2d's permuted weights, winoLayer's transformed ones). Its forward pass
// makes the layout from the weights, unless the layer borrows its network's:
// a replica's layers read the layout their network made once before the
// pieces of a batch ran, instead of each making it again for every piece.
// Its weight gradient comes in that layout too: a borrowing layer adds the
// gradients of a piece's passes there and into its parameters' only at
// flushGrad, the end of the piece, instead of at every pass.
type laidOut interface {
	layout()
	borrow(from laidOut)
	flushGrad()
}

// laidOutLayers lists ls's laidOut layers, residual blocks' included, in order.
func laidOutLayers(ls []node) []laidOut {
	var out []laidOut
	walk(ls, func(l node) {
		if lo, ok := l.(laidOut); ok {
			out = append(out, lo)
		}
	})
	return out
}

// replicasFor returns k replicas: networks with m's layers on m's
// single-threaded kernel, sharing m's weights and their layouts (made here,
// from the weights as they are now) and nothing else.
func (m *Net) replicasFor(k int) []*Net {
	for len(m.replicas) < k {
		serial := gemm.Serial(m.kern)
		r, _ := newGraph(m.arch, m.shape, m.classes, serial, cloneNodes(m.nodes, serial), m.from) // m's shapes: cannot fail
		m.replicas = append(m.replicas, r)
	}
	reps := m.replicas[:k]
	own := m.paramPtrs()
	for _, l := range m.lays {
		l.layout()
	}
	for _, r := range reps {
		// Point at m's weights on every call: loading weights may have
		// replaced the slices since the replica was made.
		for i, q := range r.paramPtrs() {
			q.Data = own[i].Data
		}
		for i, l := range r.lays {
			l.borrow(m.lays[i])
		}
		r.train = m.train
	}
	return reps
}

// paramPtrs lists the parameters in Params' order, as pointers into the layers.
func (m *Net) paramPtrs() []*engine.Param {
	var ps []*engine.Param
	for _, l := range m.nodes {
		ps = append(ps, l.params()...)
	}
	return ps
}

// gradParams lists the parameters that have gradients (not batch norm's
// running statistics) in Params' order.
func (m *Net) gradParams() []*engine.Param {
	var ps []*engine.Param
	for _, q := range m.paramPtrs() {
		if q.Grad != nil {
			ps = append(ps, q)
		}
	}
	return ps
}

// paramSize is the number of values gradParams hold.
func (m *Net) paramSize() int {
	s := 0
	for _, q := range m.gradParams() {
		s += len(q.Grad)
	}
	return s
}

// walk calls f on every node, descending into residual blocks.
func walk[N node](ns []N, f func(node)) {
	for _, l := range ns {
		f(l)
		if r, ok := node(l).(*residual); ok {
			walk(r.main, f)
			walk(r.shortcut, f)
		}
	}
}
