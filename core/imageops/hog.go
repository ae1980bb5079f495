package imageops

import "math"

// HOG is the histogram-of-oriented-gradients descriptor of an H×W plane
// (Dalal & Triggs 2005), as scikit-image computes it without its options:
// gradients by central differences (0 on the border rows and columns),
// their unsigned orientations in [0°, 180°) put whole into one of nine
// bins, each cell×cell cell's histogram the mean magnitude per bin, and
// every 2×2 block of cells normalised by L2-Hys (L2, clipped at 0.2,
// L2 again). It returns the blocks' histograms one after another, nil
// when the plane holds fewer than 2×2 cells. Adebayo et al. (2018) compare
// attribution maps by the correlation of their HOGs.
func HOG(img []float32, H, W, cell int) []float64 {
	const bins = 9
	cy, cx := H/cell, W/cell
	if cell < 1 || cy < 2 || cx < 2 {
		return nil
	}
	hist := make([]float64, cy*cx*bins)
	for y := 0; y < cy*cell; y++ {
		for x := 0; x < cx*cell; x++ {
			var gy, gx float64
			if y > 0 && y < H-1 {
				gy = float64(img[(y+1)*W+x] - img[(y-1)*W+x])
			}
			if x > 0 && x < W-1 {
				gx = float64(img[y*W+x+1] - img[y*W+x-1])
			}
			mag := math.Hypot(gx, gy)
			if mag == 0 {
				continue
			}
			deg := math.Mod(math.Atan2(gy, gx)*180/math.Pi+180, 180)
			b := min(int(deg/(180/bins)), bins-1)
			hist[((y/cell)*cx+x/cell)*bins+b] += mag / float64(cell*cell)
		}
	}
	out := make([]float64, 0, (cy-1)*(cx-1)*4*bins)
	for by := 0; by+1 < cy; by++ {
		for bx := 0; bx+1 < cx; bx++ {
			start := len(out)
			for _, c := range [][2]int{{by, bx}, {by, bx + 1}, {by + 1, bx}, {by + 1, bx + 1}} {
				out = append(out, hist[(c[0]*cx+c[1])*bins:(c[0]*cx+c[1]+1)*bins]...)
			}
			block := out[start:]
			normalise := func() {
				var ss float64
				for _, v := range block {
					ss += v * v
				}
				d := math.Sqrt(ss + 1e-10)
				for i := range block {
					block[i] /= d
				}
			}
			normalise()
			for i := range block {
				block[i] = min(block[i], 0.2)
			}
			normalise()
		}
	}
	return out
}
