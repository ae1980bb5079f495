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
