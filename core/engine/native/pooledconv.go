package native

import "faithlab/core/engine/gemm"

// A max-pool passes each window's gradient to the first of the window's
// largest values in raster order, as PyTorch does (pool2d, maxPool,
// route2). Where an image is flat — an 8-bit photo's sky, wall or
// saturated patch — the convolution before the pool gives several pixels
// of a window the same value in exact arithmetic, and which of them gets
// the gradient is decided by that tie. A tie survives in float32 only if
// every output pixel is summed in the same order, which OpenBLAS does not
// promise: its Haswell kernel (what AVX2 machines without AVX-512 run, and
// CI with OPENBLAS_CORETYPE=Haswell) sums the rows of a product in
// alternating blocks of six in two orders (with 16 or more output
// channels), one ulp apart, so equal windows came out unequal and the
// gradient went to whichever rounded up: Gradient maps of torchvision's
// resnet18 on three photos differed from PyTorch's by 44 % of their
// largest value, a small ResNet's on images with flat regions by 68 %
// (TestMaxPoolTiesMatchPyTorch), where tie-free inputs agree to 1e-6.
//
// So the convolutions whose outputs a max-pool compares (directly or
// through position-wise layers: ReLU and the other pointwise activations,
// batch norm, per-channel affine maps) run their forward product on
// gemm16, which sums every value over k in one order from zero, on any
// row and on any CPU (its AVX2, AVX-512 and scalar tiles give the same
// bits): equal windows give equal values, and ties are PyTorch's ties.
// Their backward passes, where no value is compared, stay on the layer's
// kernel. Winograd's convolutions need nothing: on a tile flat in every
// channel (or along rows, or columns) their transforms take differences
// of equal values, exactly zero, so the outputs whose windows are equal
// are the same sum.

// markPooled sets pooled on every convolution (conv2d, convg) whose output
// a max-pool among nodes compares.
func markPooled(nodes []node, from [][]int) {
	for i, nd := range nodes {
		if !isMaxPool(nd) {
			continue
		}
	walk:
		for j := from[i][0]; j >= 0; j = from[j][0] {
			switch l := nodes[j].(type) {
			case *relu, *pointwise, *batchNorm, *affine, *identity:
			case *conv2d:
				l.pooled = true
				break walk
			case *convg:
				l.pooled = true
				break walk
			default:
				break walk
			}
		}
	}
}

func isMaxPool(nd node) bool {
	switch p := nd.(type) {
	case *maxPool:
		return true
	case *pool2d:
		return p.max
	}
	return false
}

// pad16 is n rounded up to a multiple of 16: gemm16's column blocks.
func pad16(n int) int { return (n + 15) &^ 15 }

// transpose16 writes the n×k row-major matrix w as k×pad16(n) into bt
// (k·pad16(n) floats), the columns past n zero: gemm16's B.
func transpose16(bt, w []float32, n, k int) {
	n16 := pad16(n)
	clear(bt[:k*n16])
	for j := range n {
		for kk, v := range w[j*k : (j+1)*k] {
			bt[kk*n16+j] = v
		}
	}
}

// pooledGEMM computes, for y of m rows ldy apart and n columns, y = A·B
// (y += A·B when add) with A m×k row-major and bt = transpose16 of B's
// n×k: on gemm16, so every value is summed over k in one order whatever
// its row; straight into y when n is a multiple of 16, else through
// scratch (m rows of pad16(n)), added to y in one addition as gemm16's
// own add does. With spread, the rows are split over the cores.
func pooledGEMM(y []float32, ldy int, a []float32, m, k int, bt []float32, n int, add, spread bool, scratch *[]float32) {
	n16 := pad16(n)
	c, ldc := y, ldy
	if n16 != n {
		c, ldc = grow(scratch, m*n16), n16
	}
	rows := func(lo, hi int) {
		if hi <= lo {
			return
		}
		gemm16(c[lo*ldc:], a[lo*k:], bt, hi-lo, n16, k, k, 1, n16, ldc, add && n16 == n)
		if n16 == n {
			return
		}
		for r := lo; r < hi; r++ {
			dst, src := y[r*ldy:r*ldy+n], c[r*ldc:r*ldc+n]
			if add {
				for j, v := range src {
					dst[j] += v
				}
			} else {
				copy(dst, src)
			}
		}
	}
	if !spread {
		rows(0, m)
		return
	}
	// Blocks of six rows, gemm16's tiles, spread over the cores.
	parallel((m+5)/6, func(lo, hi int) { rows(lo*6, min(hi*6, m)) })
}

// spreads says whether a layer's kernel spreads a product over the cores
// — a network's own (gemm.Parallel), not a replica's, which runs on one
// core beside the others; gonum's does so itself — so that pooledGEMM
// does too.
func spreads(k gemm.Kernel) bool {
	switch k := k.(type) {
	case gemm.Parallel:
		return k.Workers > 1
	case gemm.Gonum:
		return true
	}
	return false
}

// layout makes the weights' layouts of conv2d's products: permuted for
// the layer's kernel where it differs from PyTorch's, and transposed into
// wt16 when gemm16 runs the forward product (pooled).
func (l *conv2d) layout() {
	l.permute()
	if l.pooled {
		K := l.i.c * l.k * l.k
		transpose16(grow(&l.wt16, K*pad16(l.o.c)), l.kernelWeights(), l.o.c, K)
	}
}

// pooledForward is conv2d's forward product on gemm16 (see markPooled):
// y (M rows of cout, the bias already in them unless noBias) gets cols ·
// the weights.
func (l *conv2d) pooledForward(cols, y []float32, M, K int) {
	pooledGEMM(y, l.o.c, cols, M, K, l.wt16, l.o.c, !l.noBias, spreads(l.kern), &l.c16)
}
