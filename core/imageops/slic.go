package imageops

import "math"

// SLIC cuts an image (C×H×W, channel-major) into about k superpixels by
// simple linear iterative clustering (Achanta et al., "SLIC superpixels
// compared to state-of-the-art superpixel methods", IEEE TPAMI 2012):
// cluster centres start on a grid of step S = √(HW/k), each moved to the
// lowest gradient of its 3×3 neighbourhood (the grid has as many rows
// and columns as make about k cells of the image's aspect); ten times, every pixel joins
// the nearest centre within 2S×2S of it by the distance
// √(d_c² + (d_s/S)²·m²) — d_c the distance of the pixels' values over the
// channels, d_s the spatial one, m the compactness in the data's units —
// and each centre moves to its pixels' mean. Last, as in the paper,
// connectivity is enforced: a piece cut off from the rest of its cluster
// becomes a segment of its own unless it is smaller than a quarter of
// HW/k, when it joins the segment next to it. It returns each pixel's
// segment, numbered 0, 1, … in the order the segments' first pixels
// come in the raster, and the number of segments.
func SLIC(img []float32, C, H, W, k int, compactness float64) ([]int, int) {
	hw := H * W
	k = max(1, min(k, hw))
	S := math.Sqrt(float64(hw) / float64(k))
	val := func(c, p int) float64 { return float64(img[c*hw+p]) }
	grad := func(y, x int) float64 {
		if y < 1 || y >= H-1 || x < 1 || x >= W-1 {
			return math.Inf(1)
		}
		var g float64
		for c := range C {
			dx := val(c, y*W+x+1) - val(c, y*W+x-1)
			dy := val(c, (y+1)*W+x) - val(c, (y-1)*W+x)
			g += dx*dx + dy*dy
		}
		return g
	}
	// A centre: position and mean value per channel.
	type centre struct {
		y, x float64
		v    []float64
	}
	// A grid of about k centres, as many rows and columns as the image's
	// sides call for, each at its cell's middle.
	ny := max(1, min(H, int(math.Round(math.Sqrt(float64(k)*float64(H)/float64(W))))))
	nx := max(1, min(W, int(math.Round(float64(k)/float64(ny)))))
	var cs []centre
	for i := range ny {
		for j := range nx {
			fy := (float64(i)+0.5)*float64(H)/float64(ny) - 0.5
			fx := (float64(j)+0.5)*float64(W)/float64(nx) - 0.5
			y, x := int(math.Round(fy)), int(math.Round(fx))
			best := grad(y, x)
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					if g := grad(y+dy, x+dx); g < best {
						fy, fx, best = float64(y+dy), float64(x+dx), g
					}
				}
			}
			c := centre{y: fy, x: fx, v: make([]float64, C)}
			p := int(math.Round(fy))*W + int(math.Round(fx))
			for ch := range C {
				c.v[ch] = val(ch, p)
			}
			cs = append(cs, c)
		}
	}
	label := make([]int, hw)
	dist := make([]float64, hw)
	m2 := compactness * compactness / (S * S)
	for range 10 {
		for p := range dist {
			dist[p], label[p] = math.Inf(1), -1
		}
		for j, c := range cs {
			for y := max(0, int(c.y-2*S)); y < min(H, int(c.y+2*S)+1); y++ {
				for x := max(0, int(c.x-2*S)); x < min(W, int(c.x+2*S)+1); x++ {
					p := y*W + x
					var dc float64
					for ch := range C {
						e := val(ch, p) - c.v[ch]
						dc += e * e
					}
					ds := (float64(y)-c.y)*(float64(y)-c.y) + (float64(x)-c.x)*(float64(x)-c.x)
					if d := dc + ds*m2; d < dist[p] {
						dist[p], label[p] = d, j
					}
				}
			}
		}
		// Every pixel lies within 2S of some grid centre's start, but
		// centres move: a pixel none reached joins the nearest in space.
		for p, l := range label {
			if l < 0 {
				y, x := float64(p/W), float64(p%W)
				best := math.Inf(1)
				for j, c := range cs {
					if d := (y-c.y)*(y-c.y) + (x-c.x)*(x-c.x); d < best {
						best, label[p] = d, j
					}
				}
			}
		}
		sum := make([]centre, len(cs))
		count := make([]float64, len(cs))
		for j := range sum {
			sum[j].v = make([]float64, C)
		}
		for p, l := range label {
			sum[l].y += float64(p / W)
			sum[l].x += float64(p % W)
			for ch := range C {
				sum[l].v[ch] += val(ch, p)
			}
			count[l]++
		}
		for j := range cs {
			if count[j] == 0 {
				continue
			}
			cs[j].y, cs[j].x = sum[j].y/count[j], sum[j].x/count[j]
			for ch := range C {
				cs[j].v[ch] = sum[j].v[ch] / count[j]
			}
		}
	}
	return connected(label, H, W, max(1, hw/k/4))
}

// connected renumbers a labelling into its 4-connected pieces, in raster
// order of their first pixels, merging each piece smaller than minSize
// into the piece that touches it first (above or left of its first pixel,
// else the next piece found).
func connected(label []int, H, W, minSize int) ([]int, int) {
	out := make([]int, len(label))
	for p := range out {
		out[p] = -1
	}
	n := 0
	stack := []int{}
	for start := range label {
		if out[start] >= 0 {
			continue
		}
		// The piece already numbered next to the start: what a small piece
		// joins.
		adj := -1
		if y, x := start/W, start%W; x > 0 {
			adj = out[start-1]
		} else if y > 0 {
			adj = out[start-W]
		}
		piece := []int{start}
		out[start] = n
		stack = append(stack[:0], start)
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			y, x := p/W, p%W
			for _, q := range [4][2]int{{y - 1, x}, {y + 1, x}, {y, x - 1}, {y, x + 1}} {
				if q[0] < 0 || q[0] >= H || q[1] < 0 || q[1] >= W {
					continue
				}
				r := q[0]*W + q[1]
				if out[r] < 0 && label[r] == label[start] {
					out[r] = n
					piece = append(piece, r)
					stack = append(stack, r)
				}
			}
		}
		if len(piece) < minSize && adj >= 0 {
			for _, p := range piece {
				out[p] = adj
			}
			continue
		}
		n++
	}
	return out, n
}
