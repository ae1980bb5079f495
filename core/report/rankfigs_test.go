package report

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// A critical-difference bar joins only neighbours in the mean-rank order
// that share a letter: the GOAR case where the letters (from paired tests
// on the mean score) put λ=0.25 in a group of its own between λ=1 and
// λ=0.75, which share "a", so "a" gets no bar; λ=0.75 and λ=0.5 share "b".
func TestCriticalDifferenceBarsNeverPassOverAnotherGroup(t *testing.T) {
	method := func(name, letters string, rank float64) RankedMethod {
		return RankedMethod{Method: name, Letters: letters, MeanRank: rank}
	}
	for _, tc := range []struct {
		name string
		ms   []RankedMethod // in mean-rank order
		want []cdBar
	}{
		{"goar", []RankedMethod{method("l1", "a", 2.57), method("l0.25", "c", 2.67), method("l0.75", "ab", 2.76),
			method("l0.5", "b", 2.88), method("l0", "d", 4.11)},
			[]cdBar{{letter: 'b', first: 2, last: 3}}},
		{"one group", []RankedMethod{method("x", "a", 1.5), method("y", "a", 1.6), method("z", "a", 2.9)},
			[]cdBar{{letter: 'a', first: 0, last: 2}}},
		{"a letter in two runs", []RankedMethod{method("p", "a", 1), method("q", "a", 2), method("r", "b", 3),
			method("s", "ab", 4), method("t", "a", 5)},
			[]cdBar{{letter: 'a', first: 0, last: 1}, {letter: 'a', first: 3, last: 4}, {letter: 'b', first: 2, last: 3}}},
		{"all apart", []RankedMethod{method("p", "a", 1), method("q", "b", 2), method("r", "c", 3)}, nil},
		{"no mean rank", []RankedMethod{method("p", "a", 1), method("q", "a", math.NaN())}, nil},
	} {
		if got := cdBars(tc.ms); !slices.Equal(got, tc.want) {
			t.Errorf("%s: bars %v, want %v", tc.name, got, tc.want)
		}
		for _, b := range cdBars(tc.ms) {
			for i := b.first; i <= b.last; i++ {
				if !slices.Contains([]rune(tc.ms[i].Letters), b.letter) {
					t.Errorf("%s: bar %q passes over %s (%s)", tc.name, b.letter, tc.ms[i].Method, tc.ms[i].Letters)
				}
			}
		}
	}
}

// The agreement heatmap stays legible for two to eight settings with long
// names: the columns' labels fit their cells, the values fit theirs, the
// rows' names fit the page, and the cells reach the colour scale.
func TestAgreementFigureFitsLongNames(t *testing.T) {
	names := []string{"ROAR", "ROAD (imputer=noisy_linear, order=morf)", "GOAR", "GOAR (no_projection, prior=auto)",
		"Deletion (baseline=blur, steps=64)", "Insertion (baseline=blur, steps=64)", "ROAD (imputer=linear)", "GOAR (lambda=0.5, prior=gmm)"}
	for k := 2; k <= len(names); k++ {
		a := Agreement{Dataset: "gmm:dim=64", Protocols: names[:k], Methods: []string{"a", "b", "c"}, W: 0.5, P: 0.1}
		for i := range k {
			a.Tau = append(a.Tau, make([]float64, k))
			for j := range k {
				a.Tau[i][j] = -0.33
			}
		}
		f := tauFigure(newCampaign(nil), a)
		w, h := f.size()
		page := draw.New(vgimg.New(w, h))
		_, scale, cols := f.layout(page)
		cells := f.Plot.DataCanvas(cols[0])
		cell := cells.Size().X / vg.Length(k)
		for _, tick := range f.Plot.X.Tick.Marker.Ticks(f.Plot.X.Min, f.Plot.X.Max) {
			if lw := f.Plot.X.Tick.Label.Width(tick.Label); lw > cell {
				t.Errorf("%d settings: column label %q is %.0f pt wide, its cell %.0f pt", k, tick.Label, lw, cell)
			}
		}
		if vw := tauStyle(cell).Width("+0.00"); vw > cell {
			t.Errorf("%d settings: a value is %.0f pt wide, its cell %.0f pt", k, vw, cell)
		}
		for _, tick := range f.Plot.Y.Tick.Marker.Ticks(f.Plot.Y.Min, f.Plot.Y.Max) {
			if lw := f.Plot.Y.Tick.Label.Width(tick.Label); cells.Min.X-lw < page.Min.X {
				t.Errorf("%d settings: row label %q runs off the page", k, tick.Label)
			}
		}
		if gap := scale.Min.X - cells.Max.X; gap > vg.Points(12) {
			t.Errorf("%d settings: %.0f pt between the cells and the colour scale", k, gap)
		}
	}
}
