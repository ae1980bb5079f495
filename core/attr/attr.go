package attr

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"faithlab/core/engine"
)

// Input is a batch to explain.
type Input struct {
	X      []float32 // n×C×H×W
	N      int
	Shape  []int // C, H, W
	Target []int // the class explained for each sample
	// Split ("train" or "test") and Index (each sample's position in it;
	// nil: 0…N−1) say which dataset inputs these are, for a method that
	// looks maps up rather than computing them (File).
	Split string
	Index []int
	// Rows, indexed by position in the split, is each input's position
	// among the SourceLen samples of the file the split was drawn from,
	// where Faithlab split that file itself (data.Dataset.Rows); nil
	// otherwise.
	Rows      []int
	SourceLen int
}

// Dim is the number of values in one sample.
func (in Input) Dim() int { return engine.Size(in.Shape) }

// Sample returns sample i (a view).
func (in Input) Sample(i int) []float32 { return in.X[i*in.Dim() : (i+1)*in.Dim()] }

func (in Input) check(classes int) error {
	if err := engine.CheckInput(in.X, in.N, in.Shape); err != nil {
		return err
	}
	if len(in.Target) != in.N {
		return fmt.Errorf("%d targets for %d samples", len(in.Target), in.N)
	}
	for i, t := range in.Target {
		if t < 0 || t >= classes {
			return fmt.Errorf("sample %d: target class %d outside [0, %d)", i, t, classes)
		}
	}
	return nil
}

// Maps is a batch of attribution maps, Shape = [n, C or 1, H, W].
type Maps struct {
	Data  []float32
	Shape []int
}

// N is the number of maps.
func (m Maps) N() int { return m.Shape[0] }

// Per is the number of values in one map.
func (m Maps) Per() int { return engine.Size(m.Shape[1:]) }

// Map returns map i (a view).
func (m Maps) Map(i int) []float32 { return m.Data[i*m.Per() : (i+1)*m.Per()] }

// Method is a feature-attribution method.
type Method interface {
	// Name is the method's name as in the literature, e.g. "IntegratedGradients".
	Name() string
	// Settings are the method's parameters, recorded with every map it makes.
	Settings() map[string]any
	// Attribute explains the batch's targets for net.
	Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error)
}

// Run checks the input, runs the method and checks that every value of the
// result is finite.
func Run(ctx context.Context, m Method, net engine.Network, in Input) (Maps, error) {
	if !slices.Equal(in.Shape, net.InputShape()) {
		return Maps{}, fmt.Errorf("%s: inputs of shape %v, %s expects %v", m.Name(), in.Shape, net.Arch(), net.InputShape())
	}
	if err := in.check(net.Classes()); err != nil {
		return Maps{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	out, err := m.Attribute(ctx, net, in)
	if err != nil {
		return Maps{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	for i, v := range out.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return Maps{}, fmt.Errorf("%s: map %d holds %g at offset %d", m.Name(), i/out.Per(), v, i%out.Per())
		}
	}
	return out, nil
}

// gradients computes, for m generated inputs, the gradient of each one's
// target logit. fill(i, dst) writes input i into dst, and is called
// concurrently for different i (it must only read shared state); the inputs are
// generated and differentiated in chunks of at most chunk, so memory stays
// bounded however many inputs (samples × steps) there are. Each gradient is
// handed to use(i, grad), which must copy what it keeps.
func gradients(ctx context.Context, net engine.Network, m, chunk int, fill func(i int, dst []float32), target func(i int) int, use func(i int, grad []float32)) error {
	chunk = engine.Batch(net.InputShape(), cmp.Or(max(chunk, 0), 256))
	dim := engine.Size(net.InputShape())
	k := net.Classes()
	c := min(chunk, m)
	xs := make([]float32, c*dim)
	for lo := 0; lo < m; lo += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+chunk, m)
		fillRows(xs, dim, lo, hi, fill)
		g, err := engine.Differentiate(ctx, net, xs[:(hi-lo)*dim], hi-lo, engine.InputGrad, func(first int, _, d []float32) {
			clear(d)
			for r := range len(d) / k {
				d[r*k+target(lo+first+r)] = 1
			}
		})
		if err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			use(i, g[(i-lo)*dim:(i-lo+1)*dim])
		}
		report(ctx, float64(hi)/float64(m))
	}
	return nil
}

// Progress is told, while a method computes maps, the fraction of the work
// done so far: from 0 to 1, never decreasing, after every batch through
// the engine (the gradient methods; the others report nothing). A front
// end sets it with WithProgress and shows the maps' stage moving.
type Progress func(done float64)

type progressKey struct{}

// WithProgress returns a context under which methods report to p.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// report tells ctx's Progress, if any, the fraction done.
func report(ctx context.Context, done float64) {
	if p, ok := ctx.Value(progressKey{}).(Progress); ok && p != nil {
		p(done)
	}
}

// within returns a context under which a part's reports (0 to 1) count as
// lo to hi of the whole: a block of inputs among all of them.
func within(ctx context.Context, lo, hi float64) context.Context {
	p, ok := ctx.Value(progressKey{}).(Progress)
	if !ok || p == nil {
		return ctx
	}
	return WithProgress(ctx, func(f float64) { p(lo + (hi-lo)*f) })
}

// inBlocks runs f over in's samples a block of chunk samples (chunk ≤ 0:
// 256) at a time — f(block, first, out) writes the block's maps, whose
// first sample is in's sample first, into out — and returns the whole
// maps. A method's float64 accumulators then hold a block, not the whole
// input: for a 60 000-image training set, MB instead of GB. A block of
// chunk samples has a multiple of chunk rows whatever the draws per
// sample, so gradients cuts a block's rows where it cuts the whole
// input's: the maps are the same bit for bit.
// Progress reports count each block's part of the whole (within).
func inBlocks(ctx context.Context, in Input, chunk int, f func(ctx context.Context, block Input, first int, out []float32) error) (Maps, error) {
	chunk = engine.Batch(in.Shape, cmp.Or(max(chunk, 0), 256)) // as gradients cuts the rows

	dim := in.Dim()
	out := Maps{Data: make([]float32, len(in.X)), Shape: append([]int{in.N}, in.Shape...)}
	for lo := 0; lo < in.N; lo += chunk {
		hi := min(lo+chunk, in.N)
		b := Input{X: in.X[lo*dim : hi*dim], N: hi - lo, Shape: in.Shape, Target: in.Target[lo:hi]}
		part := within(ctx, float64(lo)/float64(in.N), float64(hi)/float64(in.N))
		if err := f(part, b, lo, out.Data[lo*dim:hi*dim]); err != nil {
			return Maps{}, err
		}
	}
	return out, nil
}

// reuse returns buf resliced to n zeros, growing it only when too small.
func reuse(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	*buf = (*buf)[:n]
	clear(*buf)
	return *buf
}

// fillRows generates inputs lo..hi−1 into xs on all cores: drawing noise
// and interpolating paths is serial work that would otherwise idle a core
// between engine calls.
func fillRows(xs []float32, dim, lo, hi int, fill func(i int, dst []float32)) {
	w := min(runtime.GOMAXPROCS(0), hi-lo)
	var wg sync.WaitGroup
	for p := 0; p < w; p++ {
		a, b := lo+p*(hi-lo)/w, lo+(p+1)*(hi-lo)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := a; i < b; i++ {
				fill(i, xs[(i-lo)*dim:(i-lo+1)*dim])
			}
		}()
	}
	wg.Wait()
}
