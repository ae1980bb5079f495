// Command asm generates the native engine's AVX2 kernels,
// ../kernels_amd64.s and their Go declarations ../kernels_amd64.go, with
// avo (github.com/mmcloughlin/avo). It is a module of its own, so that
// avo stays out of Faithlab's go.mod; run it from this folder:
//
//	go run . -out ../kernels_amd64.s -stubs ../kernels_amd64.go -pkg native
//
// (go generate ./core/engine/native does). Each kernel is the scalar
// kernel of vec.go or unetvec.go eight channels at a time, operation for
// operation in the same order — no fused multiply-adds, the same operand
// order for minimum, maximum and subtraction — so that both give the same
// bits. The callers in vec_amd64.go check the slices' lengths, the CPU and
// the channel count (a multiple of 8) first; the assembly trusts them.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Comparison predicates of VCMPPS (ordered, quiet).
const (
	cmpEQ    = 0x00
	cmpUnord = 0x03
	cmpLT    = 0x11
	cmpGT    = 0x1e
)

// consts holds expf8's and erf8's constants, each in 32 bytes (eight
// copies), in the order of the names below.
var constNames = []string{"hi", "lo", "log2e", "half", "ln2hi", "ln2lo", "one", "p0", "p1", "p2", "p3", "p4", "p5", "inf", "bias127",
	"four", "minus4", "ea13", "ea11", "ea9", "ea7", "ea5", "ea3", "ea1", "eb8", "eb6", "eb4", "eb2", "eb0", "erf0", "sign"}

func constant(name string) Mem {
	for i, n := range constNames {
		if n == name {
			return consts.Offset(32 * i)
		}
	}
	panic("no constant " + name)
}

var consts Mem

func main() {
	ConstraintExpr("amd64,!purego")
	consts = GLOBL("expconsts", RODATA|NOPTR)
	vals := map[string]uint32{
		// The values expf and the scalar kernels use, as float32.
		"hi": f32(88.72), "lo": f32(-87.33), "log2e": f32(1.44269504088896341), "half": f32(0.5),
		"ln2hi": f32(0.693359375), "ln2lo": f32(-2.12194440e-4), "one": f32(1),
		"p0": f32(1.9875691500e-4), "p1": f32(1.3981999507e-3), "p2": f32(8.3334519073e-3),
		"p3": f32(4.1665795894e-2), "p4": f32(1.6666665459e-1), "p5": f32(5.0000001201e-1),
		"inf": math.Float32bits(float32(math.Inf(1))), "bias127": 127,
		// erff's clamp and polynomials, each constant rounded to float32
		// once, as Go rounds erff's; erf′(0) = 2/√π; the sign bit.
		"four": math.Float32bits(4), "minus4": math.Float32bits(-4),
		"ea13": math.Float32bits(-2.72614225801306e-10), "ea11": math.Float32bits(2.77068142495902e-08),
		"ea9": math.Float32bits(-2.10102402082508e-06), "ea7": math.Float32bits(-5.69250639462346e-05),
		"ea5": math.Float32bits(-7.34990630326855e-04), "ea3": math.Float32bits(-2.95459980854025e-03),
		"ea1": math.Float32bits(-1.60960333262415e-02),
		"eb8": math.Float32bits(-1.45660718464996e-05), "eb6": math.Float32bits(-2.13374055278905e-04),
		"eb4": math.Float32bits(-1.68282697438203e-03), "eb2": math.Float32bits(-7.37332916720468e-03),
		"eb0":  math.Float32bits(-1.42647390514189e-02),
		"erf0": math.Float32bits(2 / math.SqrtPi), "sign": 0x80000000,
	}
	for i, n := range constNames {
		for k := range 8 {
			DATA(32*i+4*k, U32(vals[n]))
		}
	}

	pool2()
	route2()
	addTo()
	winoIn()
	winoInAdj()
	winoOut()
	winoOutAdj()
	chanSums()
	chanSqDevs()
	affineSiLU()
	siluGrad()
	affine3()
	im2colRows()
	col2imRows()
	gelu()
	geluGrad()
	expSum()
	scale()
	sums64()
	sqDevs64()
	normAffine()
	dots64()
	softmaxGrad()
	for _, wide := range []bool{false, true} {
		for rows := 1; rows <= 6; rows++ {
			sgemmTile(rows, wide)
		}
	}
	Generate()
}

func f32(v float64) uint32 { return math.Float32bits(float32(v)) }

// Helpers for the operations of archsimd's Float32x8 methods, in Go
// assembly's operand order: x.Sub(y) is VSUBPS y, x, dst.
func sub(x, y Op) VecVirtual  { d := YMM(); VSUBPS(y, x, d); return d }
func add(x, y Op) VecVirtual  { d := YMM(); VADDPS(y, x, d); return d }
func mul(x, y Op) VecVirtual  { d := YMM(); VMULPS(y, x, d); return d }
func div(x, y Op) VecVirtual  { d := YMM(); VDIVPS(y, x, d); return d }
func vmax(x, y Op) VecVirtual { d := YMM(); VMAXPS(y, x, d); return d }
func vmin(x, y Op) VecVirtual { d := YMM(); VMINPS(y, x, d); return d }
func load(m Mem) VecVirtual   { d := YMM(); VMOVUPS(m, d); return d }
func store(v Op, m Mem)       { VMOVUPS(v, m) }
func zero() VecVirtual        { d := YMM(); VXORPS(d, d, d); return d }

// ptr loads a slice parameter's base pointer.
func ptr(name string) Mem { return Mem{Base: Load(Param(name).Base(), GP64())} }

// bcast loads a float32 parameter into all eight lanes.
func bcast(name string) VecVirtual {
	x, d := Load(Param(name), XMM()), YMM()
	VBROADCASTSS(x, d)
	return d
}

// bcast64 loads a float64 parameter into all four lanes.
func bcast64(name string) VecVirtual {
	x, d := Load(Param(name), XMM()), YMM()
	VBROADCASTSD(x, d)
	return d
}

// bytes4 loads an int parameter times 4: a count of floats in bytes.
func bytes4(name string) Register {
	r := Load(Param(name), GP64())
	SHLQ(Imm(2), r)
	return r
}

// plus is m displaced by the byte offset in r, times scale (1, 2, 4, 8).
func plus(m Mem, r Register, scale uint8) Mem {
	if m.Index != nil {
		panic("plus: the address has an index already: lea it first")
	}
	return Mem{Base: m.Base, Index: r, Scale: scale, Disp: m.Disp}
}

// lea is a new pointer: m's address.
func lea(m Mem) Mem {
	r := GP64()
	LEAQ(m, r)
	return Mem{Base: r}
}

// step moves the pointers by n bytes (an Imm or a register).
func step(n Op, ms ...Mem) {
	for _, m := range ms {
		ADDQ(n, m.Base)
	}
}

// each emits body for each channel block: ch = 0, 8, … below c, with the
// block's byte offset in off (0, 32, …) when off is not nil; c4 holds c·4.
func each(name string, c4, off Register, body func()) {
	XORQ(off, off)
	Label(name)
	body()
	ADDQ(Imm(32), off)
	CMPQ(off, c4)
	JB(LabelRef(name))
}

// times emits body n times (n > 0, in a register it counts down).
func times(name string, n Register, body func()) {
	Label(name)
	body()
	DECQ(n)
	JNZ(LabelRef(name))
}

// ifNonZero emits body when r is not zero.
func ifNonZero(name string, r Register, body func()) {
	TESTQ(r, r)
	JZ(LabelRef(name))
	body()
	Label(name)
}

// ifTwo emits body when r holds 2 (a tile's rows or columns).
func ifTwo(name string, r Register, body func()) {
	CMPQ(r, Imm(2))
	JNE(LabelRef(name))
	body()
	Label(name)
}

func pool2() {
	TEXT("pool2AVX2", NOSPLIT, "func(y, top, bot []float32, w, c int, floor float32)")
	Doc("pool2AVX2 is pool2Scalar for c a multiple of 8 and w > 0.")
	y, top, bot := ptr("y"), ptr("top"), ptr("bot")
	w := Load(Param("w"), GP64())
	c4 := bytes4("c")
	topR, botR := lea(plus(top, c4, 1)), lea(plus(bot, c4, 1)) // the windows' right pixels
	f := YMM()
	VBROADCASTSS(Load(Param("floor"), XMM()), f)
	off := GP64()
	times("pixel", w, func() {
		each("channel", c4, off, func() {
			// a.Max(b).Max(p.Max(q)).Max(f): a b the top pixels, p q the bottom ones
			ab := vmax(load(plus(top, off, 1)), plus(topR, off, 1))
			pq := vmax(load(plus(bot, off, 1)), plus(botR, off, 1))
			store(vmax(vmax(ab, pq), f), plus(y, off, 1))
		})
		step(c4, y)
		for range 2 {
			step(c4, top, topR, bot, botR)
		}
	})
	VZEROUPPER()
	RET()
}

// take stores, for one input of a 2×2 window, what is left of the
// gradient where the input (raised to f) equals the maximum m, and returns
// what is left after.
func take(in, din Mem, f, m, left VecVirtual) VecVirtual {
	hit := YMM()
	VCMPPS(Imm(cmpEQ), m, vmax(load(in), f), hit) // in.Max(f).Equal(m)
	taken := YMM()
	VANDPS(left, hit, taken) // left.Masked(hit)
	store(taken, din)
	rest := YMM()
	VANDNPS(left, hit, rest) // zero.Merge(left, hit)
	return rest
}

func route2() {
	TEXT("route2AVX2", NOSPLIT, "func(dtop, dbot, top, bot, y, g []float32, w, c int, floor float32, gate bool)")
	Doc("route2AVX2 is route2Scalar for c a multiple of 8 and w > 0.")
	dtop, dbot, top, bot, y, g := ptr("dtop"), ptr("dbot"), ptr("top"), ptr("bot"), ptr("y"), ptr("g")
	w := Load(Param("w"), GP64())
	c4 := bytes4("c")
	dtopR, dbotR, topR := lea(plus(dtop, c4, 1)), lea(plus(dbot, c4, 1)), lea(plus(top, c4, 1))
	f := YMM()
	VBROADCASTSS(Load(Param("floor"), XMM()), f)
	gate := GP64()
	MOVBQZX(Load(Param("gate"), GP8()), gate)
	z := zero()
	off := GP64()
	times("pixel", w, func() {
		each("channel", c4, off, func() {
			m := load(plus(y, off, 1))
			left := load(plus(g, off, 1))
			ifNonZero("ungated", gate, func() {
				pos := YMM()
				VCMPPS(Imm(cmpGT), z, m, pos) // m.Greater(zero)
				VANDPS(left, pos, left)
			})
			left = take(plus(top, off, 1), plus(dtop, off, 1), f, m, left)
			left = take(plus(topR, off, 1), plus(dtopR, off, 1), f, m, left)
			left = take(plus(bot, off, 1), plus(dbot, off, 1), f, m, left)
			store(left, plus(dbotR, off, 1)) // the last input takes what is left
		})
		step(c4, y, g)
		for range 2 {
			step(c4, top, topR, bot, dtop, dtopR, dbot, dbotR)
		}
	})
	VZEROUPPER()
	RET()
}

func addTo() {
	TEXT("addToAVX2", NOSPLIT, "func(dst, src []float32, n int)")
	Doc("addToAVX2 adds src[:n] to dst[:n], n > 0 a multiple of 8.")
	dst, src := ptr("dst"), ptr("src")
	n4 := bytes4("n")
	off := GP64()
	each("block", n4, off, func() {
		store(add(load(plus(dst, off, 1)), plus(src, off, 1)), plus(dst, off, 1))
	})
	VZEROUPPER()
	RET()
}

// rows4 holds the byte offsets of a tile's rows or planes: 0, r, 2r, 3r,
// for r·k addressing (k = 1, 2) and a register for 3r.
type rows4 struct{ r, r3 Register }

func newRows4(r Register) rows4 {
	r3 := GP64()
	LEAQ(Mem{Base: r, Index: r, Scale: 2}, r3)
	return rows4{r, r3}
}

// at is m displaced by i times the stride (i = 0 … 3).
func (s rows4) at(m Mem, i int) Mem {
	switch i {
	case 0:
		return m
	case 1:
		return plus(m, s.r, 1)
	case 2:
		return plus(m, s.r, 2)
	}
	return plus(m, s.r3, 1)
}

func winoIn() {
	TEXT("winoInAVX2", NOSPLIT, "func(v []float32, plane int, x []float32, row, c int)")
	Doc("winoInAVX2 is winoInScalar for c a multiple of 8.")
	v, x := ptr("v"), ptr("x")
	pl := newRows4(bytes4("plane"))
	pl4 := GP64()
	MOVQ(pl.r, pl4)
	SHLQ(Imm(2), pl4)
	quad := newRows4(pl4) // planes 0, 4, 8, 12
	rows := newRows4(bytes4("row"))
	c4 := bytes4("c")
	cols := newRows4(c4)
	off := GP64()
	each("channel", c4, off, func() {
		// Column k of Bᵀd along the rows (rowB), then down the column.
		for k := range 4 {
			h := make([]VecVirtual, 4)
			for r := range 4 {
				px := lea(plus(lea(rows.at(x, r)), off, 1))
				d := func(j int) Mem { return cols.at(px, j) }
				switch k {
				case 0:
					h[r] = sub(load(d(0)), d(2)) // d0.Sub(d2)
				case 1:
					h[r] = add(load(d(1)), d(2)) // d1.Add(d2)
				case 2:
					h[r] = sub(load(d(2)), d(1)) // d2.Sub(d1)
				case 3:
					h[r] = sub(load(d(1)), d(3)) // d1.Sub(d3)
				}
			}
			pv := lea(plus(lea(pl.at(v, k)), off, 1))
			store(sub(h[0], h[2]), quad.at(pv, 0)) // a.Sub(c)
			store(add(h[1], h[2]), quad.at(pv, 1)) // b.Add(c)
			store(sub(h[2], h[1]), quad.at(pv, 2)) // c.Sub(b)
			store(sub(h[1], h[3]), quad.at(pv, 3)) // b.Sub(d)
		}
	})
	VZEROUPPER()
	RET()
}

func winoInAdj() {
	TEXT("winoInAdjAVX2", NOSPLIT, "func(dx []float32, row int, dv []float32, plane, c int)")
	Doc("winoInAdjAVX2 is winoInAdjScalar for c a multiple of 8.")
	dx, dv := ptr("dx"), ptr("dv")
	rows := newRows4(bytes4("row"))
	pl := newRows4(bytes4("plane"))
	pl4 := GP64()
	MOVQ(pl.r, pl4)
	SHLQ(Imm(2), pl4)
	quad := newRows4(pl4)
	c4 := bytes4("c")
	cols := newRows4(c4)
	off := GP64()
	z := zero()
	each("channel", c4, off, func() {
		for i := range 4 {
			// Row i of the adjoint of Bᵀ down each column j (colBAdj).
			g := make([]VecVirtual, 4)
			for j := range 4 {
				pv := lea(plus(lea(pl.at(dv, j)), off, 1))
				vq := func(q int) Mem { return quad.at(pv, q) }
				switch i {
				case 0:
					g[j] = load(vq(0)) // v0
				case 1:
					g[j] = add(sub(load(vq(1)), vq(2)), vq(3)) // v1.Sub(v2).Add(v3)
				case 2:
					g[j] = sub(add(load(vq(1)), vq(2)), vq(0)) // v1.Add(v2).Sub(v0)
				case 3:
					g[j] = sub(z, vq(3)) // z.Sub(v3)
				}
			}
			// Its adjoint of Bᵀ along the row, added to dx (rowBAddAdj).
			px := lea(plus(lea(rows.at(dx, i)), off, 1))
			upd := func(j int, h VecVirtual) { store(add(load(cols.at(px, j)), h), cols.at(px, j)) }
			upd(0, g[0])
			upd(1, add(sub(g[1], g[2]), g[3])) // h1.Sub(h2).Add(h3)
			upd(2, sub(add(g[1], g[2]), g[0])) // h1.Add(h2).Sub(h0)
			upd(3, sub(z, g[3]))               // z.Sub(h3)
		}
	})
	VZEROUPPER()
	RET()
}

func winoOut() {
	TEXT("winoOutAVX2", NOSPLIT, "func(y []float32, row int, m []float32, plane int, bias, res []float32, c, rows, cols int)")
	Doc("winoOutAVX2 is winoOutScalar for c a multiple of 8 (res: nil, or as long as y).")
	y, m, bias, res := ptr("y"), ptr("m"), ptr("bias"), ptr("res")
	row := bytes4("row")
	pl := newRows4(bytes4("plane"))
	pl4 := GP64()
	MOVQ(pl.r, pl4)
	SHLQ(Imm(2), pl4)
	quad := newRows4(pl4)
	c4 := bytes4("c")
	nrows, ncols := Load(Param("rows"), GP64()), Load(Param("cols"), GP64())
	off := GP64()
	each("channel", c4, off, func() {
		// Aᵀ along each row of M (rowA).
		var r [4][2]VecVirtual
		for i := range 4 {
			pm := lea(plus(lea(quad.at(m, i)), off, 1))
			mk := func(k int) Mem { return pl.at(pm, k) }
			r[i][0] = add(add(load(mk(0)), mk(1)), mk(2)) // m0.Add(m1).Add(m2)
			r[i][1] = sub(sub(load(mk(1)), mk(2)), mk(3)) // m1.Sub(m2).Sub(m3)
		}
		b := plus(bias, off, 1)
		var out [2][2]VecVirtual
		for j := range 2 {
			out[0][j] = add(add(add(r[0][j], r[1][j]), r[2][j]), b) // r0j.Add(r1j).Add(r2j).Add(b)
			out[1][j] = add(sub(sub(r[1][j], r[2][j]), r[3][j]), b) // r1j.Sub(r2j).Sub(r3j).Add(b)
		}
		put := func(i, j int) {
			o := out[i][j]
			var at Mem
			switch {
			case i == 0 && j == 0:
				at = plus(y, off, 1)
			case i == 0:
				at = plus(lea(plus(y, c4, 1)), off, 1)
			case j == 0:
				at = plus(lea(plus(y, row, 1)), off, 1)
			default:
				at = plus(lea(plus(lea(plus(y, row, 1)), c4, 1)), off, 1)
			}
			name := fmt.Sprintf("nores%d%d", i, j)
			ifNonZero(name, res.Base, func() {
				// res is y's twin: the same offsets from its own base.
				rs := lea(plus(res, at.Base, 1))
				SUBQ(y.Base, rs.Base)
				VADDPS(plus(rs, off, 1), o, o) // o.Add(res)
			})
			store(o, at)
		}
		put(0, 0)
		ifTwo("onecol0", ncols, func() { put(0, 1) })
		ifTwo("onerow", nrows, func() {
			put(1, 0)
			ifTwo("onecol1", ncols, func() { put(1, 1) })
		})
	})
	VZEROUPPER()
	RET()
}

// colAAdj is the adjoint of Aᵀ down one column: dY's two values to four.
func colAAdj(g0, g1 VecVirtual, z VecVirtual) [4]VecVirtual {
	return [4]VecVirtual{g0, add(g0, g1), sub(g0, g1), sub(z, g1)}
}

func winoOutAdj() {
	TEXT("winoOutAdjAVX2", NOSPLIT, "func(dm []float32, plane int, dy []float32, row, c, rows, cols int)")
	Doc("winoOutAdjAVX2 is winoOutAdjScalar for c a multiple of 8.")
	dm, dy := ptr("dm"), ptr("dy")
	pl := newRows4(bytes4("plane"))
	pl4 := GP64()
	MOVQ(pl.r, pl4)
	SHLQ(Imm(2), pl4)
	quad := newRows4(pl4)
	row, c4 := bytes4("row"), bytes4("c")
	nrows, ncols := Load(Param("rows"), GP64()), Load(Param("cols"), GP64())
	z := zero()
	off := GP64()
	each("channel", c4, off, func() {
		g00, g01, g10, g11 := load(plus(dy, off, 1)), zero(), zero(), zero()
		ifTwo("onecol0", ncols, func() { VMOVUPS(plus(lea(plus(dy, c4, 1)), off, 1), g01) })
		ifTwo("onerow", nrows, func() {
			dy1 := lea(plus(dy, row, 1))
			VMOVUPS(plus(dy1, off, 1), g10)
			ifTwo("onecol1", ncols, func() { VMOVUPS(plus(lea(plus(dy1, c4, 1)), off, 1), g11) })
		})
		q0, q1 := colAAdj(g00, g10, z), colAAdj(g01, g11, z)
		for i := range 4 {
			pm := lea(plus(lea(quad.at(dm, i)), off, 1))
			store(q0[i], pl.at(pm, 0))
			store(add(q0[i], q1[i]), pl.at(pm, 1))
			store(sub(q0[i], q1[i]), pl.at(pm, 2))
			store(sub(z, q1[i]), pl.at(pm, 3))
		}
	})
	VZEROUPPER()
	RET()
}

func chanSums() {
	TEXT("chanSumsAVX2", NOSPLIT, "func(sum, x []float32, c, n int)")
	Doc("chanSumsAVX2 is chanSumsScalar for c a multiple of 8 and n = len(x)/c > 0 pixels.")
	sum, x := ptr("sum"), ptr("x")
	c4 := bytes4("c")
	n := Load(Param("n"), GP64())
	off, end, k := GP64(), GP64(), GP64()
	XORQ(off, off)
	// Four blocks of 8 channels at a time while there are: four chains of
	// additions in flight, each channel's still over the pixels in order.
	Label("quad")
	LEAQ(Mem{Base: off, Disp: 128}, end)
	CMPQ(end, c4)
	JA(LabelRef("single"))
	var acc [4]VecVirtual
	for i := range acc {
		acc[i] = load(plus(sum, off, 1).Offset(32 * i))
	}
	px := lea(plus(x, off, 1))
	MOVQ(n, k)
	times("quadPixel", k, func() {
		for i := range acc {
			VADDPS(px.Offset(32*i), acc[i], acc[i]) // acc.Add(x)
		}
		step(c4, px)
	})
	for i := range acc {
		store(acc[i], plus(sum, off, 1).Offset(32*i))
	}
	MOVQ(end, off)
	JMP(LabelRef("quad"))
	Label("single")
	CMPQ(off, c4)
	JAE(LabelRef("done"))
	one := load(plus(sum, off, 1))
	px1 := lea(plus(x, off, 1))
	MOVQ(n, k)
	times("pixel", k, func() {
		VADDPS(px1, one, one) // acc.Add(x)
		step(c4, px1)
	})
	store(one, plus(sum, off, 1))
	ADDQ(Imm(32), off)
	JMP(LabelRef("single"))
	Label("done")
	VZEROUPPER()
	RET()
}

func chanSqDevs() {
	TEXT("chanSqDevsAVX2", NOSPLIT, "func(sq, x, mean []float32, c, n int)")
	Doc("chanSqDevsAVX2 is chanSqDevsScalar for c a multiple of 8 and n = len(x)/c > 0 pixels.")
	sq, x, mean := ptr("sq"), ptr("x"), ptr("mean")
	c4 := bytes4("c")
	n := Load(Param("n"), GP64())
	off := GP64()
	each("channel", c4, off, func() {
		acc, mv := load(plus(sq, off, 1)), load(plus(mean, off, 1))
		px := lea(plus(x, off, 1))
		k := GP64()
		MOVQ(n, k)
		times("pixel", k, func() {
			d := sub(load(px), mv)      // x.Sub(m)
			VADDPS(mul(d, d), acc, acc) // acc.Add(d.Mul(d))
			step(c4, px)
		})
		store(acc, plus(sq, off, 1))
	})
	VZEROUPPER()
	RET()
}

// expf8 is expf on eight values, as unetvec_simd.go's expf8 was.
func expf8(x VecVirtual) VecVirtual {
	k := constant
	over, under, nan := YMM(), YMM(), YMM()
	VCMPPS(Imm(cmpGT), k("hi"), x, over)  // x.Greater(hi)
	VCMPPS(Imm(cmpLT), k("lo"), x, under) // x.Less(lo)
	VCMPPS(Imm(cmpUnord), x, x, nan)      // x.IsNaN()
	in := x
	x = vmax(vmin(x, k("hi")), k("lo")) // x.Min(hi).Max(lo)
	n := add(mul(x, k("log2e")), k("half"))
	VROUNDPS(Imm(1), n, n) // .Floor()
	r := sub(x, mul(n, k("ln2hi")))
	r = sub(r, mul(n, k("ln2lo")))
	z := mul(r, r)
	p := mul(r, k("p0")) // p0.Mul(r)
	for _, c := range []string{"p1", "p2", "p3", "p4"} {
		p = mul(add(p, k(c)), r)
	}
	p = add(p, k("p5"))
	p = add(add(mul(p, z), r), k("one")) // p.Mul(z).Add(r).Add(one)
	e := YMM()
	VCVTTPS2DQ(n, e)
	VPADDD(k("bias127"), e, e)
	VPSLLD(Imm(23), e, e)
	pe := mul(p, e)
	VBLENDVPS(over, k("inf"), pe, pe) // inf.Merge(pe, over)
	VANDNPS(pe, under, pe)            // zero.Merge(…, under)
	VBLENDVPS(nan, in, pe, pe)        // NaN passes, as through expf's arithmetic
	return pe
}

// sigmoid8 is 1/(1 + expf8(0 − a)), with one in a register.
func sigmoid8(a, z, one VecVirtual) VecVirtual {
	d := add(expf8(sub(z, a)), k1()) // one.Add(e)
	s := YMM()
	VDIVPS(d, one, s) // one.Div(…)
	return s
}

func k1() Mem { return constant("one") }

func affineSiLU() {
	TEXT("affineSiLUAVX2", NOSPLIT, "func(y, sig, x, scale, shift []float32, c, n int)")
	Doc("affineSiLUAVX2 is affineSiLUScalar for c a multiple of 8 and n = len(x)/c > 0 pixels; sig may be nil.")
	y, sig, x, scale, shift := ptr("y"), ptr("sig"), ptr("x"), ptr("scale"), ptr("shift")
	c4 := bytes4("c")
	n := Load(Param("n"), GP64())
	z, one := zero(), YMM()
	VMOVUPS(k1(), one)
	off := GP64()
	times("pixel", n, func() {
		each("channel", c4, off, func() {
			a := add(mul(load(plus(x, off, 1)), plus(scale, off, 1)), plus(shift, off, 1)) // x.Mul(scale).Add(shift)
			s := sigmoid8(a, z, one)
			store(mul(a, s), plus(y, off, 1))
			ifNonZero("nosig", sig.Base, func() { store(s, plus(sig, off, 1)) })
		})
		step(c4, y, x)
		ifNonZero("nosigstep", sig.Base, func() { step(c4, sig) })
	})
	VZEROUPPER()
	RET()
}

func siluGrad() {
	TEXT("siluGradAVX2", NOSPLIT, "func(da, dy, x, sig, scale, shift, mean, inv, sda, sdax []float32, c, n int)")
	Doc("siluGradAVX2 is siluGradScalar for c a multiple of 8 and n = len(x)/c > 0 pixels; sig may be nil.")
	da, dy, x, sig := ptr("da"), ptr("dy"), ptr("x"), ptr("sig")
	scale, shift, mean, inv, sda, sdax := ptr("scale"), ptr("shift"), ptr("mean"), ptr("inv"), ptr("sda"), ptr("sdax")
	c4 := bytes4("c")
	n := Load(Param("n"), GP64())
	z, one := zero(), YMM()
	VMOVUPS(k1(), one)
	off := GP64()
	times("pixel", n, func() {
		each("channel", c4, off, func() {
			xv := load(plus(x, off, 1))
			a := add(mul(xv, plus(scale, off, 1)), plus(shift, off, 1))
			s := YMM()
			TESTQ(sig.Base, sig.Base)
			JZ(LabelRef("nosig"))
			VMOVUPS(plus(sig, off, 1), s)
			JMP(LabelRef("sigdone"))
			Label("nosig")
			VMOVUPS(sigmoid8(a, z, one), s)
			Label("sigdone")
			// dy.Mul(s).Mul(one.Add(a.Mul(one.Sub(s))))
			g := mul(mul(load(plus(dy, off, 1)), s), add(mul(a, sub(one, s)), k1()))
			store(g, plus(da, off, 1))
			store(add(load(plus(sda, off, 1)), g), plus(sda, off, 1))
			xh := mul(sub(xv, plus(mean, off, 1)), plus(inv, off, 1)) // xv.Sub(mean).Mul(inv)
			store(add(load(plus(sdax, off, 1)), mul(g, xh)), plus(sdax, off, 1))
		})
		step(c4, da, dy, x)
		ifNonZero("nosigstep", sig.Base, func() { step(c4, sig) })
	})
	VZEROUPPER()
	RET()
}

func affine3() {
	TEXT("affine3AVX2", NOSPLIT, "func(dx, da, x, p, q, r []float32, c, n int)")
	Doc("affine3AVX2 is affine3Scalar for c a multiple of 8 and n = len(x)/c > 0 pixels.")
	dx, da, x, p, q, r := ptr("dx"), ptr("da"), ptr("x"), ptr("p"), ptr("q"), ptr("r")
	c4 := bytes4("c")
	n := Load(Param("n"), GP64())
	off := GP64()
	times("pixel", n, func() {
		each("channel", c4, off, func() {
			// p.Mul(da).Sub(q.Mul(x)).Add(r)
			v := add(sub(mul(load(plus(p, off, 1)), plus(da, off, 1)), mul(load(plus(q, off, 1)), plus(x, off, 1))), plus(r, off, 1))
			store(v, plus(dx, off, 1))
		})
		step(c4, dx, da, x)
	})
	VZEROUPPER()
	RET()
}

// im2colRows moves eight floats for each kernel row: a run of at most
// eight, and past it floats that a later move, or the caller, writes again.
func im2colRows() {
	TEXT("im2colRowsAVX2", NOSPLIT, "func(dst, src []float32, k, run, srcRow, step, count int)")
	Doc("im2colRowsAVX2 is im2colRowsScalar for run ≤ 8, moving 8 floats a kernel row: the caller checks that",
		"dst and src hold them and that the floats written past each run are written again after.")
	dst, src := ptr("dst"), ptr("src")
	run4, row4, step4 := bytes4("run"), bytes4("srcRow"), bytes4("step")
	k := Load(Param("k"), GP64())
	n := Load(Param("count"), GP64())
	times("pixel", n, func() {
		d, s := lea(dst), lea(src)
		ky := GP64()
		MOVQ(k, ky)
		times("row", ky, func() {
			store(load(s), d)
			step(row4, s)
			step(run4, d)
		})
		MOVQ(d.Base, dst.Base) // the next pixel's row starts where this one's ended
		step(step4, src)
	})
	VZEROUPPER()
	RET()
}

// col2imRows adds float by float, as the scalar kernel does, in its order:
// each input pixel takes the output pixels' values in their raster order
// (what keeps col2im's bits), and a float stored is the next one loaded at
// its address, which the store forwards.
func col2imRows() {
	TEXT("col2imRowsAsm", NOSPLIT, "func(dst, src []float32, k, run, dstRow, step, count int)")
	Doc("col2imRowsAsm is col2imRowsScalar (scalar AVX instructions): the caller checks the slices.")
	dst, src := ptr("dst"), ptr("src")
	row4, step4 := bytes4("dstRow"), bytes4("step")
	k := Load(Param("k"), GP64())
	run := Load(Param("run"), GP64())
	n := Load(Param("count"), GP64())
	times("pixel", n, func() {
		d := lea(dst)
		ky := GP64()
		MOVQ(k, ky)
		times("row", ky, func() {
			e := lea(d)
			j := GP64()
			MOVQ(run, j)
			times("tap", j, func() {
				x := XMM()
				VMOVSS(e, x)
				VADDSS(src, x, x) // x = x + s, as d[j] += s[j]
				VMOVSS(x, e)
				step(Imm(4), src, e)
			})
			step(row4, d)
		})
		step(step4, dst)
	})
	RET()
}

// sgemmTile emits the kernel for tiles of rows×16 of C = A·B (C += A·B
// when add): twelve accumulators at most, each float summed over k in order
// as a product then an addition (no fused multiply-add), as gemm16Scalar
// does, so that both give the same bits. wide emits its AVX-512 twin, for
// tiles of rows×32 (two 16-float registers a row): the same products and
// additions of each float in the same order, in half the instructions.
func sgemmTile(rows int, wide bool) {
	name, cols, isa := fmt.Sprintf("sgemm%dx16", rows), 16, ""
	vec := YMM
	if wide {
		name, cols, isa, vec = fmt.Sprintf("sgemm%dx32z", rows), 32, " (AVX-512F)", ZMM
	}
	half := cols * 2 // bytes in one register: half a row of the tile
	vload := func(m Mem) VecVirtual { d := vec(); VMOVUPS(m, d); return d }
	TEXT(name, NOSPLIT, "func(c, a, b []float32, k, ars, aks, ldb, ldc, tiles, blocks int, add bool)")
	Doc(fmt.Sprintf("%s is gemm16Scalar on tiles row tiles of %d rows and blocks column blocks of %d%s, k > 0: the caller checks the slices.", name, rows, cols, isa))
	ct, at := ptr("c"), ptr("a") // the row tile's first row of C and of A
	tiles := Load(Param("tiles"), GP64())
	times("tile", tiles, func() {
		cb, bb := lea(ct), ptr("b") // the column block's C and B
		blocks := Load(Param("blocks"), GP64())
		times("block", blocks, func() {
			ars4 := bytes4("ars")
			p0 := lea(at)
			var p3 Mem
			if rows > 3 {
				three := GP64()
				LEAQ(Mem{Base: ars4, Index: ars4, Scale: 2}, three)
				p3 = lea(plus(at, three, 1))
			}
			row := func(j int) Mem { // row j's A at the current k
				base := p0
				if j >= 3 {
					base, j = p3, j-3
				}
				if j == 0 {
					return base
				}
				return plus(base, ars4, uint8(j))
			}
			acc := make([]VecVirtual, 2*rows)
			for i := range acc {
				acc[i] = vec()
				if wide {
					VPXORD(acc[i], acc[i], acc[i])
				} else {
					VXORPS(acc[i], acc[i], acc[i])
				}
			}
			aks4, ldb4 := bytes4("aks"), bytes4("ldb")
			bp := lea(bb)
			n := Load(Param("k"), GP64())
			times("k", n, func() {
				b := []VecVirtual{vload(bp), vload(bp.Offset(half))}
				for j := range rows {
					t := vec()
					VBROADCASTSS(row(j), t)
					for h := range 2 {
						p := vec()
						VMULPS(b[h], t, p)
						VADDPS(p, acc[2*j+h], acc[2*j+h]) // acc = acc + a·b
					}
				}
				step(aks4, p0)
				if rows > 3 {
					step(aks4, p3)
				}
				step(ldb4, bp)
			})
			ldc4 := bytes4("ldc")
			cr := lea(cb)
			addFlag := Load(Param("add"), GP8())
			TESTB(addFlag, addFlag)
			JZ(LabelRef("set"))
			for j := range rows {
				for h := range 2 {
					v := vload(cr.Offset(half * h))
					VADDPS(acc[2*j+h], v, v) // c = c + acc
					store(v, cr.Offset(half*h))
				}
				step(ldc4, cr)
			}
			JMP(LabelRef("stored"))
			Label("set")
			for j := range rows {
				store(acc[2*j], cr)
				store(acc[2*j+1], cr.Offset(half))
				step(ldc4, cr)
			}
			Label("stored")
			step(Imm(uint64(2*half)), cb, bb)
		})
		r := bytes4("ars")
		IMUL3Q(Imm(uint64(rows)), r, r)
		step(r, at)
		r2 := bytes4("ldc")
		IMUL3Q(Imm(uint64(rows)), r2, r2)
		step(r2, ct)
	})
	VZEROUPPER()
	RET()
}

// erf8 is erff on eight values: the clamp to ±4 by comparisons (NaN
// passes), then x·P(x²)/Q(x²) in erff's order.
func erf8(x VecVirtual) VecVirtual {
	k := constant
	over, under, c := YMM(), YMM(), YMM()
	VCMPPS(Imm(cmpGT), k("four"), x, over)    // x > 4
	VCMPPS(Imm(cmpLT), k("minus4"), x, under) // x < −4
	VBLENDVPS(over, k("four"), x, c)
	VBLENDVPS(under, k("minus4"), c, c)
	z := mul(c, c)
	p := add(mul(z, k("ea13")), k("ea11"))
	for _, a := range []string{"ea9", "ea7", "ea5", "ea3", "ea1"} {
		p = add(mul(z, p), k(a))
	}
	q := add(mul(z, k("eb8")), k("eb6"))
	for _, b := range []string{"eb4", "eb2", "eb0"} {
		q = add(mul(z, q), k(b))
	}
	return div(mul(c, p), q)
}

func gelu() {
	TEXT("geluAVX2", NOSPLIT, "func(y, x []float32, c float32, n int)")
	Doc("geluAVX2 is geluScalar on x[:n], n > 0 a multiple of 8.")
	y, x := ptr("y"), ptr("x")
	cv := bcast("c")
	n4 := bytes4("n")
	off := GP64()
	each("block", n4, off, func() {
		v := load(plus(x, off, 1))
		e := add(erf8(div(v, cv)), k1())                         // erff(v/c) + 1
		store(mul(mul(v, e), constant("half")), plus(y, off, 1)) // v·(…)·0.5
	})
	VZEROUPPER()
	RET()
}

func geluGrad() {
	TEXT("geluGradAVX2", NOSPLIT, "func(dx, dy, x []float32, c float32, n int)")
	Doc("geluGradAVX2 is geluGradScalar on x[:n], n > 0 a multiple of 8.")
	dx, dy, x := ptr("dx"), ptr("dy"), ptr("x")
	cv := bcast("c")
	n4 := bytes4("n")
	z := zero()
	off := GP64()
	each("block", n4, off, func() {
		v := load(plus(x, off, 1))
		u := div(v, cv)
		g := add(z, mul(load(plus(dy, off, 1)), constant("half"))) // 0 + dy·0.5
		ge := add(z, mul(g, v))                                    // 0 + g·v
		nu := mul(u, u)
		VXORPS(constant("sign"), nu, nu)                             // (−u)·u
		d := mul(expf8(nu), constant("erf0"))                        // expf(−u·u)·2/√π
		du := add(z, div(mul(ge, d), cv))                            // 0 + ge·d/c
		store(add(mul(g, add(erf8(u), k1())), du), plus(dx, off, 1)) // g·(erff(u)+1) + du
	})
	VZEROUPPER()
	RET()
}

func scale() {
	TEXT("scaleAVX2", NOSPLIT, "func(y []float32, a float32, n int)")
	Doc("scaleAVX2 multiplies y[:n] by a, n > 0 a multiple of 8.")
	y := ptr("y")
	av := bcast("a")
	n4 := bytes4("n")
	off := GP64()
	each("block", n4, off, func() {
		store(mul(load(plus(y, off, 1)), av), plus(y, off, 1))
	})
	VZEROUPPER()
	RET()
}

// widen converts eight float32 values to float64, lanes 0–3 and 4–7.
func widen(v VecVirtual) (lo, hi VecVirtual) {
	lo, hi = YMM(), YMM()
	h := XMM()
	VCVTPS2PD(v.AsX(), lo)
	VEXTRACTF128(Imm(1), v, h)
	VCVTPS2PD(h, hi)
	return lo, hi
}

func normAffine() {
	TEXT("normAffineAVX2", NOSPLIT, "func(y, xh, x, w, b []float32, m, rs float64, n int)")
	Doc("normAffineAVX2 is normAffineScalar on x[:n], n > 0 a multiple of 8.")
	y, xh, x, w, b := ptr("y"), ptr("xh"), ptr("x"), ptr("w"), ptr("b")
	mv, rv := bcast64("m"), bcast64("rs")
	n4 := bytes4("n")
	off := GP64()
	each("block", n4, off, func() {
		a, c := widen(load(plus(x, off, 1)))
		VSUBPD(mv, a, a) // (float64(x) − m)·rs
		VSUBPD(mv, c, c)
		VMULPD(rv, a, a)
		VMULPD(rv, c, c)
		h, hh := XMM(), XMM()
		VCVTPD2PSY(a, h) // float32(…)
		VCVTPD2PSY(c, hh)
		v := YMM()
		VINSERTF128(Imm(1), hh, h.AsY(), v)
		store(v, plus(xh, off, 1))
		store(add(mul(v, plus(w, off, 1)), plus(b, off, 1)), plus(y, off, 1)) // h·w + b
	})
	VZEROUPPER()
	RET()
}

func softmaxGrad() {
	TEXT("softmaxGradAVX2", NOSPLIT, "func(dx, dy, y []float32, s float32, n int)")
	Doc("softmaxGradAVX2 is softmaxGradScalar on y[:n], n > 0 a multiple of 8.")
	dx, dy, y := ptr("dx"), ptr("dy"), ptr("y")
	sv := bcast("s")
	n4 := bytes4("n")
	off := GP64()
	each("block", n4, off, func() {
		store(mul(load(plus(y, off, 1)), sub(load(plus(dy, off, 1)), sv)), plus(dx, off, 1)) // y·(dy − s)
	})
	VZEROUPPER()
	RET()
}

// laneSums emits a kernel that adds, for each block of eight values at byte
// offset off, the two registers of four float64 that term gives to the
// eight lane sums at *s (lanes 0–3, 4–7); setup loads term's operands.
func laneSums(name, params, doc string, setup func() (term func(off Register) (lo, hi VecVirtual))) {
	TEXT(name, NOSPLIT, params)
	Doc(doc)
	term := setup()
	sp := Mem{Base: Load(Param("s"), GP64())}
	lo, hi := YMM(), YMM()
	VMOVUPD(sp, lo)
	VMOVUPD(sp.Offset(32), hi)
	n4 := bytes4("n")
	off := GP64()
	each("block", n4, off, func() {
		a, b := term(off)
		VADDPD(a, lo, lo)
		VADDPD(b, hi, hi)
	})
	VMOVUPD(lo, sp)
	VMOVUPD(hi, sp.Offset(32))
	VZEROUPPER()
	RET()
}

func expSum() {
	laneSums("expSumAVX2", "func(y, x []float32, m float32, s *[8]float64, n int)",
		"expSumAVX2 is expSumScalar on x[:n], n > 0 a multiple of 8.", func() func(Register) (VecVirtual, VecVirtual) {
			y, x := ptr("y"), ptr("x")
			mv := bcast("m")
			return func(off Register) (VecVirtual, VecVirtual) {
				e := expf8(sub(load(plus(x, off, 1)), mv))
				store(e, plus(y, off, 1))
				return widen(e)
			}
		})
}

func sums64() {
	laneSums("sums64AVX2", "func(x []float32, s *[8]float64, n int)",
		"sums64AVX2 is sums64Scalar on x[:n], n > 0 a multiple of 8.", func() func(Register) (VecVirtual, VecVirtual) {
			x := ptr("x")
			return func(off Register) (VecVirtual, VecVirtual) { return widen(load(plus(x, off, 1))) }
		})
}

func sqDevs64() {
	laneSums("sqDevs64AVX2", "func(x []float32, m float64, s *[8]float64, n int)",
		"sqDevs64AVX2 is sqDevs64Scalar on x[:n], n > 0 a multiple of 8.", func() func(Register) (VecVirtual, VecVirtual) {
			x := ptr("x")
			mv := bcast64("m")
			return func(off Register) (VecVirtual, VecVirtual) {
				a, b := widen(load(plus(x, off, 1)))
				VSUBPD(mv, a, a) // e = float64(x) − m
				VSUBPD(mv, b, b)
				VMULPD(a, a, a) // e·e
				VMULPD(b, b, b)
				return a, b
			}
		})
}

func dots64() {
	laneSums("dots64AVX2", "func(x, y []float32, s *[8]float64, n int)",
		"dots64AVX2 is dots64Scalar on x[:n] and y[:n], n > 0 a multiple of 8.", func() func(Register) (VecVirtual, VecVirtual) {
			x, y := ptr("x"), ptr("y")
			return func(off Register) (VecVirtual, VecVirtual) {
				a, b := widen(load(plus(x, off, 1)))
				c, d := widen(load(plus(y, off, 1)))
				VMULPD(c, a, a) // float64(x)·float64(y)
				VMULPD(d, b, b)
				return a, b
			}
		})
}
