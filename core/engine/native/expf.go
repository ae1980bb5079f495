package native

import "math"

// expf is e^x in float32 with relative error below 2e-7 (Cephes' expf:
// range reduction by ln 2, degree-6 polynomial), several times faster than
// going through float64 math.Exp in the SiLU and sigmoid inner loops.
func expf(x float32) float32 {
	switch {
	case x > 88.72:
		return float32(math.Inf(1))
	case x < -87.33:
		return 0
	}
	// ⌊t⌋ by truncation, the value math.Floor gives, without its call.
	t := x*1.44269504088896341 + 0.5
	n := float32(int32(t))
	if n > t {
		n--
	}
	r := x - n*0.693359375
	r -= n * -2.12194440e-4
	z := r * r
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	p = p*z + r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

func sigmoid(x float32) float32 { return 1 / (1 + expf(-x)) }

// erff is erf(x) in float32 with relative error below 5e-7 (Eigen's
// generic_fast_erf_float: x·P(x²)/Q(x²) of degrees 13 and 8 over x clamped
// to ±4, where erf rounds to ±1 in float32), branchless and several times
// faster than float64 math.Erf in a transformer's GELU.
func erff(x float32) float32 {
	if x > 4 { // comparisons rather than min and max: NaN passes as it did
		x = 4
	} else if x < -4 {
		x = -4
	}
	z := x * x
	p := z*-2.72614225801306e-10 + 2.77068142495902e-08
	p = z*p + -2.10102402082508e-06
	p = z*p + -5.69250639462346e-05
	p = z*p + -7.34990630326855e-04
	p = z*p + -2.95459980854025e-03
	p = z*p + -1.60960333262415e-02
	q := z*-1.45660718464996e-05 + -2.13374055278905e-04
	q = z*q + -1.68282697438203e-03
	q = z*q + -7.37332916720468e-03
	q = z*q + -1.42647390514189e-02
	return x * p / q
}
