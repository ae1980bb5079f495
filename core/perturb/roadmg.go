package perturb

import (
	"math"
	"math/rand/v2"
	"sync"
)

// roadMG solves ROAD's system where the Cholesky factor would cost more
// (large images, large holes): conjugate gradients on all channels at
// once, preconditioned by one multigrid V-cycle. The coarse grids are
// Galerkin's (PᵀAP, P the bilinear interpolation from the nodes at even
// coordinates, cut to the removed pixels), so each is again a symmetric
// 9-point stencil; the smoother is Gauss–Seidel in four colours (y mod 2,
// x mod 2), forward before the coarse correction and backward after, which
// keeps the V-cycle symmetric as conjugate gradients needs. No two cells
// of one colour are neighbours, so a colour's cells are updated on two
// goroutines in two fixed halves, and the result does not depend on the
// number of threads.
//
// The iteration stops when each channel's residual is below mgTol times its
// right-hand side (Euclidean norms), which leaves the solution within about
// 1e-7 of the exact one for images of unit range; it takes 4–8 iterations
// whatever the size of the holes. A system it has not solved after
// mgMaxIters iterations (none seen) is left to the factor.
type roadMG struct {
	levels     []mgLevel
	x, r, p, q []float64 // level 0: solution, residual, search direction, A·p
	scalars    []float64 // per channel: |b|, r·z, a sum, α, β; then the sum's parts by colour and half
	done       []bool    // per channel: converged
}

const (
	mgTol      = 1e-8
	mgMaxIters = 200
	// mgCoarsest: a level with at most this many unknowns is solved by
	// symmetric Gauss–Seidel sweeps alone (mgCoarseSweeps pairs).
	mgCoarsest     = 64
	mgCoarseSweeps = 10
)

// mgLevel is one grid of the hierarchy, h×w padded by one cell above and
// left and two below and right, so that the fine neighbourhood of a coarse
// node (2Y±1, 2X±1) stays inside the fine grid. Values of C channels are
// interleaved per cell; every vector is zero off the unknowns, which lets
// the finest level's stencil leave out the test for removed neighbours.
type mgLevel struct {
	h, w, wp int
	a        []float64  // coarse levels: 9 coefficients per cell, k = (dy+1)·3 + dx+1; unused on the finest (ROAD's weights)
	d        []float64  // finest level: centre coefficient, the in-image neighbours' weights
	inv      []float64  // 1 / centre on unknowns, 0 elsewhere
	colour   [4][]int32 // unknown cells by colour (y mod 2)·2 + x mod 2, ascending
	x, b, r  []float64  // solution, right-hand side, residual
	fine     bool
}

func (l *mgLevel) size(h, w, C int, fine bool) {
	l.h, l.w, l.wp, l.fine = h, w, w+3, fine
	np := (h + 3) * l.wp
	l.inv = resize(l.inv, np)
	clear(l.inv)
	l.x = resize(l.x, C*np)
	l.b = resize(l.b, C*np)
	l.r = resize(l.r, C*np)
	clear(l.x)
	clear(l.r)
	if fine {
		l.d = resize(l.d, np)
	} else {
		l.a = resize(l.a, 9*np)
		clear(l.a)
	}
	for c := range l.colour {
		l.colour[c] = l.colour[c][:0]
	}
}

// add lists cell p (at y, x) as unknown with centre coefficient d.
func (l *mgLevel) add(p, y, x int, d float64) {
	c := (y&1)<<1 | x&1
	l.colour[c] = append(l.colour[c], int32(p))
	l.inv[p] = 1 / d
}

func (l *mgLevel) unknowns() int {
	return len(l.colour[0]) + len(l.colour[1]) + len(l.colour[2]) + len(l.colour[3])
}

// coefs are the 9 coefficients of unknown cell p's row.
func (l *mgLevel) coefs(p int) [9]float64 {
	if !l.fine {
		return [9]float64(l.a[9*p : 9*p+9])
	}
	var a [9]float64
	for _, nb := range roadNeighbours {
		if l.inv[p+nb.dy*l.wp+nb.dx] != 0 {
			a[(nb.dy+1)*3+nb.dx+1] = -nb.w
		}
	}
	a[4] = l.d[p]
	return a
}

// parallel runs f on the two halves of cells, on two goroutines when
// threads allow and the halves are worth it. The halves are the same
// whatever the threads, so sums kept per half (half 0 or 1) and added in
// order do not depend on them.
func parallel(threads int, cells []int32, f func(half int, cells []int32)) {
	h := len(cells) / 2
	if threads < 2 || len(cells) < 4096 {
		f(0, cells[:h])
		f(1, cells[h:])
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f(1, cells[h:])
	}()
	f(0, cells[:h])
	wg.Wait()
}

// sweep is one Gauss–Seidel pass over the colours in order, on l.x for
// right-hand side b.
func (l *mgLevel) sweep(C, threads int, b []float64, order [4]int) {
	for _, col := range order {
		parallel(threads, l.colour[col], func(_ int, cells []int32) { l.relax(C, b, cells) })
	}
}

func (l *mgLevel) relax(C int, b []float64, cells []int32) {
	x, wp := l.x, l.wp
	if l.fine {
		for _, p32 := range cells {
			p := int(p32)
			for c := range C {
				n, m, s := (p-wp)*C+c, p*C+c, (p+wp)*C+c
				direct := x[n] + x[s] + x[m-C] + x[m+C]
				diag := x[n-C] + x[n+C] + x[s-C] + x[s+C]
				x[m] = (b[m] + direct/6 + diag/12) * l.inv[p]
			}
		}
		return
	}
	for _, p32 := range cells {
		p := int(p32)
		a := l.a[9*p : 9*p+9 : 9*p+9]
		for c := range C {
			n, m, s := (p-wp)*C+c, p*C+c, (p+wp)*C+c
			v := a[0]*x[n-C] + a[1]*x[n] + a[2]*x[n+C] + a[3]*x[m-C] + a[5]*x[m+C] + a[6]*x[s-C] + a[7]*x[s] + a[8]*x[s+C]
			x[m] = (b[m] - v) * l.inv[p]
		}
	}
}

// residual writes out = b − A·x on the unknowns; with b nil, out = A·x.
func (l *mgLevel) residual(C, threads int, out, b, x []float64) {
	for _, cells := range l.colour {
		parallel(threads, cells, func(_ int, cells []int32) { l.residualOf(C, out, b, x, cells) })
	}
}

func (l *mgLevel) residualOf(C int, out, b, x []float64, cells []int32) {
	wp := l.wp
	for _, p32 := range cells {
		p := int(p32)
		if l.fine {
			d := l.d[p]
			for c := range C {
				n, m, s := (p-wp)*C+c, p*C+c, (p+wp)*C+c
				direct := x[n] + x[s] + x[m-C] + x[m+C]
				diag := x[n-C] + x[n+C] + x[s-C] + x[s+C]
				v := d*x[m] - direct/6 - diag/12
				if b != nil {
					v = b[m] - v
				}
				out[m] = v
			}
			continue
		}
		a := l.a[9*p : 9*p+9 : 9*p+9]
		for c := range C {
			n, m, s := (p-wp)*C+c, p*C+c, (p+wp)*C+c
			v := a[0]*x[n-C] + a[1]*x[n] + a[2]*x[n+C] + a[3]*x[m-C] + a[4]*x[m] + a[5]*x[m+C] + a[6]*x[s-C] + a[7]*x[s] + a[8]*x[s+C]
			if b != nil {
				v = b[m] - v
			}
			out[m] = v
		}
	}
}

// galerkinTerm is one term of a coarse row: the coefficient in direction
// k of fine cell (2Y+ey, 2X+ex) of coarse node (Y, X) adds, times weight,
// to the node's coefficient in direction slot.
type galerkinTerm struct {
	slot   int
	weight float64
}

// galerkinTerms[ey+1][ex+1][k] lists the terms of PᵀAP's row of a coarse
// node for the fine cell at offset (ey, ex) from it and fine direction k:
// the cell interpolates from the node with weight ½ per odd offset, and its
// neighbour in direction k from the coarse nodes at half its offset,
// rounded both ways where odd.
var galerkinTerms = func() (t [3][3][9][]galerkinTerm) {
	half := func(e int) (n int, cs [2]int, ws [2]float64) {
		if e&1 == 0 {
			return 1, [2]int{e / 2}, [2]float64{1}
		}
		return 2, [2]int{(e - 1) / 2, (e + 1) / 2}, [2]float64{0.5, 0.5}
	}
	for ey := -1; ey <= 1; ey++ {
		for ex := -1; ex <= 1; ex++ {
			wi := 1.0
			if ey != 0 {
				wi /= 2
			}
			if ex != 0 {
				wi /= 2
			}
			for k := range 9 {
				ny, ys, wy := half(ey + k/3 - 1)
				nx, xs, wx := half(ex + k%3 - 1)
				for i := range ny {
					for j := range nx {
						t[ey+1][ex+1][k] = append(t[ey+1][ex+1][k], galerkinTerm{(ys[i]+1)*3 + xs[j] + 1, wi * wy[i] * wx[j]})
					}
				}
			}
		}
	}
	return t
}()

// coarsen makes c the Galerkin coarse level of f (PᵀAP, P the bilinear
// interpolation from the fine cells at even coordinates) and returns its
// number of unknowns: the nodes some fine unknown interpolates from. Each
// coarse row is gathered from its 3×3 fine cells, rows split in two
// halves.
func (c *mgLevel) coarsen(f *mgLevel, C, threads int) int {
	c.size(f.h/2+1, f.w/2+1, C, false)
	rows := func(y0, y1 int) {
		for Y := y0; Y < y1; Y++ {
			for X := range c.w {
				var row [9]float64
				for ey := -1; ey <= 1; ey++ {
					for ex := -1; ex <= 1; ex++ {
						p := (2*Y+ey+1)*f.wp + 2*X + ex + 1
						if f.inv[p] == 0 {
							continue // not an unknown, or outside
						}
						terms := &galerkinTerms[ey+1][ex+1]
						for k, v := range f.coefs(p) {
							if v == 0 {
								continue
							}
							for _, t := range terms[k] {
								row[t.slot] += v * t.weight
							}
						}
					}
				}
				copy(c.a[9*((Y+1)*c.wp+X+1):], row[:])
			}
		}
	}
	if threads < 2 || c.h*c.w < 4096 {
		rows(0, c.h)
	} else {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows(c.h/2, c.h)
		}()
		rows(0, c.h/2)
		wg.Wait()
	}
	for y := range c.h {
		for x := range c.w {
			p := (y+1)*c.wp + x + 1
			if d := c.a[9*p+4]; d > 0 {
				c.add(p, y, x, d)
			}
		}
	}
	return c.unknowns()
}

// restrict sets c.b to Pᵀ times the fine level's residual.
func (c *mgLevel) restrict(f *mgLevel, C, threads int) {
	for _, cells := range c.colour {
		parallel(threads, cells, func(_ int, cells []int32) {
			r, w := f.r, f.wp*C
			for _, p32 := range cells {
				P := int(p32)
				q := ((2*(P/c.wp)-1)*f.wp + 2*(P%c.wp) - 1) * C
				for ch := range C {
					m := q + ch
					c.b[P*C+ch] = r[m] + 0.5*(r[m-C]+r[m+C]+r[m-w]+r[m+w]) + 0.25*(r[m-w-C]+r[m-w+C]+r[m+w-C]+r[m+w+C])
				}
			}
		})
	}
}

// prolong adds P times c.x to the fine level's x.
func (c *mgLevel) prolong(f *mgLevel, C, threads int) {
	for _, cells := range f.colour {
		parallel(threads, cells, func(_ int, cells []int32) {
			xc, w := c.x, c.wp*C
			for _, p32 := range cells {
				p := int(p32)
				y, x := p/f.wp-1, p%f.wp-1
				Q := ((y/2+1)*c.wp + x/2 + 1) * C
				for ch := range C {
					m := Q + ch
					var v float64
					switch y&1<<1 | x&1 {
					case 0:
						v = xc[m]
					case 1:
						v = 0.5 * (xc[m] + xc[m+C])
					case 2:
						v = 0.5 * (xc[m] + xc[m+w])
					default:
						v = 0.25 * (xc[m] + xc[m+C] + xc[m+w] + xc[m+w+C])
					}
					f.x[p*C+ch] += v
				}
			}
		})
	}
}

var (
	forward  = [4]int{0, 1, 2, 3}
	backward = [4]int{3, 2, 1, 0}
)

// vcycle sets levels[i].x to one symmetric V-cycle's approximation of
// A⁻¹b.
func (s *roadMG) vcycle(i, C, threads int, b []float64) {
	l := &s.levels[i]
	for _, cells := range l.colour {
		for _, p := range cells {
			clear(l.x[int(p)*C : int(p)*C+C])
		}
	}
	if i == len(s.levels)-1 {
		for range mgCoarseSweeps {
			l.sweep(C, 1, b, forward)
			l.sweep(C, 1, b, backward)
		}
		return
	}
	l.sweep(C, threads, b, forward)
	l.residual(C, threads, l.r, b, l.x)
	next := &s.levels[i+1]
	next.restrict(l, C, threads)
	s.vcycle(i+1, C, threads, next.b)
	next.prolong(l, C, threads)
	l.sweep(C, threads, b, backward)
}

// roadDiag is the sum of the weights of pixel (y, x)'s in-image neighbours.
func roadDiag(y, x, H, W int) float64 {
	var d float64
	for _, nb := range roadNeighbours {
		if yy, xx := y+nb.dy, x+nb.dx; yy >= 0 && yy < H && xx >= 0 && xx < W {
			d += nb.w
		}
	}
	return d
}

// fill imputes the removed pixels of img (C×H×W; keep checked by the
// caller, at least one pixel kept and one removed) and adds the noise as
// the Cholesky path does: channel by channel, pixels in row-major order.
// It returns false, leaving img and rng as they were, if the iteration did
// not converge.
func (s *roadMG) fill(img []float32, C, H, W int, keep []float32, noise float64, rng *rand.Rand, threads int) bool {
	if len(s.levels) == 0 {
		s.levels = make([]mgLevel, 1, 12)
	}
	l := &s.levels[0]
	l.size(H, W, C, true)
	hw := H * W
	for y := range H {
		for x := range W {
			if keep[y*W+x] == 0 {
				l.add((y+1)*l.wp+x+1, y, x, roadDiag(y, x, H, W))
			}
		}
	}
	for _, cells := range l.colour {
		for _, p32 := range cells {
			p := int(p32)
			y, x := p/l.wp-1, p%l.wp-1
			l.d[p] = 1 / l.inv[p]
			b := l.b[p*C : p*C+C]
			clear(b)
			for _, nb := range roadNeighbours {
				yy, xx := y+nb.dy, x+nb.dx
				if yy < 0 || yy >= H || xx < 0 || xx >= W || keep[yy*W+xx] == 0 {
					continue
				}
				for c := range C {
					b[c] += nb.w * float64(img[c*hw+yy*W+xx])
				}
			}
		}
	}
	s.levels = s.levels[:1]
	for n := l.unknowns(); n > mgCoarsest && len(s.levels) < cap(s.levels); {
		s.levels = s.levels[:len(s.levels)+1]
		n = s.levels[len(s.levels)-1].coarsen(&s.levels[len(s.levels)-2], C, threads)
	}
	if !s.cg(C, threads) {
		return false
	}
	l = &s.levels[0]
	for c := range C {
		out := img[c*hw : (c+1)*hw]
		for y := range H {
			for x := range W {
				if keep[y*W+x] != 0 {
					continue
				}
				v := s.x[((y+1)*l.wp+x+1)*C+c]
				if noise > 0 {
					v += noise * rng.NormFloat64()
				}
				out[y*W+x] = float32(v)
			}
		}
	}
	return true
}

// cg runs the preconditioned conjugate gradients on level 0, one set of
// scalars per channel; a channel that has converged stays as it is. It
// reports whether every channel converged.
func (s *roadMG) cg(C, threads int) bool {
	l := &s.levels[0]
	n := len(l.b)
	s.x, s.r, s.p, s.q = resize(s.x, n), resize(s.r, n), resize(s.p, n), resize(s.q, n)
	clear(s.x)
	copy(s.r, l.b)
	clear(s.p)
	clear(s.q)
	s.scalars = resize(s.scalars, 13*C)
	bn, rz, sum, alpha, beta := s.scalars[:C], s.scalars[C:2*C], s.scalars[2*C:3*C], s.scalars[3*C:4*C], s.scalars[4*C:5*C]
	parts := s.scalars[5*C:] // per colour and half
	s.done = resize(s.done, C)
	// each runs f on every unknown's values of level 0 and adds the parts
	// f sums into sum.
	each := func(f func(m int, part []float64)) {
		clear(parts)
		for col, cells := range l.colour {
			parallel(threads, cells, func(half int, cells []int32) {
				part := parts[(2*col+half)*C : (2*col+half+1)*C]
				for _, p := range cells {
					f(int(p)*C, part)
				}
			})
		}
		clear(sum)
		for i, v := range parts {
			sum[i%C] += v
		}
	}
	each(func(m int, part []float64) {
		for c := range part {
			part[c] += l.b[m+c] * l.b[m+c]
		}
	})
	for c := range C {
		bn[c] = math.Sqrt(sum[c])
		s.done[c] = bn[c] == 0
	}
	s.vcycle(0, C, threads, s.r)
	copy(s.p, l.x)
	dot := func(u, v []float64) {
		each(func(m int, part []float64) {
			for c := range part {
				part[c] += u[m+c] * v[m+c]
			}
		})
	}
	dot(s.r, l.x)
	copy(rz, sum)
	for range mgMaxIters {
		l.residual(C, threads, s.q, nil, s.p)
		dot(s.p, s.q)
		for c := range C {
			alpha[c] = 0
			if !s.done[c] {
				alpha[c] = rz[c] / sum[c]
			}
		}
		each(func(m int, part []float64) {
			x, r, p, q := s.x[m:m+C], s.r[m:m+C], s.p[m:m+C], s.q[m:m+C]
			for c, a := range alpha {
				x[c] += a * p[c]
				r[c] -= a * q[c]
				part[c] += r[c] * r[c]
			}
		})
		all := true
		for c := range C {
			s.done[c] = s.done[c] || math.Sqrt(sum[c]) <= mgTol*bn[c]
			all = all && s.done[c]
		}
		if all {
			return true
		}
		s.vcycle(0, C, threads, s.r)
		dot(s.r, l.x)
		for c := range C {
			beta[c] = 0
			if !s.done[c] {
				beta[c] = sum[c] / rz[c]
				rz[c] = sum[c]
			}
		}
		each(func(m int, _ []float64) {
			p, z := s.p[m:m+C], l.x[m:m+C]
			for c, b := range beta {
				if !s.done[c] {
					p[c] = z[c] + b*p[c]
				}
			}
		})
	}
	return false
}
