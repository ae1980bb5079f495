package stats

import "math"

// What a comparison could have told, for a verdict that cannot tell:
// the smallest difference it would have found, and about how many units
// would find the one it saw. Both read the standard error off the
// difference's interval (its width over 2·z at its level), so they hold
// as far as that interval is near normal; they are a guide to planning a
// run, not a test.

// Detectable is the smallest true difference that a two-sided paired test
// at level alpha finds with probability power, given iv, the difference's
// interval at confidence level: (z₁₋α/₂ + z_power)·se, se the interval's
// width over 2·z₍₁₊level₎/₂. NaN where iv has no ends.
func Detectable(iv Interval, level, alpha, power float64) float64 {
	w := iv.Hi - iv.Lo
	if math.IsNaN(w) || !(level > 0 && level < 1) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) {
		return math.NaN()
	}
	se := w / (2 * normalQuantile((1+level)/2))
	return (normalQuantile(1-alpha/2) + normalQuantile(power)) * se
}

// UnitsFor is about how many units — of those iv rests on, n of them
// (inputs, or seeds where the seeds are the unit) — a paired test at level
// alpha needs to find a true difference d with probability power:
// n·(Detectable/|d|)², rounded up, at least n. 0 where d is 0 or not a
// number, or iv has no ends: no difference to find, or nothing to scale.
func UnitsFor(iv Interval, n int, d, level, alpha, power float64) int {
	m := Detectable(iv, level, alpha, power)
	if math.IsNaN(m) || math.IsNaN(d) || d == 0 || n <= 0 {
		return 0
	}
	need := math.Ceil(float64(n) * (m / math.Abs(d)) * (m / math.Abs(d)))
	if need > 1e9 {
		return 1e9
	}
	return max(n, int(need))
}
