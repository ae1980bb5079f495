package ui

import (
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot/palette/moreland"

	"faithlab/core/data"
)

// diverging is Moreland's smooth blue–red diverging colour map as a table
// of 257 colours from −1 (blue) through 0 (near white) to +1 (red): a
// signed attribution map shows its sign and its size at once.
var diverging = func() (lut [257]color.RGBA) {
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-1)
	cm.SetMax(1)
	for i := range lut {
		c, _ := cm.At(float64(i)/128 - 1)
		r, g, b, _ := c.RGBA()
		lut[i] = color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}
	}
	return lut
}()

// divergingAt is the colour of v in a scale that runs from −limit to +limit.
func divergingAt(v, limit float32) color.RGBA {
	if !(limit > 0) {
		return diverging[128]
	}
	i := int(math.Round(float64(v/limit)*128)) + 128
	return diverging[min(max(i, 0), 256)]
}

// absMax is the largest magnitude in m (the symmetric range of its colour
// scale); 0 for an empty or all-zero map.
func absMax(m []float32) float32 {
	var a float32
	for _, v := range m {
		if v < 0 {
			v = -v
		}
		a = max(a, v)
	}
	return a
}

// heatmap draws an H×W map in the diverging scale of ±limit.
func heatmap(m []float32, H, W int, limit float32) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	for p, v := range m[:H*W] {
		c := divergingAt(v, limit)
		o := 4 * p
		img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = c.R, c.G, c.B, 255
	}
	return img
}

// overlay draws the map over a picture of the sample: the map's colours
// at the given opacity, every pixel alike, over the sample, which shows
// through at 1 − opacity, in grey as the opacity grows (0: the sample as
// it is, 1: the map alone). One opacity for every pixel keeps the same
// share of the map's own contrast over a bright picture as over a dark
// one: an opacity scaled by each value's size hid the pale colours of
// moderate values on a white background, and grey keeps the picture's own
// reds and blues from reading as the map's.
func overlay(base *image.RGBA, m []float32, limit float32, opacity float64) *image.RGBA {
	out := image.NewRGBA(base.Rect)
	copy(out.Pix, base.Pix)
	for p, v := range m[:len(base.Pix)/4] {
		o := 4 * p
		px := out.Pix[o : o+3 : o+3]
		grey := 0.299*float64(px[0]) + 0.587*float64(px[1]) + 0.114*float64(px[2])
		c := divergingAt(v, limit)
		for j, mc := range [3]uint8{c.R, c.G, c.B} {
			under := float64(px[j])*(1-opacity) + grey*opacity
			px[j] = uint8(math.Round(under*(1-opacity) + float64(mc)*opacity))
		}
	}
	return out
}

// colorBar draws the scale's legend: a horizontal bar from −limit (left)
// to +limit (right).
func colorBar(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		c := diverging[x*256/max(w-1, 1)]
		for y := range h {
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// maskImage draws a keep-mask: kept pixels white, removed ones dark red.
func maskImage(keep []float32, H, W int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	for p, k := range keep[:H*W] {
		c := color.RGBA{255, 255, 255, 255}
		if k == 0 {
			c = color.RGBA{150, 20, 30, 255}
		}
		img.SetRGBA(p%W, p/W, c)
	}
	return img
}

// sampleImage draws values of one sample of shape (C, H, W) — an image as
// its pixels, a tabular sample as a strip of its features in the
// diverging scale (saturating at ±2 standard deviations).
func sampleImage(x []float32, shape []int) *image.RGBA {
	c, h, w := shape[0], shape[1], shape[2]
	if h == 1 && w == 1 {
		return heatmap(x, 1, c, 2)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	hw := h * w
	for p := range hw {
		o := 4 * p
		if c >= 3 {
			img.Pix[o], img.Pix[o+1], img.Pix[o+2] = byte8(x[p]), byte8(x[hw+p]), byte8(x[2*hw+p])
		} else {
			g := byte8(x[p])
			img.Pix[o], img.Pix[o+1], img.Pix[o+2] = g, g, g
		}
		img.Pix[o+3] = 255
	}
	return img
}

// Thumbnail renders sample i of ds (sampleImage).
func Thumbnail(ds *data.Dataset, i int) *image.RGBA { return sampleImage(ds.Sample(i), ds.Shape) }

func byte8(v float32) uint8 {
	return uint8(math.Round(float64(min(max(v, 0), 1)) * 255))
}
