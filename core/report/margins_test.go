package report

import (
	"bytes"
	"image/png"
	"testing"

	"faithlab/core/protocol"
)

// Row labels and axis titles stand clear of a figure's left edge: no ink
// within 2 pt of it in the maps grid ("overlay", its widest row label,
// touched the edge and looked cut), the agreement heatmap (its longest
// setting name) or a curve (its y axis title).
func TestLabelsStandClearOfTheLeftEdge(t *testing.T) {
	orig, maps := make([]float32, 8*28*28), make([]float32, 8*28*28)
	for i := range orig {
		orig[i], maps[i] = float32(i%28)/28, float32(i%7)-3
	}
	grid, ok, err := mapFigure("Attribution maps — fashion-mnist\ngradient", []protocol.Sample{
		{Name: "original test", Kind: protocol.Original, Shape: []int{8, 1, 28, 28}, Values: orig},
		{Name: "map test", Kind: protocol.AttributionMap, Shape: []int{8, 1, 28, 28}, Values: maps}})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	grid.Name = "maps grid"
	agreement := tauFigure(newCampaign(nil), Agreement{Dataset: "gmm:dim=64", Protocols: []string{"ROAR", "GOAR (no_projection, prior=auto)"},
		Tau: [][]float64{{1, 0.5}, {0.5, 1}}})
	recs := withSeeds(records())
	figs, err := Figures(recs, Confident(recs, ConfidenceOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	const dpi = 300
	clear := 2 * dpi / 72 // 2 pt in pixels
	for _, f := range []Figure{grid, agreement, figs[0]} {
		var buf bytes.Buffer
		if err := Render(&buf, f, "png", dpi); err != nil {
			t.Fatal(err)
		}
		im, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		b := im.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Min.X+clear; x++ {
				if r, g, bl, _ := im.At(x, y).RGBA(); r < 0xe000 || g < 0xe000 || bl < 0xe000 {
					t.Errorf("%s: ink at (%d, %d), within 2 pt of the left edge", f.Name, x, y)
					x, y = b.Max.X, b.Max.Y
				}
			}
		}
	}
}
