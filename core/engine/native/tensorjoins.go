package native

import (
	"fmt"
	"slices"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

// The tensor junctions (batched matrix products, broadcasting arithmetic,
// concatenation along any axis) and arithmetic with a constant.

// ---- Broadcasting ----

// broadcast is how two per-sample shapes, aligned on their last axes,
// combine: the output's shape and each operand's strides along it (0
// where the operand has one value along an axis the output has more of);
// runs, ra and rb are the same with adjacent axes merged where both
// operands allow (coalesce), which the arithmetic walks.
type broadcast struct {
	out          []int
	sa, sb       []int
	runs         []int
	ra, rb       []int
	fullA, fullB bool // the operand has the output's shape
}

func newBroadcast(a, b []int) (broadcast, error) {
	r := max(len(a), len(b))
	pad := func(s []int) []int { return append(slices.Repeat([]int{1}, r-len(s)), s...) }
	pa, pb := pad(a), pad(b)
	bc := broadcast{out: make([]int, r), sa: make([]int, r), sb: make([]int, r)}
	ta, tb := rowStrides(pa), rowStrides(pb)
	for i := range r {
		switch {
		case pa[i] == pb[i]:
			bc.out[i], bc.sa[i], bc.sb[i] = pa[i], ta[i], tb[i]
		case pa[i] == 1:
			bc.out[i], bc.sb[i] = pb[i], tb[i]
		case pb[i] == 1:
			bc.out[i], bc.sa[i] = pa[i], ta[i]
		default:
			return bc, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
		}
	}
	if r == 0 || r > maxTensorRank {
		return bc, fmt.Errorf("shapes %v and %v: 1 to %d dimensions", a, b, maxTensorRank)
	}
	bc.runs, bc.ra, bc.rb = coalesce(bc.out, bc.sa, bc.sb)
	bc.fullA, bc.fullB = prod(a) == prod(bc.out), prod(b) == prod(bc.out)
	return bc, nil
}

// each calls f for every run of the output's last axis: its offset in
// the output and in each operand (one sample's, from 0).
func (bc broadcast) each(f func(o, ia, ib int)) { eachRun(bc.out, bc.sa, bc.sb, f) }

// eachRun is each over the axes out, walked at strides sa and sb.
func eachRun(out, sa, sb []int, f func(o, ia, ib int)) {
	r := len(out)
	last := out[r-1]
	var idx [maxTensorRank]int
	ia, ib := 0, 0
	total := prod(out)
	for o := 0; o < total; o += last {
		f(o, ia, ib)
		for a := r - 2; a >= 0; a-- {
			idx[a]++
			ia += sa[a]
			ib += sb[a]
			if idx[a] < out[a] {
				break
			}
			ia -= sa[a] * out[a]
			ib -= sb[a] * out[a]
			idx[a] = 0
		}
	}
}

// apply computes y = a op b over one sample.
func (bc broadcast) apply(fn string, y, a, b []float32) {
	r := len(bc.runs)
	last, la, lb := bc.runs[r-1], bc.ra[r-1], bc.rb[r-1]
	eachRun(bc.runs, bc.ra, bc.rb, func(o, ia, ib int) {
		runOp(fn, y[o:o+last], a[ia:], la, b[ib:], lb)
	})
}

// grads adds the operands' gradients into da, db (nil: not wanted) from
// dy over one sample; where an operand has the output's shape and setA
// (setB) says its gradient holds zeros, each of its values is written
// once instead.
func (bc broadcast) grads(fn string, dy, a, b, da, db []float32, setA bool) {
	r := len(bc.runs)
	last, la, lb := bc.runs[r-1], bc.ra[r-1], bc.rb[r-1]
	setA = setA && bc.fullA
	eachRun(bc.runs, bc.ra, bc.rb, func(o, ia, ib int) {
		var ga, gb []float32
		if da != nil {
			ga = da[ia:]
		}
		if db != nil {
			gb = db[ib:]
		}
		runGrad(fn, dy[o:o+last], a[ia:], la, b[ib:], lb, ga, gb, setA)
	})
}

var elementwiseFns = []string{"add", "sub", "mul", "div", "pow"}

// elementwise is a op b of two activations whose per-sample shapes
// broadcast.
type elementwise struct {
	nm     string
	fn     string
	ia, ib dims
	sa, sb []int
	bc     broadcast
	y      []float32
	xs     [][]float32
	dx     [2][]float32
}

func newElementwise(name, fn string, ins []dims, sa, sb []int) (*elementwise, error) {
	if !slices.Contains(elementwiseFns, fn) || len(ins) != 2 {
		return nil, fmt.Errorf("elementwise layer %s: %q of %d inputs", name, fn, len(ins))
	}
	if err := errorsJoin(checkShape("elementwise", name, sa, ins[0]), checkShape("elementwise", name, sb, ins[1])); err != nil {
		return nil, err
	}
	bc, err := newBroadcast(sa, sb)
	if err != nil {
		return nil, fmt.Errorf("elementwise layer %s: %w", name, err)
	}
	return &elementwise{nm: name, fn: fn, ia: ins[0], ib: ins[1], sa: slices.Clone(sa), sb: slices.Clone(sb), bc: bc}, nil
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (l *elementwise) name() string            { return l.nm }
func (l *elementwise) ins() []dims             { return []dims{l.ia, l.ib} }
func (l *elementwise) out() dims               { return vecDims(prod(l.bc.out)) }
func (l *elementwise) params() []*engine.Param { return nil }
func (l *elementwise) tensorShape() []int      { return l.bc.out }
func (l *elementwise) copy() junction {
	return &elementwise{nm: l.nm, fn: l.fn, ia: l.ia, ib: l.ib, sa: l.sa, sb: l.sb, bc: l.bc}
}

func (l *elementwise) join(xs [][]float32, n int) []float32 {
	l.xs = append(l.xs[:0], xs...)
	out, pa, pb := prod(l.bc.out), l.ia.size(), l.ib.size()
	y := grow(&l.y, n*out)
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			l.bc.apply(l.fn, y[s*out:(s+1)*out], xs[0][s*pa:(s+1)*pa], xs[1][s*pb:(s+1)*pb])
		}
	})
	return y
}

func (l *elementwise) split(dy []float32, n int, need []bool) [][]float32 {
	out, pa, pb := prod(l.bc.out), l.ia.size(), l.ib.size()
	var da, db []float32
	if need[0] {
		da = grow(&l.dx[0], n*pa)
		if !l.bc.fullA {
			clear(da)
		}
	}
	if need[1] {
		db = grow(&l.dx[1], n*pb)
		clear(db)
	}
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			var a, b []float32
			if da != nil {
				a = da[s*pa : (s+1)*pa]
			}
			if db != nil {
				b = db[s*pb : (s+1)*pb]
			}
			l.bc.grads(l.fn, dy[s*out:(s+1)*out], l.xs[0][s*pa:(s+1)*pa], l.xs[1][s*pb:(s+1)*pb], a, b, true)
		}
	})
	return [][]float32{da, db}
}

// arith is x op c or c op x (swap) with a constant c of per-sample shape
// cs, the same for every sample, broadcast against x's shape.
type arith struct {
	nm       string
	fn       string
	swap     bool
	i        dims
	shape    []int
	c        []float32
	bc       broadcast
	x, y, dx []float32
}

func newArith(name, fn string, swap bool, in dims, shape []int, c []float32, cs []int) (*arith, error) {
	if !slices.Contains(elementwiseFns, fn) {
		return nil, fmt.Errorf("arithmetic layer %s: %q", name, fn)
	}
	if err := checkShape("arithmetic", name, shape, in); err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		cs = []int{1}
	}
	if prod(cs) != len(c) {
		return nil, fmt.Errorf("arithmetic layer %s: a constant of shape %v holds %d values", name, cs, len(c))
	}
	a, b := shape, cs
	if swap {
		a, b = b, a
	}
	bc, err := newBroadcast(a, b)
	if err == nil && prod(bc.out) != in.size() {
		err = fmt.Errorf("a constant of shape %v makes %v of %v", cs, bc.out, shape)
	}
	if err != nil {
		return nil, fmt.Errorf("arithmetic layer %s: %w", name, err)
	}
	return &arith{nm: name, fn: fn, swap: swap, i: in, shape: slices.Clone(shape), c: slices.Clone(c), bc: bc}, nil
}

func (l *arith) name() string            { return l.nm }
func (l *arith) in() dims                { return l.i }
func (l *arith) out() dims               { return vecDims(l.i.size()) }
func (l *arith) params() []*engine.Param { return nil }
func (l *arith) tensorShape() []int      { return l.shape }
func (l *arith) clone(gemm.Kernel) layer {
	return &arith{nm: l.nm, fn: l.fn, swap: l.swap, i: l.i, shape: l.shape, c: l.c, bc: l.bc}
}

func (l *arith) forward(x []float32, n int, _ bool) []float32 {
	l.x = x
	per := l.i.size()
	y := grow(&l.y, n*per)
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			xs := x[s*per : (s+1)*per]
			if l.swap {
				l.bc.apply(l.fn, y[s*per:(s+1)*per], l.c, xs)
			} else {
				l.bc.apply(l.fn, y[s*per:(s+1)*per], xs, l.c)
			}
		}
	})
	return y
}

func (l *arith) backward(dy []float32, n int, needDX, _ bool) []float32 {
	if !needDX {
		return nil
	}
	per := l.i.size()
	dx := grow(&l.dx, n*per)
	if l.swap {
		clear(dx)
	}
	parallel(n, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			xs, d, g := l.x[s*per:(s+1)*per], dx[s*per:(s+1)*per], dy[s*per:(s+1)*per]
			if l.swap {
				l.bc.grads(l.fn, g, l.c, xs, nil, d, false)
			} else {
				l.bc.grads(l.fn, g, xs, l.c, d, nil, true) // x has the output's shape: each value written once
			}
		}
	})
	return dx
}

// ---- Batched matrix product ----

// matmul is ONNX's MatMul of two activations: per sample, (…, M, K) times
// (…, K, P), the leading axes broadcast.
type matmul struct {
	nm         string
	ia, ib     dims
	sa, sb     []int
	m, k, p    int
	aIdx, bIdx []int // the operands' matrices of each output matrix
	aOnce      bool  // each of the first operand's matrices read by one output matrix
	bOnce      bool
	outS       []int
	kern       gemm.Kernel
	y          []float32
	xs         [][]float32
	dx         [2][]float32
}

func newMatmul(name string, ins []dims, sa, sb []int, kern gemm.Kernel) (*matmul, error) {
	if len(ins) != 2 {
		return nil, fmt.Errorf("matmul layer %s of %d inputs", name, len(ins))
	}
	if err := errorsJoin(checkShape("matmul", name, sa, ins[0]), checkShape("matmul", name, sb, ins[1])); err != nil {
		return nil, err
	}
	ra, rb := len(sa), len(sb)
	if ra < 2 || rb < 2 || sa[ra-1] != sb[rb-2] {
		return nil, fmt.Errorf("matmul layer %s of shapes %v and %v", name, sa, sb)
	}
	l := &matmul{nm: name, ia: ins[0], ib: ins[1], sa: slices.Clone(sa), sb: slices.Clone(sb), m: sa[ra-2], k: sa[ra-1], p: sb[rb-1], kern: kern}
	bc, err := newBroadcast(sa[:ra-2], sb[:rb-2])
	if ra == 2 && rb == 2 {
		bc, err = newBroadcast([]int{1}, []int{1})
	}
	if err != nil {
		return nil, fmt.Errorf("matmul layer %s: %w", name, err)
	}
	last, la, lb := bc.out[len(bc.out)-1], bc.sa[len(bc.out)-1], bc.sb[len(bc.out)-1]
	bc.each(func(_, ia, ib int) {
		for j := range last {
			l.aIdx, l.bIdx = append(l.aIdx, ia+j*la), append(l.bIdx, ib+j*lb)
		}
	})
	l.aOnce = len(l.aIdx)*l.m*l.k == ins[0].size()
	l.bOnce = len(l.bIdx)*l.k*l.p == ins[1].size()
	if ra > 2 || rb > 2 {
		l.outS = slices.Clone(bc.out)
	}
	l.outS = append(l.outS, l.m, l.p)
	return l, nil
}

func (l *matmul) name() string            { return l.nm }
func (l *matmul) ins() []dims             { return []dims{l.ia, l.ib} }
func (l *matmul) out() dims               { return vecDims(len(l.aIdx) * l.m * l.p) }
func (l *matmul) params() []*engine.Param { return nil }
func (l *matmul) tensorShape() []int      { return l.outS }
func (l *matmul) copy() junction {
	return &matmul{nm: l.nm, ia: l.ia, ib: l.ib, sa: l.sa, sb: l.sb, m: l.m, k: l.k, p: l.p, aIdx: l.aIdx, bIdx: l.bIdx, aOnce: l.aOnce, bOnce: l.bOnce, outS: l.outS, kern: l.kern}
}

// kernelled is a junction that runs GEMMs, cloned onto a replica's
// kernel (cloneNodes): a single-threaded one where the replicas share the
// cores.
type kernelled interface {
	junction
	onKernel(gemm.Kernel) junction
}

func (l *matmul) onKernel(k gemm.Kernel) junction {
	c := l.copy().(*matmul)
	c.kern = k
	return c
}

func (l *matmul) join(xs [][]float32, n int) []float32 {
	l.xs = append(l.xs[:0], xs...)
	m, k, p := l.m, l.k, l.p
	pa, pb, out := l.ia.size(), l.ib.size(), l.out().size()
	y := grow(&l.y, n*out)
	for s := range n {
		for j := range l.aIdx {
			a := xs[0][s*pa+l.aIdx[j]*m*k:]
			b := xs[1][s*pb+l.bIdx[j]*k*p:]
			l.kern.Sgemm(false, false, m, p, k, 1, a, k, b, p, 0, y[s*out+j*m*p:], p)
		}
	}
	return y
}

func (l *matmul) split(dy []float32, n int, need []bool) [][]float32 {
	m, k, p := l.m, l.k, l.p
	pa, pb, out := l.ia.size(), l.ib.size(), l.out().size()
	// An operand's matrix read by one output matrix gets its gradient
	// written (β = 0) rather than cleared and added to.
	var da, db []float32
	betaA, betaB := float32(0), float32(0)
	if need[0] {
		da = grow(&l.dx[0], n*pa)
		if !l.aOnce {
			clear(da)
			betaA = 1
		}
	}
	if need[1] {
		db = grow(&l.dx[1], n*pb)
		if !l.bOnce {
			clear(db)
			betaB = 1
		}
	}
	for s := range n {
		for j := range l.aIdx {
			g := dy[s*out+j*m*p:]
			if da != nil { // dA += dY·Bᵀ
				l.kern.Sgemm(false, true, m, k, p, 1, g, p, l.xs[1][s*pb+l.bIdx[j]*k*p:], p, betaA, da[s*pa+l.aIdx[j]*m*k:], k)
			}
			if db != nil { // dB += Aᵀ·dY
				l.kern.Sgemm(true, false, k, p, m, 1, l.xs[0][s*pa+l.aIdx[j]*m*k:], k, g, p, betaB, db[s*pb+l.bIdx[j]*k*p:], p)
			}
		}
	}
	return [][]float32{da, db}
}

// ---- Concatenation along any axis ----

// joinAxis concatenates its inputs along one axis of their per-sample
// shapes, which agree elsewhere.
type joinAxis struct {
	nm     string
	in     []dims
	outer  int
	blocks []int // each input's values per outer index
	outS   []int
	y      []float32
	dx     [][]float32
}

func newJoinAxis(name string, ins []dims, shapes [][]int, axis int) (*joinAxis, error) {
	if len(ins) < 2 || len(shapes) != len(ins) {
		return nil, fmt.Errorf("concatenation %s of %d inputs, %d shapes", name, len(ins), len(shapes))
	}
	l := &joinAxis{nm: name, in: slices.Clone(ins)}
	for k, s := range shapes {
		if err := checkShape("concatenation", name, s, ins[k]); err != nil {
			return nil, err
		}
		if len(s) != len(shapes[0]) || axis < 0 || axis >= len(s) {
			return nil, fmt.Errorf("concatenation %s along axis %d of shapes %v", name, axis, shapes)
		}
		for a := range s {
			if a != axis && s[a] != shapes[0][a] {
				return nil, fmt.Errorf("concatenation %s along axis %d of shapes %v", name, axis, shapes)
			}
		}
		l.blocks = append(l.blocks, prod(s[axis:]))
	}
	l.outer = prod(shapes[0][:axis])
	l.outS = slices.Clone(shapes[0])
	l.outS[axis] = 0
	for _, s := range shapes {
		l.outS[axis] += s[axis]
	}
	return l, nil
}

func (l *joinAxis) name() string            { return l.nm }
func (l *joinAxis) ins() []dims             { return l.in }
func (l *joinAxis) out() dims               { return vecDims(prod(l.outS)) }
func (l *joinAxis) params() []*engine.Param { return nil }
func (l *joinAxis) tensorShape() []int      { return l.outS }
func (l *joinAxis) copy() junction {
	return &joinAxis{nm: l.nm, in: l.in, outer: l.outer, blocks: l.blocks, outS: l.outS}
}

func (l *joinAxis) join(xs [][]float32, n int) []float32 {
	y := grow(&l.y, n*prod(l.outS))
	pos := 0
	for s := range n {
		for o := range l.outer {
			for k, x := range xs {
				b := l.blocks[k]
				pos += copy(y[pos:], x[(s*l.outer+o)*b:(s*l.outer+o+1)*b])
			}
		}
	}
	return y
}

func (l *joinAxis) split(dy []float32, n int, need []bool) [][]float32 {
	for len(l.dx) < len(l.in) {
		l.dx = append(l.dx, nil)
	}
	out := make([][]float32, len(l.in))
	for k := range l.in {
		if need[k] {
			out[k] = grow(&l.dx[k], n*l.in[k].size())
		}
	}
	pos := 0
	for s := range n {
		for o := range l.outer {
			for k := range l.in {
				b := l.blocks[k]
				if out[k] != nil {
					copy(out[k][(s*l.outer+o)*b:(s*l.outer+o+1)*b], dy[pos:pos+b])
				}
				pos += b
			}
		}
	}
	return out
}
