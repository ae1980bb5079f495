package native

import "math"

// The transformer's elementwise kernels: GELU forward and backward, a
// softmax row's exponentials, scaling and gradient, a layer norm's row sums and
// affine map (sums in float64, in eight lanes added in a fixed order). On
// amd64 with AVX2 the blocks of eight run in assembly (asm/), the rest here;
// both give these functions' bits (TestTransformerKernelsMatchScalar).

// geluScalar is y = x·(erf(x/c) + 1)·0.5 for each value: the operations of
// the Div, Erf, Add, Mul and Mul PyTorch exports nn.GELU as, in their order.
func geluScalar(y, x []float32, c float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = v * (erff(v/c) + 1) * 0.5
	}
}

// geluGradScalar is the gradient of geluScalar: the product's share plus
// the quotient's, as the five layers' backward passes add them.
func geluGradScalar(dx, dy, x []float32, c float32) {
	dx, dy = dx[:len(x)], dy[:len(x)]
	for i, v := range x {
		u := v / c
		g := 0 + dy[i]*0.5                         // through the product by 0.5
		ge := 0 + g*v                              // to erf(u) + 1
		d := float32(2 / math.SqrtPi * expf(-u*u)) // erf′(u), as unary's
		du := 0 + float32(float64(ge)*float64(d))/c
		dx[i] = g*(erff(u)+1) + du
	}
}

// expSumScalar writes y = e^(x−m) and adds each value, in float64, to the
// sum of its lane: s[j mod 8] for the j-th value of the row, the caller
// starting x at a multiple of 8.
func expSumScalar(y, x []float32, m float32, s *[8]float64) {
	y = y[:len(x)]
	for j, v := range x {
		e := expf(v - m)
		y[j] = e
		s[j%8] += float64(e)
	}
}

func scaleScalar(y []float32, a float32) {
	for j := range y {
		y[j] *= a
	}
}

// laneSum adds the eight lanes of expSum, sums64, sqDevs64 or dots64, in
// a fixed order.
func laneSum(s *[8]float64) float64 {
	return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]))
}

// sums64Scalar adds each float64(x[j]) to its lane's sum, s[j mod 8].
func sums64Scalar(x []float32, s *[8]float64) {
	for j, v := range x {
		s[j%8] += float64(v)
	}
}

// sqDevs64Scalar adds each (float64(x[j]) − m)² to its lane's sum.
func sqDevs64Scalar(x []float32, m float64, s *[8]float64) {
	for j, v := range x {
		e := float64(v) - m
		s[j%8] += e * e
	}
}

// normAffineScalar is a normalised row and its affine map: xh =
// float32((float64(x) − m)·rs), y = xh·w + b.
func normAffineScalar(y, xh, x, w, b []float32, m, rs float64) {
	y, xh, w, b = y[:len(x)], xh[:len(x)], w[:len(x)], b[:len(x)]
	for j, v := range x {
		h := float32((float64(v) - m) * rs)
		xh[j] = h
		y[j] = h*w[j] + b[j]
	}
}

// dots64Scalar adds each float64(x[j])·float64(y[j]) to its lane's sum.
func dots64Scalar(x, y []float32, s *[8]float64) {
	y = y[:len(x)]
	for j, v := range x {
		s[j%8] += float64(v) * float64(y[j])
	}
}

// softmaxGradScalar is a softmax row's input gradient, dx = y·(dy − s),
// s the row's Σ dy·y.
func softmaxGradScalar(dx, dy, y []float32, s float32) {
	dx, dy = dx[:len(y)], dy[:len(y)]
	for j, v := range y {
		dx[j] = v * (dy[j] - s)
	}
}
