package torch

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"faithlab/core/engine"
)

// handle is a network's Go side: the request that builds it in a worker,
// its id there, and the weights it holds (Params), which are the truth:
// the worker's copy is brought up to date before each request with the
// parameters whose values changed since they were last sent (an
// optimiser's step, loaded weights, a best epoch restored), and the Go
// copy is refreshed after the worker changed them (training run there, a
// training-mode forward pass's batch-norm statistics, a reset).
type handle struct {
	e      *Engine
	id     int64
	gen    int // the worker generation it was built in; 0: not built yet
	build  map[string]any
	buildA []array // the build request's arrays (a script's bytes)
	shape  []int
	params []engine.Param // Data and (for parameters, not buffers) Grad
	synced [][]float32    // what the worker holds of each; nil: unknown
	layers []string
	cam    string
	train  bool
}

// layout is a built network's description.
type layout struct {
	Params []struct {
		Name  string `json:"name"`
		Shape []int  `json:"shape"`
		Grad  bool   `json:"grad"`
	} `json:"params"`
	Layers []string `json:"layers"`
	CAM    string   `json:"cam_layer"`
}

// newHandle builds a network in the engine's worker with the build
// request; its weights are zero until set (or fetched with fetch).
func newHandle(ctx context.Context, e *Engine, build map[string]any, buildA []array, shape []int, fetch bool) (*handle, error) {
	h := &handle{e: e, id: e.newID(), build: build, buildA: buildA, shape: slices.Clone(shape)}
	w, gen, err := e.conn(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.construct(ctx, w, gen); err != nil {
		return nil, err
	}
	if fetch { // the worker's weights are the truth: take them as they are
		f, err := w.call(ctx, map[string]any{"op": "get_params", "net": h.id}, nil, nil)
		if err != nil {
			return nil, err
		}
		if err := h.receive(f, "param:"); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// construct runs the build request in worker w (generation gen) and
// checks the layout against the weights held, or makes them.
func (h *handle) construct(ctx context.Context, w *worker, gen int) error {
	req := maps.Clone(h.build)
	req["net"] = h.id
	if free := h.e.takeFree(); len(free) > 0 {
		req["free"] = free // before the build: a released network's module is not held beside the new one
	}
	f, err := w.call(ctx, req, h.buildA, nil)
	if err != nil {
		return err
	}
	var l layout
	if err := f.decode(&l); err != nil {
		return fmt.Errorf("torch worker on %s: %s: %w", w.t.where(), req["op"], err)
	}
	if h.params == nil {
		for _, p := range l.Params {
			q := engine.Param{Name: p.Name, Shape: p.Shape, Data: make([]float32, engine.Size(p.Shape))}
			if p.Grad {
				q.Grad = make([]float32, len(q.Data))
			}
			h.params = append(h.params, q)
		}
	} else if len(l.Params) != len(h.params) {
		return fmt.Errorf("torch worker on %s rebuilt the network with %d parameters, not %d", w.t.where(), len(l.Params), len(h.params))
	} else {
		for i, p := range l.Params {
			if p.Name != h.params[i].Name || !slices.Equal(p.Shape, h.params[i].Shape) {
				return fmt.Errorf("torch worker on %s rebuilt parameter %d as %s %v, not %s %v", w.t.where(), i, p.Name, p.Shape, h.params[i].Name, h.params[i].Shape)
			}
		}
	}
	h.layers, h.cam, h.gen, h.synced = l.Layers, l.CAM, gen, nil
	return nil
}

// request runs op on the network: it rebuilds the network in a new worker
// when the last one died, sends the changed weights with the request, and
// returns the reply.
func (h *handle) request(ctx context.Context, op string, fields map[string]any, arrays []array, event func(*frame)) (*frame, error) {
	w, gen, err := h.e.conn(ctx)
	if err != nil {
		return nil, err
	}
	if h.gen != gen {
		if err := h.construct(ctx, w, gen); err != nil {
			return nil, err
		}
	}
	req := map[string]any{"op": op, "net": h.id, "train": h.train}
	maps.Copy(req, fields)
	if free := h.e.takeFree(); len(free) > 0 {
		req["free"] = free
	}
	var sent []int
	if h.synced == nil {
		h.synced = make([][]float32, len(h.params))
	}
	for i, p := range h.params {
		if s := h.synced[i]; s == nil || !slices.Equal(s, p.Data) {
			arrays = append(arrays, f32("param:"+p.Name, p.Data, p.Shape...))
			sent = append(sent, i)
		}
	}
	f, err := w.call(ctx, req, arrays, event)
	if err != nil {
		// A failed or cancelled request may have left the worker's weights
		// anywhere (an epoch cut short): send them all next time.
		h.synced = nil
		return nil, err
	}
	for _, i := range sent {
		h.synced[i] = append(h.synced[i][:0], h.params[i].Data...)
	}
	return f, nil
}

// receive copies the reply's arrays named prefix+NAME into the weights
// (and what the worker holds).
func (h *handle) receive(f *frame, prefix string) error {
	if h.synced == nil {
		h.synced = make([][]float32, len(h.params))
	}
	for i, p := range h.params {
		a, ok := f.byName[prefix+p.Name]
		if !ok {
			continue
		}
		if len(a.F) != len(p.Data) {
			return fmt.Errorf("torch worker sent %d values of %s, which holds %d", len(a.F), p.Name, len(p.Data))
		}
		copy(p.Data, a.F)
		h.synced[i] = append(h.synced[i][:0], a.F...)
	}
	return nil
}

// addGrads adds the reply's parameter gradients ("grad:NAME") to Grad.
func (h *handle) addGrads(f *frame) error {
	for _, p := range h.params {
		if p.Grad == nil {
			continue
		}
		g, ok := f.byName["grad:"+p.Name]
		if !ok {
			return fmt.Errorf("torch worker sent no gradient of %s", p.Name)
		}
		if len(g.F) != len(p.Grad) {
			return fmt.Errorf("torch worker sent %d gradient values of %s, which holds %d", len(g.F), p.Name, len(p.Grad))
		}
		for i, v := range g.F {
			p.Grad[i] += v
		}
	}
	return nil
}

// clone is an unbuilt copy with its own weights, built in the worker on
// its first request.
func (h *handle) clone() *handle {
	c := &handle{e: h.e, id: h.e.newID(), build: h.build, buildA: h.buildA, shape: h.shape,
		layers: h.layers, cam: h.cam, train: h.train}
	for _, p := range h.params {
		q := engine.Param{Name: p.Name, Shape: p.Shape, Data: slices.Clone(p.Data)}
		if p.Grad != nil {
			q.Grad = make([]float32, len(p.Grad))
		}
		c.params = append(c.params, q)
	}
	return c
}

// Params lists the weights: parameters and batch-norm statistics (whose
// Grad is nil), by PyTorch's state_dict names, in its order. Data and
// Grad are the network's own: writing Data changes the weights.
func (h *handle) Params() []engine.Param { return slices.Clone(h.params) }
