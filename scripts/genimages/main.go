// Command genimages writes an image folder at the field's size: DIR/train
// and DIR/test, one sub-folder per class (c0 … c9), of RGB PNGs of
// SIZE×SIZE pixels (default 224) whose classes a network can learn: class k
// is noise plus a bright square whose place and colour depend on k. It
// exists to measure a campaign's time and memory at ImageNet's image size
// (make bench-campaigns field224) where ImageNet cannot be downloaded. Same
// arguments, same bytes.
//
// Usage: go run ./scripts/genimages [-size 224] [-train 50] [-test 100] DIR
package main

import (
	"flag"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	size := flag.Int("size", 224, "image side in pixels")
	trainN := flag.Int("train", 50, "training images (spread over the 10 classes)")
	testN := flag.Int("test", 100, "test images (spread over the 10 classes)")
	flag.Parse()
	if flag.NArg() != 1 || *size < 16 {
		fmt.Fprintln(os.Stderr, "usage: genimages [-size N≥16] [-train N] [-test N] DIR")
		os.Exit(2)
	}
	rng := rand.New(rand.NewPCG(224, uint64(*size)))
	for _, split := range []struct {
		name string
		n    int
	}{{"train", *trainN}, {"test", *testN}} {
		for i := range split.n {
			k := i % 10
			dir := filepath.Join(flag.Arg(0), split.name, fmt.Sprintf("c%d", k))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				fail(err)
			}
			if err := write(filepath.Join(dir, fmt.Sprintf("%04d.png", i)), picture(rng, *size, k)); err != nil {
				fail(err)
			}
		}
	}
}

// picture is class k's image: uniform noise in [0, 160), and a square of a
// quarter of the side, in one of 10 places, bright in channel k mod 3.
func picture(rng *rand.Rand, size, k int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	for p := 0; p < len(img.Pix); p += 4 {
		img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = uint8(rng.IntN(160)), uint8(rng.IntN(160)), uint8(rng.IntN(160)), 255
	}
	side := size / 4
	y0, x0 := (k/5)*size/2+size/8, (k%5)*(size-side)/4
	for y := y0; y < y0+side; y++ {
		for x := x0; x < x0+side; x++ {
			img.Pix[img.PixOffset(x, y)+k%3] = 255
		}
	}
	return img
}

func write(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genimages:", err)
	os.Exit(1)
}
