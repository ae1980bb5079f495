package campaign

import (
	"math"
	"strings"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/stats"
)

// The half-width shown before a run is the one the report's intervals
// reach at the widest spread the headline's range allows: Deletion's
// lerf_minus_morf in [−1, 1] on its 100 samples, half of them at each end
// but two (so resampled, not a proportion), gets an interval as wide as
// the estimate said, to a few per cent; an accuracy's (0/1 inputs) is no
// wider.
func TestHalfWidthFollowsTheReportsIntervals(t *testing.T) {
	h, ok := halfWidth(protocol.Deletion{Samples: 100}, 10000)
	if !ok || h.Inputs != 100 || h.Metric != "lerf_minus_morf" || h.Bound != stats.HalfWidthBound(100, -1, 1) {
		t.Fatalf("half-width %+v", h)
	}
	x := make([]float64, 100)
	for i := range x {
		x[i] = float64(2*(i%2) - 1)
	}
	x[0], x[1] = -0.98, 0.98
	iv := stats.Bootstrap{Seed: 1, Range: []float64{-1, 1}}.Mean([][]float64{x})
	if w := (iv.Hi - iv.Lo) / 2; math.Abs(w-h.Bound) > 0.05*h.Bound {
		t.Errorf("widest spread: interval %+v, half-width %v; the estimate said %v", iv, w, h.Bound)
	}
	acc := make([]float64, 100)
	for i := range 50 {
		acc[i] = 1
	}
	iv = stats.Bootstrap{Range: []float64{0, 1}}.Mean([][]float64{acc})
	if w := (iv.Hi - iv.Lo) / 2; w > stats.HalfWidthBound(100, 0, 1) {
		t.Errorf("accuracy ½: half-width %v above the bound %v", w, stats.HalfWidthBound(100, 0, 1))
	}
}

// A protocol whose headline has no fixed range (IROF's ratio) is named in
// the interval line with why nothing bounds it, never left out.
func TestEstimateSaysWhichIntervalsNothingBounds(t *testing.T) {
	h, ok := halfWidth(protocol.IROF{Samples: 40}, 100)
	if !ok || h.Inputs != 40 || !math.IsNaN(h.Bound) {
		t.Fatalf("IROF's half-width %+v (%v): want 40 inputs and no bound", h, ok)
	}
	z := Size{HalfWidths: []HalfWidth{h}}
	if s := z.String(); !strings.Contains(s, "IROF not bounded before the run (40 inputs; its score has no fixed range)") {
		t.Errorf("the estimate says: %s", s)
	}
}
