package perturb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// ROAD is the noisy linear imputation published with ROAD (Rong et al.
// 2022): every removed pixel equals the weighted mean of its in-image
// 8-neighbours, weight 1/6 for the four direct and 1/12 for the four
// diagonal neighbours, renormalised at the border by leaving out neighbours
// outside the image. All removed pixels of an image are solved jointly, one
// linear system shared by the channels; then independent Gaussian noise of
// standard deviation Noise (absolute, default 0.01 through ParseReference)
// is added to the imputed pixels only, drawn channel by channel in
// row-major pixel order.
//
// The system is symmetric positive definite (a grounded graph Laplacian),
// so it is solved by a Cholesky factorisation in envelope (profile) form in
// row-major order: a removed pixel couples only to pixels at most one image
// row away, so each factor row spans at most W+1 unknowns and far fewer when
// few pixels are removed. The factor is computed once per image in float64,
// four rows at a time, and reused for every channel. Its cost grows with
// the square of the rows' spans, about n·W² for n removed pixels in large
// holes; where that exceeds what conjugate gradients preconditioned by
// multigrid take (a multiple of the pixels, roadMG), as for most masks of
// ImageNet-sized images, those solve the system instead, to within 1e-7 of
// the factor's solution for images of unit range. Images up to CIFAR's size
// always take the factor.
type ROAD struct{ Noise float64 }

// Name implements Reference.
func (r ROAD) Name() string { return "road:" + strconv.FormatFloat(r.Noise, 'g', -1, 64) }

// Fill implements Reference.
func (r ROAD) Fill(img []float32, shape []int, keep []float32, rng *rand.Rand) error {
	var s roadSolver
	return s.fill(img, shape, keep, r.Noise, rng)
}

// ROADSolverBytes is what one core's ROAD imputation holds for images of
// C channels of the given pixels at most (FillAll runs one solver per core): its grids, the
// multigrid hierarchy and conjugate gradients' vectors, or the factor's
// envelope, whichever the mask takes. Measured over random and blocky
// masks of 10–90 % (TestROADSolverBytesBoundsWhatItHolds): about 170 bytes
// a pixel for one channel and 480 for three at 224×224; the factor's
// envelope dominates small images, whose solvers the 2 MiB covers.
func ROADSolverBytes(C, pixels int) int64 {
	return int64(pixels)*int64(160*C+40) + 2<<20
}

// roadSolver holds the buffers of one imputation; reusing it across images
// saves their allocation. Pixel grids are padded by one pixel on every side
// so that a neighbour is always at a fixed offset and needs no bounds test.
type roadSolver struct {
	h, w  int       // image size the padded grids below are for
	diag  []float64 // padded grid: Σ of the in-image neighbours' weights
	idx   []int32   // padded grid: unknown of a removed pixel, noUnknown otherwise
	kv    []float64 // padded grid, channel-major: value of a kept pixel, 0 otherwise
	px    []int32   // unknown → padded pixel
	pix   []int32   // unknown → pixel
	first []int32   // unknown → first column of its factor row
	off   []int     // unknown → start of its row in l
	l     []float64 // factor rows, envelope storage
	inv   []float64 // 1 / L[i][i]
	b     []float64 // right-hand sides, channel-major

	mg      roadMG // the iterative solver, for the systems it solves faster
	threads int    // goroutines the iterative solver may use (0 or 1: the caller's)
	exact   bool   // always factor: the tests' reference
}

// noUnknown marks kept and outside pixels in roadSolver.idx: larger than any
// unknown, so the smallest of a pixel's neighbours' indices is its earliest
// removed neighbour.
const noUnknown = math.MaxInt32

// The eight neighbours and their weights, the first four before the pixel in
// row-major order.
var roadNeighbours = [8]struct {
	dy, dx int
	w      float64
}{
	{-1, -1, 1.0 / 12}, {-1, 0, 1.0 / 6}, {-1, 1, 1.0 / 12}, {0, -1, 1.0 / 6},
	{0, 1, 1.0 / 6}, {1, -1, 1.0 / 12}, {1, 0, 1.0 / 6}, {1, 1, 1.0 / 12},
}

// grids sizes the padded grids for an H×W image with C channels and, when
// the size changed, recomputes the diagonal (the row sums of the weights).
func (s *roadSolver) grids(C, H, W int) {
	wp := W + 2
	np := (H + 2) * wp
	s.idx = resize(s.idx, np)
	s.kv = resize(s.kv, C*np)
	if s.h == H && s.w == W {
		return
	}
	s.h, s.w = H, W
	s.diag = resize(s.diag, np)
	for y := range H {
		for x := range W {
			var d float64
			for _, nb := range roadNeighbours {
				if yy, xx := y+nb.dy, x+nb.dx; yy >= 0 && yy < H && xx >= 0 && xx < W {
					d += nb.w
				}
			}
			s.diag[(y+1)*wp+x+1] = d
		}
	}
}

func (s *roadSolver) fill(img []float32, shape []int, keep []float32, noise float64, rng *rand.Rand) error {
	if err := checkSizes(img, shape, keep); err != nil {
		return err
	}
	C, H, W := shape[0], shape[1], shape[2]
	hw, wp := H*W, W+2
	if noise < 0 || math.IsNaN(noise) {
		return fmt.Errorf("road: noise %g must be non-negative", noise)
	}
	s.grids(C, H, W)
	np := len(s.idx)
	idx, kv := s.idx, s.kv
	for i := range idx {
		idx[i] = noUnknown
	}
	clear(kv)
	px, pix := s.px[:0], s.pix[:0]
	for y := range H {
		row := keep[y*W : (y+1)*W]
		for x, k := range row {
			P := (y+1)*wp + x + 1
			switch k {
			case 0:
				idx[P] = int32(len(px))
				px = append(px, int32(P))
				pix = append(pix, int32(y*W+x))
			case 1:
				for c := range C {
					kv[c*np+P] = float64(img[c*hw+y*W+x])
				}
			default:
				// maskValueError's message, written out: calling it from this
				// loop measured 20 % slower at 90 % removed.
				return fmt.Errorf("mask value %g at pixel (%d, %d): want 1 (kept) or 0 (removed)", k, y, x)
			}
		}
	}
	s.px, s.pix = px, pix
	n := len(s.px)
	if n == 0 {
		return nil
	}
	if n == hw {
		return fmt.Errorf("road: every pixel is removed, so there is nothing to impute from")
	}
	if !s.exact && s.multigridCheaper(C, H, W, n) && s.mg.fill(img, C, H, W, keep, noise, rng, s.threads) {
		return nil
	}
	// Rows are factored four at a time; up to three dummy unknowns (a 1 on
	// the diagonal, nothing else) complete the last block.
	N := (n + 3) &^ 3
	for len(s.px) < N {
		s.px = append(s.px, 0)
	}
	s.first = resize(s.first, N)
	s.off = resize(s.off, N+1)
	s.inv = resize(s.inv, N)
	s.b = resize(s.b, C*N)
	// The factor's envelope, summed first so that l holds it and no more
	// (its bound, N rows of W+5, is three times what holes at 224×224 take).
	envelope := 0
	for i := 0; i < N; i += 4 {
		f := int(s.blockStart(i))
		envelope += 4*(i-f) + 10 // Σ r−f+1 over the block's rows r = i…i+3
	}
	s.l = resize(s.l, envelope)
	for i := 0; i < N; i += 4 {
		f := s.blockStart(i)
		for r := i; r < i+4; r++ {
			s.row(r, f, r >= n)
		}
		if err := s.factorBlock(i); err != nil {
			return err
		}
	}
	for c := range C {
		y := s.b[c*N : (c+1)*N]
		s.solve(y)
		out := img[c*hw : (c+1)*hw]
		for i := range n {
			v := y[i]
			if noise > 0 {
				v += noise * rng.NormFloat64()
			}
			out[s.pix[i]] = float32(v)
		}
	}
	return nil
}

// multigridCheaper says whether roadMG solves the system of n removed
// pixels faster than the factor. Measured on one core of the test machine
// (3×224×224 to 1×28×28, masks random and smooth, 10–90 % removed), the
// factor takes about 0.25 ns per unit of E = Σ (row span)² and roadMG about
// 150 ns per pixel plus 400 ns per removed pixel and channel. E is at most
// n·(W+5)², so small images skip summing it.
func (s *roadSolver) multigridCheaper(C, H, W, n int) bool {
	mg := 600*float64(H*W) + 1600*float64(n*C)
	if float64(n)*float64(W+5)*float64(W+5) <= mg {
		return false
	}
	var e float64
	for i := 0; i < n; i += 4 {
		f := s.blockStart(i)
		for r := i; r < i+4; r++ {
			e += float64(r-int(f)+1) * float64(r-int(f)+1)
		}
		if e > mg {
			return true
		}
	}
	return false
}

// blockStart is the first column of the block of four rows from unknown
// i, which are factored together: the earliest of their starts.
func (s *roadSolver) blockStart(i int) int32 {
	return min(s.start(i), s.start(i+1), s.start(i+2), s.start(i+3))
}

// start is the first column of unknown i's row of the system: its earliest
// removed neighbour before it (up-left, up, up-right or left), or i.
func (s *roadSolver) start(i int) int32 {
	if i >= len(s.px) || s.px[i] == 0 {
		return int32(i) // a dummy
	}
	P, wp := int(s.px[i]), s.w+2
	idx := s.idx[P-wp-1 : P]
	return min(int32(i), idx[0], idx[1], idx[2], idx[wp])
}

// row writes unknown i's row of the system, from column f to the diagonal,
// and its right-hand sides. Kept neighbours' weights go to the right-hand
// side through kv and removed ones' into the row, both without a branch on
// the mask: a kept earlier neighbour writes its weight on the diagonal,
// which is set last.
func (s *roadSolver) row(i int, f int32, dummy bool) {
	P, wp, N := int(s.px[i]), s.w+2, len(s.px)
	s.first[i] = f
	s.off[i+1] = s.off[i] + i - int(f) + 1
	ri := s.l[s.off[i]-int(f) : s.off[i+1]] // ri[k] is row i's entry in column k
	clear(ri[f:])
	if dummy {
		ri[i] = 1
		for c := range len(s.b) / N {
			s.b[c*N+i] = 0
		}
		return
	}
	up := s.idx[P-wp-1 : P-wp+2]
	ri[min(int(up[0]), i)] = -1.0 / 12
	ri[min(int(up[1]), i)] = -1.0 / 6
	ri[min(int(up[2]), i)] = -1.0 / 12
	ri[min(int(s.idx[P-1]), i)] = -1.0 / 6
	ri[i] = s.diag[P]
	np := len(s.idx)
	for c := range len(s.b) / N {
		kv := s.kv[c*np : (c+1)*np]
		a, m, z := kv[P-wp-1:P-wp+2], kv[P-1:P+2], kv[P+wp-1:P+wp+2]
		s.b[c*N+i] = (a[1]+m[0]+m[2]+z[1])/6 + (a[0]+a[2]+z[0]+z[2])/12
	}
}

// rows returns the four factor rows of the block starting at unknown i,
// indexed by column, and the block's first column.
func (s *roadSolver) rows(i int) (f int, r0, r1, r2, r3 []float64) {
	f = int(s.first[i])
	o := s.off[i : i+5]
	return f, s.l[o[0]-f : o[1]], s.l[o[1]-f : o[2]], s.l[o[2]-f : o[3]], s.l[o[3]-f : o[4]]
}

// factorBlock overwrites rows i…i+3, which start in the same column, with
// rows of the Cholesky factor L (M = LLᵀ), rows above them being factored
// already. Each entry left of the block is a short dot product with an
// earlier row; the four rows' dot products with row j share its loads and
// run as four independent sums, so neither the latency of the additions nor
// the loads bound the loop as they would one row at a time. The products of
// the new entries are summed as they are made, for the 4×4 diagonal block.
func (s *roadSolver) factorBlock(i int) error {
	inv := s.inv
	f, r0, r1, r2, r3 := s.rows(i)
	var s00, s10, s11, s20, s21, s22, s30, s31, s32, s33 float64
	for j := f; j < i; j++ {
		fj := int(s.first[j])
		rj := s.l[s.off[j]-fj : s.off[j+1]]
		k0 := max(f, fj)
		x := rj[k0:j]
		a, b, c, d := r0[k0:j], r1[k0:j], r2[k0:j], r3[k0:j]
		a, b, c, d = a[:len(x)], b[:len(x)], c[:len(x)], d[:len(x)]
		var p0, p1, p2, p3 float64
		k := 0
		for ; k+2 <= len(x); k += 2 {
			x0, x1 := x[k], x[k+1]
			p0 += a[k]*x0 + a[k+1]*x1
			p1 += b[k]*x0 + b[k+1]*x1
			p2 += c[k]*x0 + c[k+1]*x1
			p3 += d[k]*x0 + d[k+1]*x1
		}
		if k < len(x) {
			x0 := x[k]
			p0 += a[k] * x0
			p1 += b[k] * x0
			p2 += c[k] * x0
			p3 += d[k] * x0
		}
		v0 := (r0[j] - p0) * inv[j]
		v1 := (r1[j] - p1) * inv[j]
		v2 := (r2[j] - p2) * inv[j]
		v3 := (r3[j] - p3) * inv[j]
		r0[j], r1[j], r2[j], r3[j] = v0, v1, v2, v3
		s00 += v0 * v0
		s10 += v1 * v0
		s11 += v1 * v1
		s20 += v2 * v0
		s21 += v2 * v1
		s22 += v2 * v2
		s30 += v3 * v0
		s31 += v3 * v1
		s32 += v3 * v2
		s33 += v3 * v3
	}
	// The diagonal block: a 4×4 Cholesky of what the rows above left.
	if err := s.pivot(i, r0[i]-s00); err != nil {
		return err
	}
	l10 := (r1[i] - s10) * inv[i]
	l20 := (r2[i] - s20) * inv[i]
	l30 := (r3[i] - s30) * inv[i]
	if err := s.pivot(i+1, r1[i+1]-s11-l10*l10); err != nil {
		return err
	}
	l21 := (r2[i+1] - s21 - l20*l10) * inv[i+1]
	l31 := (r3[i+1] - s31 - l30*l10) * inv[i+1]
	if err := s.pivot(i+2, r2[i+2]-s22-l20*l20-l21*l21); err != nil {
		return err
	}
	l32 := (r3[i+2] - s32 - l30*l20 - l31*l21) * inv[i+2]
	r1[i], r2[i], r3[i], r2[i+1], r3[i+1], r3[i+2] = l10, l20, l30, l21, l31, l32
	return s.pivot(i+3, r3[i+3]-s33-l30*l30-l31*l31-l32*l32)
}

// pivot sets L[i][i] = √d.
func (s *roadSolver) pivot(i int, d float64) error {
	if !(d > 0) {
		P, wp := int(s.px[i]), s.w+2
		return fmt.Errorf("road: imputation system is singular at removed pixel (%d, %d) (pivot %g)", P/wp-1, P%wp-1, d)
	}
	r := math.Sqrt(d)
	s.l[s.off[i+1]-1] = r
	s.inv[i] = 1 / r
	return nil
}

// solve overwrites y with M⁻¹y using the factor, four rows at a time: the
// forward substitution as four dot products sharing the loads of y, the
// backward one as one pass over y per block.
func (s *roadSolver) solve(y []float64) {
	inv := s.inv
	N := len(y)
	for i := 0; i < N; i += 4 {
		f, r0, r1, r2, r3 := s.rows(i)
		x := y[f:i]
		a, b, c, d := r0[f:i], r1[f:i], r2[f:i], r3[f:i]
		a, b, c, d = a[:len(x)], b[:len(x)], c[:len(x)], d[:len(x)]
		var p0, p1, p2, p3 float64
		for k, xk := range x {
			p0 += a[k] * xk
			p1 += b[k] * xk
			p2 += c[k] * xk
			p3 += d[k] * xk
		}
		y0 := (y[i] - p0) * inv[i]
		y1 := (y[i+1] - p1 - r1[i]*y0) * inv[i+1]
		y2 := (y[i+2] - p2 - r2[i]*y0 - r2[i+1]*y1) * inv[i+2]
		y3 := (y[i+3] - p3 - r3[i]*y0 - r3[i+1]*y1 - r3[i+2]*y2) * inv[i+3]
		y[i], y[i+1], y[i+2], y[i+3] = y0, y1, y2, y3
	}
	for i := N - 4; i >= 0; i -= 4 {
		f, r0, r1, r2, r3 := s.rows(i)
		x3 := y[i+3] * inv[i+3]
		x2 := (y[i+2] - r3[i+2]*x3) * inv[i+2]
		x1 := (y[i+1] - r2[i+1]*x2 - r3[i+1]*x3) * inv[i+1]
		x0 := (y[i] - r1[i]*x1 - r2[i]*x2 - r3[i]*x3) * inv[i]
		y[i], y[i+1], y[i+2], y[i+3] = x0, x1, x2, x3
		t := y[f:i]
		a, b, c, d := r0[f:i], r1[f:i], r2[f:i], r3[f:i]
		a, b, c, d = a[:len(t)], b[:len(t)], c[:len(t)], d[:len(t)]
		for k := range t {
			t[k] -= (a[k]*x0 + b[k]*x1) + (c[k]*x2 + d[k]*x3)
		}
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
