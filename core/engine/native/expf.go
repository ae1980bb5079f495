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
	n := float32(math.Floor(float64(x*1.44269504088896341 + 0.5)))
	r := x - n*0.693359375
	r -= n * -2.12194440e-4
	z := r * r
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	p = p*z + r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

func sigmoid(x float32) float32 { return 1 / (1 + expf(-x)) }
