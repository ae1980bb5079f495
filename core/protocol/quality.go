package protocol

import "math"

// Image-quality measures beside PSNR and SSIM (FUD §4.3.2, Table 3): the
// multi-scale SSIM and the gradient magnitude similarity deviation. Both
// take two h×w single-channel images and the data range span.

// msssimWeights are the exponents of Wang, Simoncelli and Bovik (2003)'s
// five scales, finest first.
var msssimWeights = [5]float64{0.0448, 0.2856, 0.3001, 0.2363, 0.1333}

// msssimMinSide is the smallest side a scale may have: at 7 pixels the
// SSIM window (shrunk to fit, as ssim does) still spans ±2σ.
const msssimMinSide = 7

// msssimScales is how many of MS-SSIM's five scales an h×w image has: the
// image and each 2× reduction whose sides stay at least msssimMinSide.
func msssimScales(h, w int) int {
	m := 1
	for m < len(msssimWeights) && min(h>>m, w>>m) >= msssimMinSide {
		m++
	}
	return m
}

// msssim is the multi-scale structural similarity (Wang et al. 2003, Eq.
// 7): Π_{j<M} cs_j^{β_j} · ssim_M^{β_M}, where cs_j is the mean
// contrast–structure term at scale j, ssim_M the whole SSIM (luminance
// included) at the coarsest, and each scale halves the previous by 2×2
// means (an odd last row or column dropped). Negative terms count as 0, as
// in pytorch-msssim. The definition wants five scales of an 11×11 window,
// images of 176 pixels or more; a smaller image (Fashion-MNIST's 28×28 has
// three: 28, 14, 7) runs the scales it has, msssimScales, with the first M
// exponents rescaled to sum to 1, and the window shrunk to fit as in ssim.
// With one scale it is SSIM (clipped at 0).
func msssim(x, y []float32, h, w int, span float64) float64 {
	_, ms := ssimAndMS(x, y, h, w, span)
	return ms
}

// ssimAndMS is ssim and msssim of the same images, the first read off the
// second's finest scale rather than computed again.
func ssimAndMS(x, y []float32, h, w int, span float64) (ssim, ms float64) {
	m := msssimScales(h, w)
	var total float64
	for _, b := range msssimWeights[:m] {
		total += b
	}
	out := 1.0
	for j := range m {
		s, cs := ssimCS(x, y, h, w, span)
		if j == 0 {
			ssim = s
		}
		v := cs
		if j == m-1 {
			v = s
		}
		out *= math.Pow(max(v, 0), msssimWeights[j]/total)
		if j < m-1 {
			x, y, h, w = halve(x, h, w), halve(y, h, w), h/2, w/2
		}
	}
	return ssim, out
}

// halve is the h×w image reduced by 2×2 means to ⌊h/2⌋×⌊w/2⌋.
func halve(x []float32, h, w int) []float32 {
	oh, ow := h/2, w/2
	out := make([]float32, oh*ow)
	for r := range oh {
		for c := range ow {
			i := 2*r*w + 2*c
			out[r*ow+c] = float32((float64(x[i]) + float64(x[i+1]) + float64(x[i+w]) + float64(x[i+w+1])) / 4)
		}
	}
	return out
}

// gmsd is the gradient magnitude similarity deviation of Xue, Zhang, Mou
// and Bovik (2014), as their reference code computes it: both images
// averaged over 2×2 blocks (a last odd row or column averaged with zeros,
// as conv2 'same' then every second pixel does), gradient magnitudes m of
// the Prewitt filters [1 0 −1]/3 along each axis with zero padding, the
// similarity map (2·m_x·m_y + c)/(m_x² + m_y² + c) with c = 170 for 8-bit
// images, here 170·(span/255)², and its population standard deviation.
// 0 for identical images; higher means more distortion of the edges.
func gmsd(x, y []float32, h, w int, span float64) float64 {
	gx, oh, ow := gradientMagnitude(x, h, w)
	gy, _, _ := gradientMagnitude(y, h, w)
	c := 170 * (span / 255) * (span / 255)
	var sum, ss float64
	for i := range gx {
		q := (2*gx[i]*gy[i] + c) / (gx[i]*gx[i] + gy[i]*gy[i] + c)
		sum += q
		ss += q * q
	}
	n := float64(oh * ow)
	mean := sum / n
	return math.Sqrt(max(ss/n-mean*mean, 0))
}

// gradientMagnitude is GMSD's downsampled image's Prewitt gradient
// magnitude, with its size.
func gradientMagnitude(x []float32, h, w int) ([]float64, int, int) {
	oh, ow := (h+1)/2, (w+1)/2
	d := make([]float64, oh*ow)
	at := func(r, c int) float64 {
		if r >= h || c >= w {
			return 0
		}
		return float64(x[r*w+c])
	}
	for r := range oh {
		for c := range ow {
			d[r*ow+c] = (at(2*r, 2*c) + at(2*r, 2*c+1) + at(2*r+1, 2*c) + at(2*r+1, 2*c+1)) / 4
		}
	}
	dv := func(r, c int) float64 {
		if r < 0 || r >= oh || c < 0 || c >= ow {
			return 0
		}
		return d[r*ow+c]
	}
	g := make([]float64, oh*ow)
	for r := range oh {
		for c := range ow {
			var ix, iy float64
			for k := -1; k <= 1; k++ {
				ix += dv(r+k, c-1) - dv(r+k, c+1)
				iy += dv(r-1, c+k) - dv(r+1, c+k)
			}
			ix, iy = ix/3, iy/3
			g[r*ow+c] = math.Sqrt(ix*ix + iy*iy)
		}
	}
	return g, oh, ow
}
