package ui

import (
	"image"
	"image/color"
	"slices"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"faithlab/core/campaign"
)

// enlarge scales an image up k times, pixel for pixel, so that a golden of
// a few pixels can be looked at.
func enlarge(img *image.RGBA, k int) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx()*k, b.Dy()*k))
	for y := range out.Rect.Dy() {
		for x := range out.Rect.Dx() {
			out.SetRGBA(x, y, img.RGBAAt(b.Min.X+x/k, b.Min.Y+y/k))
		}
	}
	return out
}

// The map pictures: a hand-made 2×3 map in the diverging scale of ±1 (its
// ends and its middle are the scale's), the map over a grey sample at
// opacity 0.5 (every pixel half the map's colour, half the sample's grey),
// the legend bar, and a mask.
func TestMapPicturesGolden(t *testing.T) {
	if raceEnabled {
		t.Skip("layout only: the first pass runs it (raceEnabled)")
	}
	m := []float32{-1, -0.5, 0, 0.25, 0.5, 2}
	hm := heatmap(m, 2, 3, 1)
	for _, tc := range []struct {
		x, y int
		want color.RGBA
	}{{0, 0, diverging[0]}, {2, 0, diverging[128]}, {2, 1, diverging[256]}} { // −limit, 0, beyond +limit
		if got := hm.RGBAAt(tc.x, tc.y); got != tc.want {
			t.Errorf("heatmap at (%d, %d): %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
	grey := image.NewRGBA(image.Rect(0, 0, 3, 2))
	for i := range grey.Pix {
		grey.Pix[i] = map[bool]uint8{true: 255, false: 128}[i%4 == 3] // opaque grey
	}
	if got := overlay(grey, m, 1, 0); !slices.Equal(got.Pix, grey.Pix) {
		t.Errorf("overlay at opacity 0: %v, want the sample's %v", got.Pix, grey.Pix)
	}
	ov := overlay(grey, m, 1, 0.5)
	if got, want := ov.RGBAAt(2, 0), (color.RGBA{175, 175, 175, 255}); got != want { // (128 + 221) / 2, the scale's middle
		t.Errorf("overlay where the map is zero: %v, want the sample and the scale's middle half and half, %v", got, want)
	}
	test.AssertImageMatches(t, "heatmap.png", enlarge(hm, 16))
	test.AssertImageMatches(t, "overlay.png", enlarge(ov, 16))
	test.AssertImageMatches(t, "colorbar.png", colorBar(128, 8))
	test.AssertImageMatches(t, "mask.png", enlarge(maskImage([]float32{1, 0, 1, 0, 0, 1}, 2, 3), 16))
}

// The training chart and the class histogram as Model and Data draw them,
// in the theme's colours (the test theme's here).
func TestChartsGolden(t *testing.T) {
	if raceEnabled {
		t.Skip("layout only: the first pass runs it (raceEnabled)")
	}
	test.NewTempApp(t)
	epochs := []float64{1, 2, 3, 4}
	test.AssertImageMatches(t, "chart_accuracy.png", lineChart("Accuracy", "epoch", "accuracy", []series{
		{Name: "train", X: epochs, Y: []float64{0.6, 0.75, 0.81, 0.84}, Colour: blue},
		{Name: "test", X: epochs, Y: []float64{0.58, 0.72, 0.78, 0.79}, Colour: orange, Dashed: true},
	}, 420, 280, 0, 1))
	test.AssertImageMatches(t, "chart_classes.png", barChart("test split, 10 samples", "samples", []string{"T-shirt", "Trouser", "Pullover"}, []float64{5, 3, 2}, 320, 240))
}

// A method's parameter form is built from its description: SmoothGrad's
// two parameters with their defaults as placeholders, their help with its
// range wrapped under each.
func TestParamFormGolden(t *testing.T) {
	if raceEnabled {
		t.Skip("layout only: the first pass runs it (raceEnabled)")
	}
	test.NewTempApp(t)
	for _, m := range campaign.Methods() {
		if m.Name == "smoothgrad" {
			// In a panel's width, as Explain's side panel gives it: the
			// help wraps under each field.
			w := test.NewTempWindow(t, newParamForm(m.Params).form)
			w.Resize(fyne.NewSize(360, 240))
			relayout(w.Canvas().Content())
			test.AssertRendersToMarkup(t, "form_smoothgrad.xml", w.Canvas())
			return
		}
	}
	t.Fatal("no smoothgrad")
}
