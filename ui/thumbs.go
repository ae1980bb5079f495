package ui

import (
	"image"
	"image/color"
	"math"

	"faithlab/core/data"
)

// Thumbnail renders sample i of ds as an RGBA image: grey or colour images
// pixel for pixel, tabular samples as a heat strip of their features
// (blue negative, red positive, saturating at ±2).
func Thumbnail(ds *data.Dataset, i int) *image.RGBA {
	c, h, w := ds.Shape[0], ds.Shape[1], ds.Shape[2]
	x := ds.Sample(i)
	if h == 1 && w == 1 {
		n := c
		side := int(math.Ceil(math.Sqrt(float64(n))))
		img := image.NewRGBA(image.Rect(0, 0, side, side))
		for j := 0; j < side*side; j++ {
			col := color.RGBA{230, 230, 230, 255}
			if j < n {
				col = diverging(x[j] / 2)
			}
			img.SetRGBA(j%side, j/side, col)
		}
		return img
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for xx := 0; xx < w; xx++ {
			o := img.PixOffset(xx, y)
			if c >= 3 {
				img.Pix[o], img.Pix[o+1], img.Pix[o+2] = byte8(x[y*w+xx]), byte8(x[h*w+y*w+xx]), byte8(x[2*h*w+y*w+xx])
			} else {
				g := byte8(x[y*w+xx])
				img.Pix[o], img.Pix[o+1], img.Pix[o+2] = g, g, g
			}
			img.Pix[o+3] = 255
		}
	}
	return img
}

func byte8(v float32) uint8 {
	return uint8(math.Round(float64(min(max(v, 0), 1)) * 255))
}

// diverging maps v in [−1, 1] to blue–white–red.
func diverging(v float32) color.RGBA {
	v = min(max(v, -1), 1)
	if v >= 0 {
		f := uint8(255 * (1 - v))
		return color.RGBA{255, f, f, 255}
	}
	f := uint8(255 * (1 + v))
	return color.RGBA{f, f, 255, 255}
}
