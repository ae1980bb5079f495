package ui

import "testing"

// A bar chart of counts ticks whole numbers only: 0, 1, 2 for counts up
// to 2, not 0, 0.5, 1, 1.5, 2.
func TestCountTicksAreWholeNumbers(t *testing.T) {
	var got []float64
	for _, tk := range (countTicks{}).Ticks(0, 2) {
		got = append(got, tk.Value)
	}
	if len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Errorf("ticks of counts 0…2: %v", got)
	}
}
