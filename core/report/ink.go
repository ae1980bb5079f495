package report

import (
	"image/color"
	"io"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Ink is what a figure is drawn with on a screen rather than paper: its
// Background where paper is white, and its Foreground where the figure's
// text, axes and frames are black or dark grey. The data keep their
// colours, pictures their pixels, light greys (a colour scale's middle)
// their shade: only the paper and the ink change.
type Ink struct {
	Background, Foreground color.Color
}

// RenderInk writes a figure as a PNG at dpi in ink's colours: what a
// window shows in a dark or light theme. Exported figures stay Render's,
// black on white for a paper.
func RenderInk(w io.Writer, f Figure, dpi int, ink Ink) error {
	width, height := f.size()
	img := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(ink.Background))}
	f.draw(draw.New(InkOn(img, ink)))
	_, err := img.WriteTo(w)
	return err
}

// InkOn is c drawing in ink's colours: for a front end's own charts,
// drawn as papers' are, shown in its theme.
func InkOn(c vg.CanvasSizer, ink Ink) vg.CanvasSizer { return inkCanvas{c, ink} }

// inkCanvas recolours what is drawn on it (Ink.recolour).
type inkCanvas struct {
	vg.CanvasSizer
	ink Ink
}

// SetColor implements vg.Canvas: every stroke, fill and text's colour
// passes here.
func (c inkCanvas) SetColor(col color.Color) { c.CanvasSizer.SetColor(c.ink.recolour(col)) }

// recolour maps paper's colours to ink's: white to the background, an
// opaque grey of luminance L ≤ ½ (black text, dark frames) to the blend
// L of the way from the foreground to the background; anything else —
// colours, light greys, translucent ones — stays.
func (k Ink) recolour(col color.Color) color.Color {
	if col == nil {
		col = color.Black // what a canvas draws for none: gonum's legend text has no colour
	}
	r, g, b, a := col.RGBA()
	if a != 0xffff || max(r, g, b)-min(r, g, b) > 0x0400 {
		return col
	}
	l := float64(r+g+b) / 3 / 0xffff
	switch {
	case l >= 0.98:
		return k.Background
	case l > 0.5:
		return col
	}
	fr, fg, fb, _ := k.Foreground.RGBA()
	br, bg, bb, _ := k.Background.RGBA()
	mix := func(f, b uint32) uint8 { return uint8((float64(f)*(1-l) + float64(b)*l) / 0x101) }
	return color.RGBA{mix(fr, br), mix(fg, bg), mix(fb, bb), 0xff}
}
