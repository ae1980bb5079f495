package native

import (
	"math"
	"testing"
)

func TestExpf(t *testing.T) {
	for x := float32(-87); x <= 88; x += 0.0137 {
		want := math.Exp(float64(x))
		if got := float64(expf(x)); math.Abs(got-want) > 2e-7*want {
			t.Fatalf("expf(%g) = %g, want %g (relative error %g)", x, got, want, math.Abs(got-want)/want)
		}
	}
	for _, tc := range []struct{ x, want float32 }{{0, 1}, {-100, 0}, {100, float32(math.Inf(1))}} {
		if got := expf(tc.x); got != tc.want {
			t.Errorf("expf(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
}

// erff agrees with float64 math.Erf to 5e-7 of the value over the range
// a GELU sees, odd and saturating.
func TestErffIsErfToFloat32Precision(t *testing.T) {
	worst := 0.0
	for x := float32(-6); x <= 6; x += 0.00037 {
		want := math.Erf(float64(x))
		rel := math.Abs(float64(erff(x))-want) / max(math.Abs(want), 1e-30)
		worst = max(worst, rel)
		if rel > 5e-7 {
			t.Fatalf("erff(%g) = %g, want %g (relative error %g)", x, erff(x), want, rel)
		}
		if erff(-x) != -erff(x) {
			t.Fatalf("erff(%g) = %g but erff(%g) = %g", -x, erff(-x), x, erff(x))
		}
	}
	for _, tc := range []struct{ x, want float32 }{{0, 0}, {1e-30, 1.1283791e-30}, {9, 1}, {-100, -1}} {
		if got := erff(tc.x); math.Abs(float64(got-tc.want)) > 1e-6*math.Abs(float64(tc.want)) {
			t.Errorf("erff(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
	t.Logf("largest relative error %.2g", worst)
}
