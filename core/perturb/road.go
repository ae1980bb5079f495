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
	// Envelope: row i starts at its lowest-numbered earlier unknown
	// neighbour (up-left, up, up-right or left).
	s.first = resize(s.first, n)
	s.off = resize(s.off, n+1)
	for i, p := range s.px {
		y, x := int(p)/W, int(p)%W
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
	}
	s.l = resize(s.l, s.off[n])
	clear(s.l)
	s.b = resize(s.b, C*n)
	clear(s.b)
	for i, p := range s.px {
		y, x := int(p)/W, int(p)%W
		row := s.l[s.off[i]-int(s.first[i]):]
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
					row[j] = -nb.w
				}
				continue
			}
			for c := 0; c < C; c++ {
				s.b[c*n+i] += nb.w * float64(img[c*hw+q])
			}
		}
		row[i] = diag
	}
	if err := s.factor(n); err != nil {
		return err
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

// factor overwrites the envelope rows with their Cholesky factor L (M = LLᵀ).
func (s *roadSolver) factor(n int) error {
	for i := 0; i < n; i++ {
		fi := int(s.first[i])
		ri := s.l[s.off[i]-fi : s.off[i+1]] // ri[k] is L[i][k] for k in [fi, i]
		for j := fi; j < i; j++ {
			fj := int(s.first[j])
			rj := s.l[s.off[j]-fj : s.off[j+1]]
			v := ri[j]
			for k := max(fi, fj); k < j; k++ {
				v -= ri[k] * rj[k]
			}
			ri[j] = v / rj[j]
		}
		d := ri[i]
		for _, v := range ri[fi:i] {
			d -= v * v
		}
		if !(d > 0) {
			return fmt.Errorf("road: imputation system is singular at removed pixel %d (pivot %g)", s.px[i], d)
		}
		ri[i] = math.Sqrt(d)
	}
	return nil
}

// solve overwrites b with M⁻¹b using the factor.
func (s *roadSolver) solve(b []float64) {
	n := len(b)
	for i := 0; i < n; i++ {
		fi := int(s.first[i])
		ri := s.l[s.off[i]-fi : s.off[i+1]]
		v := b[i]
		for k := fi; k < i; k++ {
			v -= ri[k] * b[k]
		}
		b[i] = v / ri[i]
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

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
