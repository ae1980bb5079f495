package ui

import (
	"image"
	"math"
	"testing"

	"fyne.io/fyne/v2/test"
)

// meanColour is the mean RGB of img over the pixels where in holds.
func meanColour(img *image.RGBA, in func(x, y int) bool) [3]float64 {
	var sum [3]float64
	n := 0
	for y := range img.Rect.Dy() {
		for x := range img.Rect.Dx() {
			if !in(x, y) {
				continue
			}
			c := img.RGBAAt(x, y)
			sum[0], sum[1], sum[2] = sum[0]+float64(c.R), sum[1]+float64(c.G), sum[2]+float64(c.B)
			n++
		}
	}
	for i := range sum {
		sum[i] /= float64(n)
	}
	return sum
}

func colourDistance(a, b [3]float64) float64 {
	return math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
}

// The case: on a bright picture (a white-background photo of a
// light object) the default overlay keeps the map's structure — its
// regions of moderate attribution against those of none, its peak against
// its moderate regions, positive against negative — at no less than half
// the contrast the map has drawn alone, as over a dark picture. An overlay
// whose opacity followed each value's size left a region at a quarter of
// the peak within a third of the map's own contrast of the white around it.
func TestDefaultOverlayKeepsTheMapsStructureOnABrightImage(t *testing.T) {
	const side = 32
	test.NewTempApp(t)
	opacity := newExplain(newState(Config{})).opacity.Value // the screen's default
	region := func(x, y int) string {
		switch {
		case x >= 4 && x < 12 && y >= 4 && y < 12:
			return "moderate +"
		case x >= 20 && x < 28 && y >= 4 && y < 12:
			return "peak"
		case x >= 4 && x < 12 && y >= 20 && y < 28:
			return "moderate −"
		case x >= 16 || y >= 16:
			return "none"
		}
		return "" // the edges between, left out
	}
	value := map[string]float32{"moderate +": 0.25, "peak": 1, "moderate −": -0.25, "none": 0}
	m := make([]float32, side*side)
	for y := range side {
		for x := range side {
			m[y*side+x] = value[region(x, y)]
		}
	}
	for _, tc := range []struct {
		name            string
		paper, thing    uint8 // the background's and the object's grey
		texture, tinted bool
	}{
		{"white photo", 255, 228, true, false},
		{"bright beige photo", 245, 220, true, true},
		{"dark photo", 20, 60, true, false},
	} {
		photo := image.NewRGBA(image.Rect(0, 0, side, side))
		for y := range side {
			for x := range side {
				g := tc.paper
				if (x-16)*(x-16)+(y-16)*(y-16) < 100 {
					g = tc.thing // the object, across the regions
				}
				if tc.texture {
					g -= uint8((x*7 + y*13) % 6)
				}
				o := photo.PixOffset(x, y)
				photo.Pix[o], photo.Pix[o+1], photo.Pix[o+2], photo.Pix[o+3] = g, g, g, 255
				if tc.tinted {
					photo.Pix[o+2] = g - 25
				}
			}
		}
		ov := overlay(photo, m, 1, opacity)
		alone := heatmap(m, side, side, 1)
		for _, pair := range [][2]string{{"moderate +", "none"}, {"moderate −", "none"}, {"peak", "moderate +"}, {"moderate +", "moderate −"}} {
			in := func(r string) func(x, y int) bool { return func(x, y int) bool { return region(x, y) == r } }
			got := colourDistance(meanColour(ov, in(pair[0])), meanColour(ov, in(pair[1])))
			own := colourDistance(meanColour(alone, in(pair[0])), meanColour(alone, in(pair[1])))
			if got < 0.5*own {
				t.Errorf("%s, opacity %.2f: %s against %s differ by %.1f in the overlay, %.0f %% of the map's own %.1f: want at least half",
					tc.name, opacity, pair[0], pair[1], got, 100*got/own, own)
			}
		}
	}
}
