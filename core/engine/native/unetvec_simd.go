//go:build goexperiment.simd && amd64

package native

import (
	"math"
	"simd/archsimd"
	"unsafe"
)

// The kernels of unetvec.go eight channels at a time, operation for
// operation as the scalar versions (no fused multiply-adds), so that both
// builds give the same numbers.

type f8 = archsimd.Float32x8

func ld8(s []float32) f8 { return archsimd.LoadFloat32x8Slice(s) }
func bc8(v float32) f8   { return archsimd.BroadcastFloat32x8(v) }
func vec8(c int) bool    { return c%8 == 0 && archsimd.X86.AVX2() }

// The tile transforms address their 16 inputs and outputs by offset from a
// base pointer: each call checks once that its slices hold the farthest
// value it touches, and the loads and stores between go unchecked, which
// the transforms' many short strided accesses otherwise pay for with more
// work than the arithmetic.

// at loads the eight floats at p + 4·off bytes.
func at(p unsafe.Pointer, off int) f8 {
	return archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(p, 4*off)))
}

// put stores v at p + 4·off bytes.
func put(v f8, p unsafe.Pointer, off int) { v.Store((*[8]float32)(unsafe.Add(p, 4*off))) }

// rowB applies Bᵀ along one row of a tile: four pixels c apart.
func rowB(p unsafe.Pointer, off, c int) (f8, f8, f8, f8) {
	d0, d1, d2, d3 := at(p, off), at(p, off+c), at(p, off+2*c), at(p, off+3*c)
	return d0.Sub(d2), d1.Add(d2), d2.Sub(d1), d1.Sub(d3)
}

func winoIn(v []float32, plane int, x []float32, row, c int) {
	if !vec8(c) {
		winoInScalar(v, plane, x, row, c)
		return
	}
	_, _ = v[15*plane+c-1], x[3*row+4*c-1]
	pv, px := unsafe.Pointer(&v[0]), unsafe.Pointer(&x[0])
	for ch := 0; ch < c; ch += 8 {
		a0, a1, a2, a3 := rowB(px, ch, c)
		b0, b1, b2, b3 := rowB(px, row+ch, c)
		c0, c1, c2, c3 := rowB(px, 2*row+ch, c)
		d0, d1, d2, d3 := rowB(px, 3*row+ch, c)
		put(a0.Sub(c0), pv, ch)
		put(a1.Sub(c1), pv, plane+ch)
		put(a2.Sub(c2), pv, 2*plane+ch)
		put(a3.Sub(c3), pv, 3*plane+ch)
		put(b0.Add(c0), pv, 4*plane+ch)
		put(b1.Add(c1), pv, 5*plane+ch)
		put(b2.Add(c2), pv, 6*plane+ch)
		put(b3.Add(c3), pv, 7*plane+ch)
		put(c0.Sub(b0), pv, 8*plane+ch)
		put(c1.Sub(b1), pv, 9*plane+ch)
		put(c2.Sub(b2), pv, 10*plane+ch)
		put(c3.Sub(b3), pv, 11*plane+ch)
		put(b0.Sub(d0), pv, 12*plane+ch)
		put(b1.Sub(d1), pv, 13*plane+ch)
		put(b2.Sub(d2), pv, 14*plane+ch)
		put(b3.Sub(d3), pv, 15*plane+ch)
	}
}

// colBAdj is the adjoint of Bᵀ down one column of a tile.
func colBAdj(p unsafe.Pointer, off, plane int) (f8, f8, f8, f8) {
	var z f8
	v0, v1, v2, v3 := at(p, off), at(p, off+4*plane), at(p, off+8*plane), at(p, off+12*plane)
	return v0, v1.Sub(v2).Add(v3), v1.Add(v2).Sub(v0), z.Sub(v3)
}

// rowBAddAdj adds the adjoint of Bᵀ along one row of a tile to the row.
func rowBAddAdj(p unsafe.Pointer, off, c int, h0, h1, h2, h3 f8) {
	var z f8
	put(at(p, off).Add(h0), p, off)
	put(at(p, off+c).Add(h1.Sub(h2).Add(h3)), p, off+c)
	put(at(p, off+2*c).Add(h1.Add(h2).Sub(h0)), p, off+2*c)
	put(at(p, off+3*c).Add(z.Sub(h3)), p, off+3*c)
}

func winoInAdj(dx []float32, row int, dv []float32, plane, c int) {
	if !vec8(c) {
		winoInAdjScalar(dx, row, dv, plane, c)
		return
	}
	_, _ = dv[15*plane+c-1], dx[3*row+4*c-1]
	pv, px := unsafe.Pointer(&dv[0]), unsafe.Pointer(&dx[0])
	for ch := 0; ch < c; ch += 8 {
		h00, h10, h20, h30 := colBAdj(pv, ch, plane)
		h01, h11, h21, h31 := colBAdj(pv, plane+ch, plane)
		h02, h12, h22, h32 := colBAdj(pv, 2*plane+ch, plane)
		h03, h13, h23, h33 := colBAdj(pv, 3*plane+ch, plane)
		rowBAddAdj(px, ch, c, h00, h01, h02, h03)
		rowBAddAdj(px, row+ch, c, h10, h11, h12, h13)
		rowBAddAdj(px, 2*row+ch, c, h20, h21, h22, h23)
		rowBAddAdj(px, 3*row+ch, c, h30, h31, h32, h33)
	}
}

// rowA applies Aᵀ along one row of M.
func rowA(p unsafe.Pointer, off, plane int) (f8, f8) {
	m0, m1, m2, m3 := at(p, off), at(p, off+plane), at(p, off+2*plane), at(p, off+3*plane)
	return m0.Add(m1).Add(m2), m1.Sub(m2).Sub(m3)
}

func winoOut(y []float32, row int, m []float32, plane int, bias, res []float32, c, rows, cols int) {
	if !vec8(c) {
		winoOutScalar(y, row, m, plane, bias, res, c, rows, cols)
		return
	}
	last := (rows-1)*row + cols*c - 1
	_, _, _ = m[15*plane+c-1], y[last], bias[c-1]
	pm, py, pb := unsafe.Pointer(&m[0]), unsafe.Pointer(&y[0]), unsafe.Pointer(&bias[0])
	var pr unsafe.Pointer
	if res != nil {
		_ = res[last]
		pr = unsafe.Pointer(&res[0])
	}
	for ch := 0; ch < c; ch += 8 {
		r00, r01 := rowA(pm, ch, plane)
		r10, r11 := rowA(pm, 4*plane+ch, plane)
		r20, r21 := rowA(pm, 8*plane+ch, plane)
		r30, r31 := rowA(pm, 12*plane+ch, plane)
		b := at(pb, ch)
		out := [2][2]f8{
			{r00.Add(r10).Add(r20).Add(b), r01.Add(r11).Add(r21).Add(b)},
			{r10.Sub(r20).Sub(r30).Add(b), r11.Sub(r21).Sub(r31).Add(b)},
		}
		for i := range rows {
			for j := range cols {
				off := i*row + j*c + ch
				o := out[i][j]
				if pr != nil {
					o = o.Add(at(pr, off))
				}
				put(o, py, off)
			}
		}
	}
}

// colAAdj is the adjoint of Aᵀ down one column: dY's two values to four.
func colAAdj(g0, g1 f8) (f8, f8, f8, f8) {
	var z f8
	return g0, g0.Add(g1), g0.Sub(g1), z.Sub(g1)
}

// rowAAdj stores the adjoint of Aᵀ along one row of dM.
func rowAAdj(p unsafe.Pointer, off, plane int, q0, q1 f8) {
	var z f8
	put(q0, p, off)
	put(q0.Add(q1), p, off+plane)
	put(q0.Sub(q1), p, off+2*plane)
	put(z.Sub(q1), p, off+3*plane)
}

func winoOutAdj(dm []float32, plane int, dy []float32, row, c, rows, cols int) {
	if !vec8(c) {
		winoOutAdjScalar(dm, plane, dy, row, c, rows, cols)
		return
	}
	_, _ = dm[15*plane+c-1], dy[(rows-1)*row+cols*c-1]
	pm, py := unsafe.Pointer(&dm[0]), unsafe.Pointer(&dy[0])
	for ch := 0; ch < c; ch += 8 {
		var g00, g01, g10, g11 f8
		g00 = at(py, ch)
		if cols > 1 {
			g01 = at(py, c+ch)
		}
		if rows > 1 {
			g10 = at(py, row+ch)
			if cols > 1 {
				g11 = at(py, row+c+ch)
			}
		}
		q00, q10, q20, q30 := colAAdj(g00, g10)
		q01, q11, q21, q31 := colAAdj(g01, g11)
		rowAAdj(pm, ch, plane, q00, q01)
		rowAAdj(pm, 4*plane+ch, plane, q10, q11)
		rowAAdj(pm, 8*plane+ch, plane, q20, q21)
		rowAAdj(pm, 12*plane+ch, plane, q30, q31)
	}
}

func chanSums(sum, x []float32, c int) {
	if !vec8(c) {
		chanSumsScalar(sum, x, c)
		return
	}
	for ch := 0; ch < c; ch += 8 {
		acc := ld8(sum[ch:])
		for p := ch; p < len(x); p += c {
			acc = acc.Add(ld8(x[p:]))
		}
		acc.StoreSlice(sum[ch:])
	}
}

func chanSqDevs(sq, x, mean []float32, c int) {
	if !vec8(c) {
		chanSqDevsScalar(sq, x, mean, c)
		return
	}
	for ch := 0; ch < c; ch += 8 {
		acc, m := ld8(sq[ch:]), ld8(mean[ch:])
		for p := ch; p < len(x); p += c {
			d := ld8(x[p:]).Sub(m)
			acc = acc.Add(d.Mul(d))
		}
		acc.StoreSlice(sq[ch:])
	}
}

// expConsts are expf8's constants, broadcast once per kernel call rather
// than once per vector.
type expConsts struct{ hi, lo, log2e, half, ln2hi, ln2lo, one, p0, p1, p2, p3, p4, p5, inf f8 }

func newExpConsts() expConsts {
	return expConsts{hi: bc8(88.72), lo: bc8(-87.33), log2e: bc8(1.44269504088896341), half: bc8(0.5),
		ln2hi: bc8(0.693359375), ln2lo: bc8(-2.12194440e-4), one: bc8(1),
		p0: bc8(1.9875691500e-4), p1: bc8(1.3981999507e-3), p2: bc8(8.3334519073e-3),
		p3: bc8(4.1665795894e-2), p4: bc8(1.6666665459e-1), p5: bc8(5.0000001201e-1), inf: bc8(float32(math.Inf(1)))}
}

// expf8 is expf on eight values.
func expf8(x f8, k *expConsts) f8 {
	over, under := x.Greater(k.hi), x.Less(k.lo)
	x = x.Min(k.hi).Max(k.lo)
	n := x.Mul(k.log2e).Add(k.half).Floor()
	r := x.Sub(n.Mul(k.ln2hi))
	r = r.Sub(n.Mul(k.ln2lo))
	z := r.Mul(r)
	p := k.p0.Mul(r).Add(k.p1).Mul(r).Add(k.p2).Mul(r).Add(k.p3).Mul(r).Add(k.p4).Mul(r).Add(k.p5)
	p = p.Mul(z).Add(r).Add(k.one)
	e := n.ConvertToInt32().Add(archsimd.BroadcastInt32x8(127)).ShiftAllLeft(23).AsFloat32x8()
	var zero f8
	return zero.Merge(k.inf.Merge(p.Mul(e), over), under)
}

func affineSiLU(y, sig, x, scale, shift []float32, c int) {
	if !vec8(c) {
		affineSiLUScalar(y, sig, x, scale, shift, c)
		return
	}
	var z f8
	k := newExpConsts()
	one := k.one
	for p := 0; p+c <= len(x); p += c {
		for ch := 0; ch < c; ch += 8 {
			a := ld8(x[p+ch:]).Mul(ld8(scale[ch:])).Add(ld8(shift[ch:]))
			s := one.Div(one.Add(expf8(z.Sub(a), &k)))
			a.Mul(s).StoreSlice(y[p+ch:])
			if sig != nil {
				s.StoreSlice(sig[p+ch:])
			}
		}
	}
}

func siluGrad(da, dy, x, sig, scale, shift, mean, inv, sda, sdax []float32, c int) {
	if !vec8(c) {
		siluGradScalar(da, dy, x, sig, scale, shift, mean, inv, sda, sdax, c)
		return
	}
	var z f8
	k := newExpConsts()
	one := k.one
	for p := 0; p+c <= len(x); p += c {
		for ch := 0; ch < c; ch += 8 {
			xv := ld8(x[p+ch:])
			a := xv.Mul(ld8(scale[ch:])).Add(ld8(shift[ch:]))
			var s f8
			if sig != nil {
				s = ld8(sig[p+ch:])
			} else {
				s = one.Div(one.Add(expf8(z.Sub(a), &k)))
			}
			g := ld8(dy[p+ch:]).Mul(s).Mul(one.Add(a.Mul(one.Sub(s))))
			g.StoreSlice(da[p+ch:])
			ld8(sda[ch:]).Add(g).StoreSlice(sda[ch:])
			xh := xv.Sub(ld8(mean[ch:])).Mul(ld8(inv[ch:]))
			ld8(sdax[ch:]).Add(g.Mul(xh)).StoreSlice(sdax[ch:])
		}
	}
}

func affine3(dx, da, x, p, q, r []float32, c int) {
	if !vec8(c) {
		affine3Scalar(dx, da, x, p, q, r, c)
		return
	}
	for o := 0; o+c <= len(x); o += c {
		for ch := 0; ch < c; ch += 8 {
			ld8(p[ch:]).Mul(ld8(da[o+ch:])).Sub(ld8(q[ch:]).Mul(ld8(x[o+ch:]))).Add(ld8(r[ch:])).StoreSlice(dx[o+ch:])
		}
	}
}
