package data

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // the formats decodeImage reads
	_ "image/png"
	"io"
	"strings"

	"github.com/disintegration/imaging"
)

// decodeImage decodes a PNG or JPEG image after checking, from its header,
// that it is one Faithlab can decode and resize in bounded memory
// (checkImageShape): a small file that claims a huge or absurdly shaped
// image is refused before the decoder allocates anything.
func decodeImage(r io.ReadSeeker) (image.Image, error) {
	cfg, format, err := image.DecodeConfig(r)
	if err != nil {
		return nil, fmt.Errorf("not a readable image: %w", err)
	}
	if format != "png" && format != "jpeg" {
		return nil, fmt.Errorf("a %s image: want PNG or JPEG", format)
	}
	if err := checkImageShape(format, cfg); err != nil {
		return nil, err
	}
	if format == "jpeg" {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		f, err := readJPEGFrame(r)
		if err != nil { // DecodeConfig read it: count the costliest frame it can be
			f = worstJPEGFrame(cfg.ColorModel)
		}
		if n := f.decodeBytes(cfg); n > maxJPEGDecodeBytes {
			return nil, fmt.Errorf("%sjpeg of %d×%d pixels needs %.0f MiB for the decoder's own buffers, more than the %s limit", f.kind(), cfg.Width, cfg.Height, float64(n)/(1<<20), bytesText(maxJPEGDecodeBytes))
		}
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	img, _, err := image.Decode(r)
	if err != nil && !strings.HasPrefix(err.Error(), format+":") { // Go's PNG errors name it already
		err = fmt.Errorf("%s: %w", format, err)
	}
	if err != nil {
		return nil, err
	}
	return img, nil
}

// checkImageShape refuses an image whose header declares more than
// maxImageBytes of pixels, a side longer than maxImageSourceSide, or a
// longer side more than maxImageAspect times the shorter.
func checkImageShape(format string, cfg image.Config) error {
	bpp := int64(4) // 8-bit RGBA and YCbCr (at most 3), CMYK
	switch cfg.ColorModel {
	case color.GrayModel:
		bpp = 1
	case color.Gray16Model:
		bpp = 2
	case color.RGBA64Model, color.NRGBA64Model:
		bpp = 8
	}
	if _, paletted := cfg.ColorModel.(color.Palette); paletted {
		bpp = 1
	}
	w, h := int64(cfg.Width), int64(cfg.Height)
	switch long, short := max(w, h), min(w, h); {
	case short <= 0:
		return fmt.Errorf("%s of %d×%d pixels: empty image", format, w, h)
	case w*h > maxImageBytes/bpp:
		return fmt.Errorf("%s of %d×%d pixels takes %.0f MiB decoded, more than the %s limit", format, w, h, float64(w*h)*float64(bpp)/(1<<20), bytesText(maxImageBytes))
	case long > maxImageSourceSide:
		return fmt.Errorf("%s of %d×%d pixels: a side longer than %d pixels, the limit (not a picture; resizing it would take memory out of proportion to its size)", format, w, h, maxImageSourceSide)
	case long > maxImageAspect*short:
		return fmt.Errorf("%s of %d×%d pixels: one side %d times the other, more than the 1:%d limit (not a picture)", format, w, h, long/short, maxImageAspect)
	}
	return nil
}

// resizeImage resizes img to size×size with Lanczos filtering, one axis at
// a time: the longer axis first, so that the intermediate image holds
// min(W, H)×size pixels, never max(W, H)×size (imaging.Resize goes across
// first: a 1×1 000 000 image would become 224×1 000 000 on its way to
// 224×224).
func resizeImage(img image.Image, size int) *image.NRGBA {
	b := img.Bounds()
	if w, h := b.Dx(), b.Dy(); w < h && w != size && h != size {
		img = imaging.Resize(img, w, size, imaging.Lanczos) // down the columns only
	}
	return imaging.Resize(img, size, size, imaging.Lanczos)
}

// jpegFrame is what a JPEG's frame header (SOF) says of its layout:
// progressive or not, and each component's sampling factors.
type jpegFrame struct {
	progressive bool
	hv          [][2]int
	guessed     bool // not read: the costliest frame of its colour model
}

func (f jpegFrame) kind() string {
	switch {
	case f.guessed:
		return ""
	case f.progressive:
		return "progressive "
	}
	return "baseline "
}

// decodeBytes is what Go's image/jpeg allocates to decode a frame of
// cfg's size: 64 bytes per 8×8 block of each component, the image padded
// to whole MCUs; 256 more (int32 coefficients) per block of a progressive
// JPEG, which keeps every block's coefficients between its scans; and the
// RGBA or CMYK image an RGB or 4-component JPEG is converted to at the end.
func (f jpegFrame) decodeBytes(cfg image.Config) int64 {
	h0, v0 := int64(f.hv[0][0]), int64(f.hv[0][1])
	mxx := (int64(cfg.Width) + 8*h0 - 1) / (8 * h0)
	myy := (int64(cfg.Height) + 8*v0 - 1) / (8 * v0)
	var blocks int64
	for _, hv := range f.hv {
		blocks += mxx * myy * int64(hv[0]*hv[1])
	}
	per := int64(64)
	if f.progressive {
		per += 256
	}
	n := blocks * per
	if cfg.ColorModel == color.RGBAModel || cfg.ColorModel == color.CMYKModel {
		n += 4 * int64(cfg.Width) * int64(cfg.Height)
	}
	return n
}

// worstJPEGFrame is the costliest frame image/jpeg decodes as model:
// progressive, every component at the largest sampling factors it
// accepts (padding to the widest MCU).
func worstJPEGFrame(model color.Model) jpegFrame {
	switch model {
	case color.GrayModel:
		return jpegFrame{true, [][2]int{{1, 1}}, true}
	case color.CMYKModel:
		return jpegFrame{true, [][2]int{{2, 2}, {2, 2}, {2, 2}, {2, 2}}, true} // more than either layout it takes
	}
	return jpegFrame{true, [][2]int{{4, 2}, {4, 2}, {4, 2}}, true}
}

// readJPEGFrame reads a JPEG's segments up to its first frame header
// (SOF0, SOF1 or SOF2, the ones image/jpeg decodes), stepping over the
// others by their lengths as image/jpeg does.
func readJPEGFrame(r io.Reader) (jpegFrame, error) {
	br := bufio.NewReader(r)
	var b [2]byte
	if _, err := io.ReadFull(br, b[:]); err != nil || b != [2]byte{0xff, 0xd8} {
		return jpegFrame{}, errors.New("missing SOI marker")
	}
	for {
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return jpegFrame{}, err
		}
		for b[0] != 0xff { // extraneous bytes, which image/jpeg skips
			c, err := br.ReadByte()
			if err != nil {
				return jpegFrame{}, err
			}
			b[0], b[1] = b[1], c
		}
		marker := b[1]
		for marker == 0xff { // fill bytes
			c, err := br.ReadByte()
			if err != nil {
				return jpegFrame{}, err
			}
			marker = c
		}
		switch {
		case marker == 0:
			continue
		case marker == 0xd9 || marker == 0xda:
			return jpegFrame{}, errors.New("no frame header before the image data")
		case 0xd0 <= marker && marker <= 0xd7:
			continue
		}
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return jpegFrame{}, err
		}
		n := int(b[0])<<8 | int(b[1]) - 2
		if n < 0 {
			return jpegFrame{}, errors.New("short segment length")
		}
		if marker < 0xc0 || marker > 0xc2 {
			if _, err := br.Discard(n); err != nil {
				return jpegFrame{}, err
			}
			continue
		}
		seg := make([]byte, n)
		if _, err := io.ReadFull(br, seg); err != nil {
			return jpegFrame{}, err
		}
		if n < 6 || int(seg[5]) < 1 || n != 6+3*int(seg[5]) {
			return jpegFrame{}, errors.New("bad frame header")
		}
		f := jpegFrame{progressive: marker == 0xc2}
		for i := range int(seg[5]) {
			hv := seg[6+3*i+1]
			f.hv = append(f.hv, [2]int{max(int(hv>>4), 1), max(int(hv&15), 1)})
		}
		if len(f.hv) == 1 { // image/jpeg decodes one component in 8×8 MCUs, whatever it says
			f.hv[0] = [2]int{1, 1}
		}
		return f, nil
	}
}

// imageToCHW converts an NRGBA image to channels-first floats in [0, 1];
// one channel is the ITU-R 601 luma.
func imageToCHW(img *image.NRGBA, channels int) []float32 {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	out := make([]float32, channels*w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			o := img.PixOffset(x+b.Min.X, y+b.Min.Y)
			r, g, bl := float32(img.Pix[o])/255, float32(img.Pix[o+1])/255, float32(img.Pix[o+2])/255
			if channels == 1 {
				out[y*w+x] = 0.299*r + 0.587*g + 0.114*bl
				continue
			}
			out[y*w+x], out[w*h+y*w+x], out[2*w*h+y*w+x] = r, g, bl
		}
	}
	return out
}
