package data

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/disintegration/imaging"
)

// LoadImageFolder reads root/<class>/<image> files (PNG or JPEG), resized to
// size×size with Lanczos filtering, as channels (1: grey, 3: RGB) in [0, 1].
// Classes are the sub-folder names in lexical order.
func LoadImageFolder(root string, size, channels int) (*Dataset, error) {
	if size <= 0 || (channels != 1 && channels != 3) {
		return nil, fmt.Errorf("load %s: size %d and %d channels: want size > 0 and 1 or 3 channels", root, size, channels)
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
			img, err := imaging.Open(p)
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
