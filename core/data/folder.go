package data

import (
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // the formats loadImage reads
	_ "image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/disintegration/imaging"
)

// LoadImageFolder reads root/<class>/<image> files (PNG or JPEG), resized to
// size×size with Lanczos filtering, as channels (1: grey, 3: RGB) in [0, 1].
// Classes are the sub-folder names in lexical order. Each image is a regular
// file of at most 64 MiB (maxImageFileBytes) whose header declares at most
// 64 MiB of pixels (maxImageBytes: 16 megapixels of 8-bit RGBA), checked
// before it is decoded (loadImage); size is at most 4096.
func LoadImageFolder(root string, size, channels int) (*Dataset, error) {
	if size <= 0 || size > maxImageSide || (channels != 1 && channels != 3) {
		return nil, fmt.Errorf("load %s: size %d and %d channels: want a size in [1, %d] and 1 or 3 channels", root, size, channels, maxImageSide)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", root, err)
	}
	d := &Dataset{Name: filepath.Base(root), Shape: []int{channels, size, size}}
	for _, e := range entries {
		if e.IsDir() {
			d.Classes = append(d.Classes, e.Name())
		}
	}
	slices.Sort(d.Classes)
	per := channels * size * size
	for ci, c := range d.Classes {
		files, err := os.ReadDir(filepath.Join(root, c))
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", root, err)
		}
		for _, f := range files {
			ext := strings.ToLower(filepath.Ext(f.Name()))
			if f.IsDir() || (ext != ".png" && ext != ".jpg" && ext != ".jpeg") {
				continue
			}
			p := filepath.Join(root, c, f.Name())
			img, err := loadImage(p)
			if err != nil {
				return nil, fmt.Errorf("load %s: %w", p, err)
			}
			d.X = append(d.X, imageToCHW(imaging.Resize(img, size, size, imaging.Lanczos), channels)[:per]...)
			d.Y = append(d.Y, ci)
		}
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("load %s: %w", root, err)
	}
	return d, nil
}

// loadImage decodes a PNG or JPEG file of at most maxImageFileBytes.
func loadImage(path string) (image.Image, error) {
	f, size, err := OpenRegular(path, maxImageFileBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeImage(io.NewSectionReader(f, 0, size))
}

// decodeImage decodes a PNG or JPEG image after checking, from its header,
// that the decoded pixels take at most maxImageBytes: a small file that
// claims a huge image is refused before the decoder allocates it.
func decodeImage(r io.ReadSeeker) (image.Image, error) {
	cfg, format, err := image.DecodeConfig(r)
	if err != nil {
		return nil, fmt.Errorf("not a readable image: %w", err)
	}
	if format != "png" && format != "jpeg" {
		return nil, fmt.Errorf("a %s image: want PNG or JPEG", format)
	}
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
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("%s of %d×%d pixels: empty image", format, cfg.Width, cfg.Height)
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > maxImageBytes/bpp {
		return nil, fmt.Errorf("%s of %d×%d pixels takes %.0f MiB decoded, more than the %s limit", format, cfg.Width, cfg.Height, float64(px)*float64(bpp)/(1<<20), bytesText(maxImageBytes))
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
