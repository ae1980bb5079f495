package native

import "math"

//go:generate sh -c "cd asm && go run . -out ../kernels_amd64.s -stubs ../kernels_amd64.go -pkg native"

// The elementwise kernels of the hot layers. kernels_amd64.s runs them on
// AVX2 (vec_amd64.go calls it); these scalar versions do the rest and give
// the same results.

// pool2Scalar max-pools one row of 2×2 windows: top and bot are the two
// input rows (w pixels of c channels, channels-last), y the row of w
// outputs; values below floor count as floor.
func pool2Scalar(y, top, bot []float32, w, c int, floor float32) {
	for ox := range w {
		a, b := top[2*ox*c:][:c], top[(2*ox+1)*c:][:c]
		p, q := bot[2*ox*c:][:c], bot[(2*ox+1)*c:][:c]
		out := y[ox*c:][:c]
		for i, v := range a {
			out[i] = max(max(v, b[i]), max(p[i], q[i]), floor)
		}
	}
}

// route2Scalar is the backward pass of pool2Scalar: each output's gradient
// g goes to the first of its window's four inputs (top left, top right,
// bottom left, bottom right), raised to floor, that equals the output y, and
// zero to the other three (dtop and dbot are the input rows' gradients);
// with gate, zero everywhere where y is not positive.
func route2Scalar(dtop, dbot, top, bot, y, g []float32, w, c int, floor float32, gate bool) {
	for ox := range w {
		i, j := 2*ox*c, (2*ox+1)*c
		a, b, p := top[i:][:c], top[j:][:c], bot[i:][:c] // the fourth input takes what the three leave
		da, db, dp, dq := dtop[i:][:c], dtop[j:][:c], dbot[i:][:c], dbot[j:][:c]
		ys, gs := y[ox*c:][:c], g[ox*c:][:c]
		for ch, m := range ys {
			v := math.Float32bits(gs[ch])
			if gate {
				v &= positive(m)
			}
			// Branch-free: which input is the first maximum is as
			// unpredictable as the data.
			h0 := b2u(max(a[ch], floor) == m)
			h1 := b2u(max(b[ch], floor) == m) &^ h0
			h2 := b2u(max(p[ch], floor) == m) &^ (h0 | h1)
			h3 := 1 &^ (h0 | h1 | h2)
			da[ch] = math.Float32frombits(v & -uint32(h0))
			db[ch] = math.Float32frombits(v & -uint32(h1))
			dp[ch] = math.Float32frombits(v & -uint32(h2))
			dq[ch] = math.Float32frombits(v & -uint32(h3))
		}
	}
}

// addToScalar adds src to dst elementwise.
func addToScalar(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] += v
	}
}

// im2colRowsScalar copies, for each of count output pixels of a convolution
// with short kernel rows, its k kernel rows of run floats: row ky of pixel p
// from src[p·step+ky·srcRow:] to dst[(p·k+ky)·run:].
func im2colRowsScalar(dst, src []float32, k, run, srcRow, step, count int) {
	for p := range count {
		for ky := range k {
			at := (p*k + ky) * run
			copy(dst[at:at+run], src[p*step+ky*srcRow:])
		}
	}
}

// col2imRowsScalar adds back, for each of count output pixels in turn, its k
// kernel rows of run floats: row ky of pixel p from src[(p·k+ky)·run:] onto
// dst[p·step+ky·dstRow:].
func col2imRowsScalar(dst, src []float32, k, run, dstRow, step, count int) {
	for p := range count {
		for ky := range k {
			d, s := dst[p*step+ky*dstRow:][:run], src[(p*k+ky)*run:][:run]
			for j := range d {
				d[j] += s[j]
			}
		}
	}
}

// gemm16Scalar computes C = A·B, or C += A·B when add, for C of m rows and n
// columns (row i at c[i·ldc:]), A(i, kk) at a[i·ars+kk·aks] (a row-major or a
// transposed A alike) and B row-major (row kk at b[kk·ldb:]). Each value is
// summed over kk in order from zero, a product then an addition, and then
// added to C's when add: the order the AVX2 tiles keep.
func gemm16Scalar(c, a, b []float32, m, n, k, ars, aks, ldb, ldc int, add bool) {
	for j0 := 0; j0 < n; j0 += 16 {
		w := min(16, n-j0)
		for i := range m {
			var acc [16]float32 // row i's sums over columns j0…, each over kk in order
			for kk := range k {
				av := a[i*ars+kk*aks]
				for j, bv := range b[kk*ldb+j0 : kk*ldb+j0+w] {
					acc[j] += float32(av * bv)
				}
			}
			row := c[i*ldc+j0 : i*ldc+j0+w]
			for j := range row {
				if add {
					row[j] += acc[j]
				} else {
					row[j] = acc[j]
				}
			}
		}
	}
}
