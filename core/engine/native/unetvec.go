package native

// The elementwise kernels of unet-s: Winograd F(2×2, 3×3) tile transforms
// (Lavin & Gray 2016, §4.1: Y = Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A) and their
// adjoints, and the fused GroupNorm + SiLU. Every kernel works on channels-
// last data and handles c channels of one tile or one image row per call.
// kernels_amd64.s runs them eight channels at a time on AVX2 (vec_amd64.go
// calls it); these scalar versions do the rest with
// the same operations in the same order, so both give the same numbers.
//
// F(2×2, 3×3) in one dimension, for inputs d0…d3, filter g0…g2 and outputs
// y0 = d0g0+d1g1+d2g2, y1 = d1g0+d2g1+d3g2 (cross-correlation, as PyTorch):
//
//	Bᵀd = (d0−d2, d1+d2, d2−d1, d1−d3)
//	G g = (g0, (g0+g1+g2)/2, (g0−g1+g2)/2, g2)
//	Aᵀm = (m0+m1+m2, m1−m2−m3)
//
// In two dimensions each is applied to the rows of a tile, then to its
// columns. Position ξ = 4i+j of a 4×4 tile is plane ξ of the transformed
// data.

// winoInScalar writes V = Bᵀ d B of one 4×4 input tile: input (i, j) is
// x[i*row+j*c:][:c], and V's position ξ goes to v[ξ*plane:][:c].
func winoInScalar(v []float32, plane int, x []float32, row, c int) {
	for ch := 0; ch < c; ch++ {
		var h [4][4]float32
		for i := range 4 {
			r := x[i*row+ch:]
			d0, d1, d2, d3 := r[0], r[c], r[2*c], r[3*c]
			h[i] = [4]float32{d0 - d2, d1 + d2, d2 - d1, d1 - d3}
		}
		for j := range 4 {
			v[j*plane+ch] = h[0][j] - h[2][j]
			v[(4+j)*plane+ch] = h[1][j] + h[2][j]
			v[(8+j)*plane+ch] = h[2][j] - h[1][j]
			v[(12+j)*plane+ch] = h[1][j] - h[3][j]
		}
	}
}

// winoInAdjScalar adds B dV Bᵀ, the adjoint of winoIn, to the 4×4 tile of
// dx laid out as winoIn's x.
func winoInAdjScalar(dx []float32, row int, dv []float32, plane, c int) {
	for ch := 0; ch < c; ch++ {
		var h [4][4]float32
		for j := range 4 {
			v0, v1, v2, v3 := dv[j*plane+ch], dv[(4+j)*plane+ch], dv[(8+j)*plane+ch], dv[(12+j)*plane+ch]
			h[0][j] = v0
			h[1][j] = v1 - v2 + v3
			h[2][j] = v1 + v2 - v0
			h[3][j] = 0 - v3
		}
		for i := range 4 {
			r := dx[i*row+ch:]
			r[0] += h[i][0]
			r[c] += h[i][1] - h[i][2] + h[i][3]
			r[2*c] += h[i][1] + h[i][2] - h[i][0]
			r[3*c] += 0 - h[i][3]
		}
	}
}

// winoOutScalar writes Y = Aᵀ M A + bias (+ res) for one tile: M's position
// ξ is m[ξ*plane:][:c]; output (i, j) goes to y[i*row+j*c:][:c] for i < rows
// and j < cols (tiles on the edge of an odd-sized image have fewer), and res,
// when not nil, is added from the same offsets.
func winoOutScalar(y []float32, row int, m []float32, plane int, bias, res []float32, c, rows, cols int) {
	for ch := 0; ch < c; ch++ {
		var r [4][2]float32
		for i := range 4 {
			m0, m1, m2, m3 := m[4*i*plane+ch], m[(4*i+1)*plane+ch], m[(4*i+2)*plane+ch], m[(4*i+3)*plane+ch]
			r[i] = [2]float32{m0 + m1 + m2, m1 - m2 - m3}
		}
		for j := range cols {
			o := [2]float32{r[0][j] + r[1][j] + r[2][j] + bias[ch], r[1][j] - r[2][j] - r[3][j] + bias[ch]}
			for i := range rows {
				at := i*row + j*c + ch
				if res != nil {
					o[i] += res[at]
				}
				y[at] = o[i]
			}
		}
	}
}

// winoOutAdjScalar writes dM = A dY Aᵀ, the adjoint of winoOut, for one
// tile: dY is dy laid out as winoOut's y, zero beyond rows and cols.
func winoOutAdjScalar(dm []float32, plane int, dy []float32, row, c, rows, cols int) {
	for ch := 0; ch < c; ch++ {
		var g [2][2]float32
		for i := range rows {
			for j := range cols {
				g[i][j] = dy[i*row+j*c+ch]
			}
		}
		var q [4][2]float32
		for j := range 2 {
			q[0][j] = g[0][j]
			q[1][j] = g[0][j] + g[1][j]
			q[2][j] = g[0][j] - g[1][j]
			q[3][j] = 0 - g[1][j]
		}
		for i := range 4 {
			dm[4*i*plane+ch] = q[i][0]
			dm[(4*i+1)*plane+ch] = q[i][0] + q[i][1]
			dm[(4*i+2)*plane+ch] = q[i][0] - q[i][1]
			dm[(4*i+3)*plane+ch] = 0 - q[i][1]
		}
	}
}

// chanSumsScalar adds each channel's sum over the pixels of x (len(x)/c
// pixels of c channels) to sum[:c].
func chanSumsScalar(sum, x []float32, c int) {
	sum = sum[:c]
	for p := 0; p+c <= len(x); p += c {
		for j, v := range x[p : p+c] {
			sum[j] += v
		}
	}
}

// chanSqDevsScalar adds each channel's Σ (x − mean)² over the pixels of x
// to sq[:c].
func chanSqDevsScalar(sq, x, mean []float32, c int) {
	sq, mean = sq[:c], mean[:c]
	for p := 0; p+c <= len(x); p += c {
		for j, v := range x[p : p+c] {
			d := v - mean[j]
			sq[j] += d * d
		}
	}
}

// affineSiLUScalar writes y = a·σ(a) for a = x·scale + shift, per channel,
// and σ(a) into sig unless it is nil (for the backward pass).
func affineSiLUScalar(y, sig, x, scale, shift []float32, c int) {
	y = y[:len(x)]
	for p := 0; p+c <= len(x); p += c {
		for j := range c {
			a := x[p+j]*scale[j] + shift[j]
			s := 1 / (1 + expf(0-a))
			y[p+j] = a * s
			if sig != nil {
				sig[p+j] = s
			}
		}
	}
}

// siluGradScalar is the first half of the fused GroupNorm + SiLU backward
// pass. For a = x·scale + shift it writes da = dy·σ(a)·(1 + a(1 − σ(a))),
// the gradient at the SiLU's input, and adds Σ da and Σ da·x̂ per channel
// to sda and sdax, with x̂ = (x − mean)·inv the normalised input. sig holds
// the forward pass's σ(a), or is nil to compute it again.
func siluGradScalar(da, dy, x, sig, scale, shift, mean, inv, sda, sdax []float32, c int) {
	da = da[:len(x)]
	for p := 0; p+c <= len(x); p += c {
		for j := range c {
			xv := x[p+j]
			a := xv*scale[j] + shift[j]
			var s float32
			if sig != nil {
				s = sig[p+j]
			} else {
				s = 1 / (1 + expf(0-a))
			}
			g := dy[p+j] * s * (1 + a*(1-s))
			da[p+j] = g
			sda[j] += g
			sdax[j] += g * ((xv - mean[j]) * inv[j])
		}
	}
}

// affine3Scalar writes dx = p·da − q·x + r per channel: the second half of
// the GroupNorm backward pass.
func affine3Scalar(dx, da, x, p, q, r []float32, c int) {
	dx = dx[:len(x)]
	for o := 0; o+c <= len(x); o += c {
		for j := range c {
			dx[o+j] = p[j]*da[o+j] - q[j]*x[o+j] + r[j]
		}
	}
}
