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
// few pixels are removed. The factor is computed once per image in float64
// and reused for every channel.
type ROAD struct{ Noise float64 }

// Name implements Reference.
func (r ROAD) Name() string { return "road:" + strconv.FormatFloat(r.Noise, 'g', -1, 64) }

// Fill implements Reference.
func (r ROAD) Fill(img []float32, shape []int, keep []float32, rng *rand.Rand) error {
	var s roadSolver
	return s.fill(img, shape, keep, r.Noise, rng)
}

// roadSolver holds the buffers of one imputation; reusing it across images
// saves their allocation.
type roadSolver struct {
	idx   []int32   // pixel → unknown, −1 when kept
	px    []int32   // unknown → pixel
	first []int32   // unknown → first column of its factor row
	off   []int     // unknown → start of its row in l
	l     []float64 // factor rows, envelope storage
	inv   []float64 // 1 / L[i][i]
	b     []float64 // right-hand sides, channel-major
}

// The eight neighbours and their weights.
var roadNeighbours = [8]struct {
	dy, dx int
	w      float64
}{
	{-1, -1, 1.0 / 12}, {-1, 0, 1.0 / 6}, {-1, 1, 1.0 / 12}, {0, -1, 1.0 / 6},
	{0, 1, 1.0 / 6}, {1, -1, 1.0 / 12}, {1, 0, 1.0 / 6}, {1, 1, 1.0 / 12},
}

func (s *roadSolver) fill(img []float32, shape []int, keep []float32, noise float64, rng *rand.Rand) error {
	if err := checkShapes(img, shape, keep); err != nil {
		return err
	}
	if noise < 0 || math.IsNaN(noise) {
		return fmt.Errorf("road: noise %g must be non-negative", noise)
	}
	C, H, W := shape[0], shape[1], shape[2]
	hw := H * W
	s.idx = resize(s.idx, hw)
	s.px = s.px[:0]
	for p, k := range keep {
		if k == 0 {
			s.idx[p] = int32(len(s.px))
			s.px = append(s.px, int32(p))
		} else {
			s.idx[p] = -1
		}
	}
	n := len(s.px)
	if n == 0 {
		return nil
	}
	if n == hw {
		return fmt.Errorf("road: every pixel is removed, so there is nothing to impute from")
	}
	s.first = resize(s.first, n)
	s.off = resize(s.off, n+1)
	s.inv = resize(s.inv, n)
	s.b = resize(s.b, C*n)
	clear(s.b)
	// The envelope holds at most W+2 entries per row.
	s.l = resize(s.l, n*min(n, W+2))
	for i, p := range s.px {
		y, x := int(p)/W, int(p)%W
		// Row i's envelope starts at its lowest-numbered earlier unknown
		// neighbour (up-left, up, up-right or left).
		f := int32(i)
		for _, nb := range roadNeighbours[:4] {
			yy, xx := y+nb.dy, x+nb.dx
			if yy >= 0 && xx >= 0 && xx < W {
				if j := s.idx[yy*W+xx]; j >= 0 && j < f {
					f = j
				}
			}
		}
		s.first[i] = f
		s.off[i+1] = s.off[i] + i - int(f) + 1
		ri := s.l[s.off[i]-int(f) : s.off[i+1]] // ri[k] is row i's entry in column k
		clear(ri[f:])
		var diag float64
		for _, nb := range roadNeighbours {
			yy, xx := y+nb.dy, x+nb.dx
			if yy < 0 || yy >= H || xx < 0 || xx >= W {
				continue
			}
			diag += nb.w
			q := yy*W + xx
			if j := s.idx[q]; j >= 0 {
				if int(j) < i {
					ri[j] = -nb.w
				}
				continue
			}
			for c := 0; c < C; c++ {
				s.b[c*n+i] += nb.w * float64(img[c*hw+q])
			}
		}
		ri[i] = diag
		// Factor the row now, while it is in cache: it needs only the rows
		// above it.
		if err := s.factorRow(i); err != nil {
			return err
		}
	}
	for c := 0; c < C; c++ {
		x := s.b[c*n : (c+1)*n]
		s.solve(x)
		for i, p := range s.px {
			v := x[i]
			if noise > 0 {
				v += noise * rng.NormFloat64()
			}
			img[c*hw+int(p)] = float32(v)
		}
	}
	return nil
}

// factorRow overwrites row i of the envelope with row i of the Cholesky
// factor L (M = LLᵀ), rows above it being factored already. Each entry is
// a short dot product with an earlier row; two running sums halve the wait
// on the latency of the additions, and the diagonal's reciprocal replaces a
// division (the loop stays inline: a call per dot product cost more).
func (s *roadSolver) factorRow(i int) error {
	inv := s.inv
	fi := int(s.first[i])
	ri := s.l[s.off[i]-fi : s.off[i+1]]
	for j := fi; j < i; j++ {
		fj := int(s.first[j])
		rj := s.l[s.off[j]-fj : s.off[j+1]]
		k0 := max(fi, fj)
		a, b := ri[k0:j], rj[k0:j]
		b = b[:len(a)]
		var s0, s1 float64
		k := 0
		for ; k+2 <= len(a); k += 2 {
			s0 += a[k] * b[k]
			s1 += a[k+1] * b[k+1]
		}
		if k < len(a) {
			s0 += a[k] * b[k]
		}
		ri[j] = (ri[j] - s0 - s1) * inv[j]
	}
	d := ri[i]
	for _, v := range ri[fi:i] {
		d -= v * v
	}
	if !(d > 0) {
		return fmt.Errorf("road: imputation system is singular at removed pixel %d (pivot %g)", s.px[i], d)
	}
	ri[i] = math.Sqrt(d)
	inv[i] = 1 / ri[i]
	return nil
}

// solve overwrites b with M⁻¹b using the factor.
func (s *roadSolver) solve(b []float64) {
	n := len(b)
	for i := 0; i < n; i++ {
		fi := int(s.first[i])
		ri := s.l[s.off[i]-fi : s.off[i+1]]
		b[i] = (b[i] - dot(ri[fi:i], b[fi:i])) / ri[i]
	}
	for i := n - 1; i >= 0; i-- {
		fi := int(s.first[i])
		ri := s.l[s.off[i]-fi : s.off[i+1]]
		b[i] /= ri[i]
		v := b[i]
		for k := fi; k < i; k++ {
			b[k] -= ri[k] * v
		}
	}
}

// dot is Σ a[k]·b[k] with four running sums: the factorisation is a chain
// of short dot products, and one accumulator would wait on the latency of
// every addition.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
