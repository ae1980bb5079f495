package stats

import (
	"math"
	"testing"
)

// A difference interval of half-width 1.96 (a standard error of 1) at
// 95 % detects, at 5 % with 80 % power, differences of 1.96 + 0.84 = 2.80;
// a difference of 1.4 needs four times the units, and one of 2.80 needs
// those the interval rests on.
func TestDetectableAndUnitsForAreTheNormalPlanningFormula(t *testing.T) {
	iv := Interval{Estimate: 0.5, Lo: 0.5 - 1.959964, Hi: 0.5 + 1.959964}
	if m := Detectable(iv, 0.95, 0.05, 0.8); math.Abs(m-2.8016) > 1e-3 {
		t.Errorf("Detectable = %.4f, want 2.8016", m)
	}
	if n := UnitsFor(iv, 100, 1.4008, 0.95, 0.05, 0.8); n != 400 {
		t.Errorf("UnitsFor half the detectable difference = %d, want 400", n)
	}
	if n := UnitsFor(iv, 100, 5, 0.95, 0.05, 0.8); n != 100 {
		t.Errorf("UnitsFor a difference above the detectable one = %d, want the 100 there are", n)
	}
	for _, d := range []float64{0, math.NaN()} {
		if n := UnitsFor(iv, 100, d, 0.95, 0.05, 0.8); n != 0 {
			t.Errorf("UnitsFor(%v) = %d, want 0", d, n)
		}
	}
	if !math.IsNaN(Detectable(Interval{Lo: math.NaN(), Hi: math.NaN()}, 0.95, 0.05, 0.8)) {
		t.Error("an interval without ends detects something")
	}
}
