package data

import (
	"fmt"
	"image"
	"image/color"
	"math"
)

// How an image is brought to a model's side (Resize.Mode).
const (
	// ResizeSquash resizes both sides to the model's, the aspect not kept,
	// with Lanczos filtering: what a folder is read with by default.
	ResizeSquash = "squash"
	// ResizeShortSideCrop is torchvision's evaluation transform:
	// Resize(short) on the shorter side, the aspect kept, then
	// CenterCrop(size), computed as Pillow's bilinear resize computes it.
	ResizeShortSideCrop = "short-side+center-crop"
)

// Resize says how an image folder's images are brought to size×size. The
// zero value squashes (ResizeSquash). With ResizeShortSideCrop, Short is
// the side the shorter side is resized to (0: round(size·256/224), which
// is 256 for 224, torchvision's ImageNet recipe); it is at least size.
type Resize struct {
	Mode  string `json:"mode,omitempty"`
	Short int    `json:"short,omitempty"`
}

// ShortSide is the side the shorter side of an image is resized to
// before the centre crop, for a model of side size.
func (r Resize) ShortSide(size int) int {
	if r.Short > 0 {
		return r.Short
	}
	return int(math.Round(float64(size) * 256 / 224))
}

// Check says whether r can bring images to size×size.
func (r Resize) Check(size int) error {
	switch r.Mode {
	case "", ResizeSquash:
		if r.Short != 0 {
			return fmt.Errorf("resize %q takes no short side (%d): it is for %q", r.Mode, r.Short, ResizeShortSideCrop)
		}
		return nil
	case ResizeShortSideCrop:
		if s := r.ShortSide(size); s < size || s > maxImageSide {
			return fmt.Errorf("resize %q to a short side of %d for a side of %d: want a short side in [%d, %d]", r.Mode, s, size, size, maxImageSide)
		}
		return nil
	}
	return fmt.Errorf("resize %q: want %q or %q", r.Mode, ResizeSquash, ResizeShortSideCrop)
}

// String says what r does to an image at side size, for a notice.
func (r Resize) String(size int) string {
	if r.Mode == ResizeShortSideCrop {
		return fmt.Sprintf("shorter side resized to %d (bilinear, as torchvision and Pillow), then the centre %d×%d cropped", r.ShortSide(size), size, size)
	}
	return fmt.Sprintf("squashed to %d×%d (Lanczos, aspect not kept)", size, size)
}

// cropFrame is where torchvision's Resize(short) + CenterCrop(size) puts
// an image of w×h: the resized image's width and height and the crop's
// left and top corner in it.
func cropFrame(w, h, size, short int) (ow, oh, left, top int) {
	ow, oh = short, short
	if w <= h {
		oh = int(float64(short) * float64(h) / float64(w)) // torchvision's int(short * long / short)
	} else {
		ow = int(float64(short) * float64(w) / float64(h))
	}
	left = int(math.RoundToEven(float64(ow-size) / 2)) // Python's round
	top = int(math.RoundToEven(float64(oh-size) / 2))
	return ow, oh, left, top
}

// shortSideCrop is img resized with its shorter side at short and cut to
// its centre size×size (torchvision: Resize(short), CenterCrop(size), on
// the image converted to RGB as ImageFolder's loader does, the alpha
// dropped). The resize is Pillow's bilinear one, fixed-point weights and
// rounding included (pilAxis), horizontal pass first; only the crop's
// pixels are computed, from the source rows and columns they read, so the
// intermediate image holds at most size × (the rows the crop reads) pixels.
func shortSideCrop(img image.Image, size, short int) *image.NRGBA {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	ow, oh, left, top := cropFrame(w, h, size, short)
	cols := pilAxis(w, ow, left, size)
	rows := pilAxis(h, oh, top, size)
	y0, y1 := rows.first, rows.last
	// The horizontal pass over the rows the vertical one reads.
	mid := make([]uint8, 3*size*(y1-y0))
	line := make([]uint8, 3*w)
	for y := y0; y < y1; y++ {
		rgbRow(img, b.Min.Y+y, line)
		cols.apply(line, mid[3*size*(y-y0):3*size*(y-y0+1)], 3)
	}
	out := image.NewNRGBA(image.Rect(0, 0, size, size))
	rows = rows.shifted(y0)
	for j, k := range rows.k {
		dst := out.Pix[j*out.Stride:]
		for i := range 3 * size {
			ss := int64(1) << (pilPrecision - 1)
			for y, wt := range k {
				ss += int64(mid[3*size*(rows.bounds[j]+y)+i]) * int64(wt)
			}
			dst[i/3*4+i%3] = clip8(ss)
		}
	}
	for i := 3; i < len(out.Pix); i += 4 {
		out.Pix[i] = 255
	}
	return out
}

// rgbRow writes row y of img as 8-bit RGB, the alpha dropped from
// non-premultiplied colour (Pillow's convert("RGB")).
func rgbRow(img image.Image, y int, dst []uint8) {
	b := img.Bounds()
	switch m := img.(type) {
	case *image.NRGBA:
		row := m.Pix[m.PixOffset(b.Min.X, y):]
		for x := range b.Dx() {
			dst[3*x], dst[3*x+1], dst[3*x+2] = row[4*x], row[4*x+1], row[4*x+2]
		}
		return
	case *image.RGBA:
		if m.Opaque() {
			row := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := range b.Dx() {
				dst[3*x], dst[3*x+1], dst[3*x+2] = row[4*x], row[4*x+1], row[4*x+2]
			}
			return
		}
	}
	for x := range b.Dx() {
		c := color.NRGBAModel.Convert(img.At(b.Min.X+x, y)).(color.NRGBA)
		dst[3*x], dst[3*x+1], dst[3*x+2] = c.R, c.G, c.B
	}
}

// pilPrecision is Pillow's fixed-point precision of 8-bit resampling
// weights (Resample.c's PRECISION_BITS).
const pilPrecision = 32 - 8 - 2

// pilWeights are Pillow's bilinear weights for n consecutive outputs of
// one axis: output j reads the inputs from bounds[j] on, len(k[j]) of
// them; first and last bound the inputs any output reads.
type pilWeights struct {
	bounds      []int
	k           [][]int32
	first, last int
}

// pilAxis is Pillow's precompute_coeffs and normalize_coeffs_8bpc for a
// bilinear (triangle, support 1) filter taking in samples to out, for the
// outputs from o0 to o0+n.
func pilAxis(in, out, o0, n int) pilWeights {
	scale := float64(in) / float64(out)
	filterscale := max(scale, 1)
	support := filterscale // the triangle's support, 1, scaled
	p := pilWeights{bounds: make([]int, n), k: make([][]int32, n), first: in}
	for j := range n {
		center := (float64(o0+j) + 0.5) * scale
		xmin := max(int(center-support+0.5), 0) // C's truncation, as Pillow's (int)
		xmax := min(int(center+support+0.5), in) - xmin
		w := make([]float64, max(xmax, 0))
		var ww float64
		for x := range w {
			t := math.Abs((float64(x+xmin) - center + 0.5) / filterscale)
			if t < 1 {
				w[x] = 1 - t
			}
			ww += w[x]
		}
		k := make([]int32, len(w))
		for x := range w {
			if ww != 0 {
				w[x] /= ww
			}
			if w[x] < 0 {
				k[x] = int32(-0.5 + w[x]*(1<<pilPrecision))
			} else {
				k[x] = int32(0.5 + w[x]*(1<<pilPrecision))
			}
		}
		p.bounds[j], p.k[j] = xmin, k
		p.first, p.last = min(p.first, xmin), max(p.last, xmin+len(k))
	}
	return p
}

// shifted is p reading from an input that starts at its sample d.
func (p pilWeights) shifted(d int) pilWeights {
	q := p
	q.bounds = make([]int, len(p.bounds))
	for j, b := range p.bounds {
		q.bounds[j] = b - d
	}
	q.first, q.last = p.first-d, p.last-d
	return q
}

// apply resamples src, a row of pixels of channels interleaved values,
// into dst, Pillow's 8-bit rounding and clipping included.
func (p pilWeights) apply(src, dst []uint8, channels int) {
	for j, k := range p.k {
		for c := range channels {
			ss := int64(1) << (pilPrecision - 1)
			for x, wt := range k {
				ss += int64(src[(p.bounds[j]+x)*channels+c]) * int64(wt)
			}
			dst[j*channels+c] = clip8(ss)
		}
	}
}

// clip8 is Pillow's clip8: a fixed-point sum to a byte.
func clip8(ss int64) uint8 {
	switch {
	case ss >= 256<<pilPrecision:
		return 255
	case ss <= 0:
		return 0
	}
	return uint8(ss >> pilPrecision)
}
