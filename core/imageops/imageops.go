// Package imageops holds the operations on H×W planes of float32 values
// (one channel of an image, or one attribution map) that several packages
// share: Gaussian blur and maximum filter (map post-processing, the blur
// reference), bilinear resizing (Grad-CAM, TRACE heatmaps) and total
// variation (the DPI paper's measure of a mask's blurriness). Planes are
// row-major; functions that filter work in place and say so.
package imageops

import (
	"math"
	"slices"
)

// Bilinear resizes src (h×w) into dst (H×W) with align-corners=false
// sampling, as torch's F.interpolate(mode="bilinear").
func Bilinear(dst []float32, H, W int, src []float32, h, w int) {
	for y := 0; y < H; y++ {
		sy := max((float64(y)+0.5)*float64(h)/float64(H)-0.5, 0)
		y0 := min(int(sy), h-1)
		y1 := min(y0+1, h-1)
		fy := float32(sy - float64(y0))
		for x := 0; x < W; x++ {
			sx := max((float64(x)+0.5)*float64(w)/float64(W)-0.5, 0)
			x0 := min(int(sx), w-1)
			x1 := min(x0+1, w-1)
			fx := float32(sx - float64(x0))
			top := src[y0*w+x0]*(1-fx) + src[y0*w+x1]*fx
			bot := src[y1*w+x0]*(1-fx) + src[y1*w+x1]*fx
			dst[y*W+x] = top*(1-fy) + bot*fy
		}
	}
}

// GaussianBlur filters an H×W plane in place with a separable Gaussian of
// standard deviation sigma, truncated at 3σ, reflecting at the border (as
// scipy.ndimage.gaussian_filter's default mode "reflect").
func GaussianBlur(img []float32, H, W int, sigma float64) {
	if sigma <= 0 {
		return
	}
	r := int(math.Ceil(3 * sigma))
	k := make([]float64, 2*r+1)
	var s float64
	for i := range k {
		d := float64(i - r)
		k[i] = math.Exp(-d * d / (2 * sigma * sigma))
		s += k[i]
	}
	for i := range k {
		k[i] /= s
	}
	reflect := func(i, n int) int {
		for i < 0 || i >= n {
			if i < 0 {
				i = -i - 1
			} else {
				i = 2*n - i - 1
			}
		}
		return i
	}
	tmp := make([]float64, H*W)
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			var a float64
			for j, kv := range k {
				a += kv * float64(img[y*W+reflect(x+j-r, W)])
			}
			tmp[y*W+x] = a
		}
	}
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			var a float64
			for j, kv := range k {
				a += kv * tmp[reflect(y+j-r, H)*W+x]
			}
			img[y*W+x] = float32(a)
		}
	}
}

// MaxFilter replaces each value of an H×W plane by the maximum over the
// size×size window around it (clipped at the border), in place.
func MaxFilter(img []float32, H, W, size int) {
	src := slices.Clone(img)
	lo, hi := (size-1)/2, size/2
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			m := float32(math.Inf(-1))
			for yy := max(y-lo, 0); yy <= min(y+hi, H-1); yy++ {
				for xx := max(x-lo, 0); xx <= min(x+hi, W-1); xx++ {
					m = max(m, src[yy*W+xx])
				}
			}
			img[y*W+x] = m
		}
	}
}

// TotalVariation is Σ |m(y,x+1) − m(y,x)| + |m(y+1,x) − m(y,x)| over an H×W
// plane (anisotropic TV, the DPI paper's measure of mask blurriness).
func TotalVariation(m []float32, H, W int) float64 {
	var tv float64
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			if x+1 < W {
				tv += math.Abs(float64(m[y*W+x+1] - m[y*W+x]))
			}
			if y+1 < H {
				tv += math.Abs(float64(m[(y+1)*W+x] - m[y*W+x]))
			}
		}
	}
	return tv
}
