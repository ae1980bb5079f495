package report

import (
	"bytes"
	"image/color"
	"image/png"
	"testing"
)

var darkInk = Ink{Background: color.RGBA{0x17, 0x17, 0x18, 0xff}, Foreground: color.RGBA{0xf3, 0xf3, 0xf3, 0xff}}

// On a screen, paper's white becomes the background and black the
// foreground; a dark grey blends between them by its luminance; the data's
// colours, light greys and translucent colours stay.
func TestInkRecoloursPaperNotData(t *testing.T) {
	rgba := func(c color.Color) color.RGBA {
		r, g, b, a := c.RGBA()
		return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
	}
	for _, tc := range []struct {
		in, want color.Color
	}{
		{color.White, darkInk.Background},
		{color.Black, darkInk.Foreground},
		{color.Gray{Y: 0x80}, color.Gray{Y: 0x80}},              // L = 0.502: stays, a light grey
		{color.Gray{Y: 51}, color.RGBA{0xc7, 0xc7, 0xc7, 0xff}}, // L = 0.2: 0.8·243 + 0.2·23 = 199
		{color.RGBA{0, 114, 178, 255}, color.RGBA{0, 114, 178, 255}},
		{color.Gray{Y: 221}, color.Gray{Y: 221}},
		{color.NRGBA{128, 128, 128, 60}, color.NRGBA{128, 128, 128, 60}},
	} {
		got, want := rgba(darkInk.recolour(tc.in)), rgba(tc.want)
		if got != want {
			t.Errorf("%v → %v, want %v", tc.in, got, want)
		}
	}
}

// A figure rendered in a dark ink has the background where the paper
// figure is white and light text where it is black, at the same size.
func TestRenderInkDrawsOnTheBackground(t *testing.T) {
	recs := withSeeds(records())
	figs, err := Figures(recs, Confident(recs, ConfidenceOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var paper, screen bytes.Buffer
	if err := Render(&paper, figs[0], "png", 100); err != nil {
		t.Fatal(err)
	}
	if err := RenderInk(&screen, figs[0], 100, darkInk); err != nil {
		t.Fatal(err)
	}
	p, _ := png.Decode(&paper)
	s, err := png.Decode(&screen)
	if err != nil || p.Bounds() != s.Bounds() {
		t.Fatalf("screen figure %v, paper %v: %v", s.Bounds(), p.Bounds(), err)
	}
	light, dark := 0, 0
	b := p.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			pr, _, _, _ := p.At(x, y).RGBA()
			sr, _, _, _ := s.At(x, y).RGBA()
			switch {
			case pr == 0xffff && sr>>8 == 0x17:
				dark++ // paper became background
			case pr < 0x1000 && sr>>8 > 0xc0:
				light++ // black ink became light
			}
		}
	}
	if total := b.Dx() * b.Dy(); dark < total/2 || light == 0 {
		t.Errorf("of %d pixels, %d paper ones on the background, %d black ones light", total, dark, light)
	}
}

// Every figure says its protocol (or that it compares several) and its
// kind, for a front end's list.
func TestEveryFigureHasGroupAndKind(t *testing.T) {
	recs := withSeeds(records())
	figs, err := Figures(recs, Confident(recs, ConfidenceOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"fashion-mnist_roar_accuracy":       {"ROAR", Curves},
		"fashion-mnist_roar_accuracy_vs_tv": {"ROAR", BiasChecks},
		"fashion-mnist_deletion_tau":        {"Deletion", Bars},
	}
	for _, f := range figs {
		if f.Group == "" || f.Kind == "" {
			t.Errorf("%s: group %q, kind %q", f.Name, f.Group, f.Kind)
		}
		if w, ok := want[f.Name]; ok && (f.Group != w[0] || f.Kind != w[1]) {
			t.Errorf("%s: %s %s, want %s %s", f.Name, f.Group, f.Kind, w[0], w[1])
		}
	}
}

// Text drawn with no colour — gonum's legend — is black on paper, so it
// takes the ink's foreground on a screen (it stayed black on the dark
// theme's background).
func TestTextWithoutAColourTakesTheInk(t *testing.T) {
	got := darkInk.recolour(nil)
	if got != darkInk.recolour(color.Black) {
		t.Errorf("no colour became %v, black %v", got, darkInk.recolour(color.Black))
	}
	if r, _, _, _ := got.RGBA(); r>>8 < 0xc0 {
		t.Errorf("no colour became %v on the dark background, not the light foreground", got)
	}
}

// Text on a coloured cell (the agreement figure's τ values) keeps its
// colour in either theme: the page's ink does not touch it.
func TestCellTextKeepsItsColourOnScreen(t *testing.T) {
	for _, ink := range []Ink{{Background: color.Black, Foreground: color.White}, {Background: color.White, Foreground: color.Black}} {
		for _, col := range []color.Color{cellDark, cellLight} {
			if got := ink.recolour(col); got != col {
				t.Errorf("ink %v recoloured %v to %v", ink, col, got)
			}
		}
	}
}
