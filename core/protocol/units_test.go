package protocol

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// An input's accuracy over 3 rates is a multiple of 1/3, summed as 1/3 +
// 1/3 + … in float64 and kept as float32: 1/3 − 0 and 2/3 − 1/3 differ in
// their last bits. On its grid, Exact reads back counts, whose equal
// differences are equal (paired tests see the ties), before and after
// JSON; a scalar off the grid reads back its float32 values over 1.
func TestUnitsOnAGridReadBackExactly(t *testing.T) {
	third := 1.0 / 3
	per := []float64{0, third, third + third, third + third + third, math.NaN()}
	var r Result
	r.keep("free", []float64{0.1, 0.2, 0.3, 0.4, 0.5})
	r.keepGrid("acc", per, 3)
	b, err := json.Marshal(r.Units)
	if err != nil {
		t.Fatal(err)
	}
	var back Units
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, u := range []Units{r.Units, back} {
		num, den := u.Exact("acc")
		if den != 3 || !slices.EqualFunc(num, []float64{0, 1, 2, 3, math.NaN()}, func(a, b float64) bool { return a == b || a != a && b != b }) {
			t.Errorf("Exact(acc) = %v / %v; want counts 0 1 2 3 NaN over 3", num, den)
		}
		if num[1]-num[0] != num[2]-num[1] {
			t.Error("equal differences of counts differ")
		}
		free, den := u.Exact("free")
		if den != 1 || free[0] != float64(float32(0.1)) {
			t.Errorf("Exact(free) = %v / %v; want the float32 values over 1", free, den)
		}
		if num, _ := u.Exact("none"); num != nil {
			t.Errorf("Exact of a scalar not kept: %v", num)
		}
	}
	if !strings.Contains(string(b), `"grids":[0,3]`) {
		t.Errorf("JSON %s: want the grids per scalar", b)
	}
	// Without a grid nothing is written: older readers and records agree.
	r = Result{}
	r.keep("free", []float64{1, 2})
	if b, _ := json.Marshal(r.Units); strings.Contains(string(b), "grids") {
		t.Errorf("JSON %s: grids written without any", b)
	}
}

// A record's grids are data: a wrong count or an absurd grid is an error
// naming the problem, never a panic.
func TestUnitsRefuseBadGrids(t *testing.T) {
	var r Result
	r.keepGrid("a", []float64{0, 1}, 2)
	good, _ := json.Marshal(r.Units)
	for _, tc := range []struct{ from, to, want string }{
		{`"grids":[2]`, `"grids":[2,2]`, "2 grids for 1 scalars"},
		{`"grids":[2]`, `"grids":[-1]`, "grid -1"},
		{`"grids":[2]`, `"grids":[9999999999]`, "grid 9999999999"},
	} {
		bad := strings.Replace(string(good), tc.from, tc.to, 1)
		var u Units
		if err := json.Unmarshal([]byte(bad), &u); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error naming %q", bad, err, tc.want)
		}
	}
}
