package ui

import "testing"

// A short training's time has a decimal, a long one none.
func TestSecondsTextKeepsShortTimes(t *testing.T) {
	for s, want := range map[float64]string{0.31: "0.3", 9.96: "10.0", 12.4: "12", 600: "600"} {
		if got := secondsText(s); got != want {
			t.Errorf("secondsText(%g) = %q, want %q", s, got, want)
		}
	}
}
