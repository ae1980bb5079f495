package data

import (
	"encoding/json"
	"image"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// resizeCases are testdata/resize's fixtures (make_resize.py): images and
// what torchvision 0.14's Resize(short) + CenterCrop(size) on Pillow 9.4
// makes of them.
type resizeCases struct {
	Cases []struct {
		Image, Want, Decoded string
		Size, Short          int
	}
}

func loadResizeCases(t *testing.T) (string, resizeCases) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "resize")
	b, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c resizeCases
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return dir, c
}

// rgbDiff is the largest and the mean absolute difference of two images'
// RGB values, in 8-bit levels.
func rgbDiff(t *testing.T, got, want image.Image) (maxDiff int, mean float64) {
	t.Helper()
	if got.Bounds().Size() != want.Bounds().Size() {
		t.Fatalf("%v against %v pixels", got.Bounds().Size(), want.Bounds().Size())
	}
	line := func(img image.Image, y int) []uint8 {
		row := make([]uint8, 3*img.Bounds().Dx())
		rgbRow(img, img.Bounds().Min.Y+y, row)
		return row
	}
	var sum, n float64
	for y := range got.Bounds().Dy() {
		a, b := line(got, y), line(want, y)
		for i := range a {
			d := int(a[i]) - int(b[i])
			maxDiff = max(maxDiff, d, -d)
			sum += math.Abs(float64(d))
			n++
		}
	}
	return maxDiff, sum / n
}

// On PNGs, the short side's resize and the centre crop give torchvision's
// pixels exactly: Pillow's bilinear weights, fixed-point sums and rounding
// are its own (downsampling, upsampling, an alpha channel dropped). On a
// 4:2:0 JPEG the transform of Pillow's decoding is torchvision's exactly;
// Go's decoder (image/jpeg, whose chroma upsampling is not libjpeg's
// "fancy" one) differs from Pillow's by up to 31 levels at sharp colour
// edges, 0.48 on average (measured), and by up to 16, 0.32 on average,
// after the transform: the bounds are 32 and 0.6, 16 and 0.4.
func TestShortSideCenterCropMatchesTorchvision(t *testing.T) {
	dir, c := loadResizeCases(t)
	for _, tc := range c.Cases {
		img, err := loadImage(filepath.Join(dir, tc.Image))
		if err != nil {
			t.Fatal(err)
		}
		want, err := loadImage(filepath.Join(dir, tc.Want))
		if err != nil {
			t.Fatal(err)
		}
		if tc.Decoded == "" {
			if m, mean := rgbDiff(t, shortSideCrop(img, tc.Size, tc.Short), want); m != 0 {
				t.Errorf("%s at %d: differs from torchvision's by up to %d levels (mean %.3f), want none", tc.Image, tc.Size, m, mean)
			}
			continue
		}
		pil, err := loadImage(filepath.Join(dir, tc.Decoded))
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := rgbDiff(t, shortSideCrop(pil, tc.Size, tc.Short), want); m != 0 {
			t.Errorf("%s at %d, Pillow's decoding: differs from torchvision's by up to %d levels, want none", tc.Image, tc.Size, m)
		}
		dm, dmean := rgbDiff(t, img, pil)
		m, mean := rgbDiff(t, shortSideCrop(img, tc.Size, tc.Short), want)
		t.Logf("%s: Go's decoding against Pillow's: up to %d levels, mean %.3f; after the transform: up to %d, mean %.3f", tc.Image, dm, dmean, m, mean)
		if dm > 32 || dmean > 0.6 || m > 16 || mean > 0.4 {
			t.Errorf("%s: Go's JPEG decoding differs from Pillow's by up to %d levels (mean %.3f), %d (mean %.3f) after the transform: want at most 32 (mean 0.6) and 16 (mean 0.4)", tc.Image, dm, dmean, m, mean)
		}
	}
}

// An image folder read with Options.Resize gives torchvision's ToTensor
// values: the crop's pixels / 255, channels first.
func TestImageFolderShortSideCropIsToTensor(t *testing.T) {
	dir, c := loadResizeCases(t)
	tc := c.Cases[0]
	root := t.TempDir()
	for _, cl := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(root, cl), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, tc.Image))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, cl, tc.Image), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := loadImageFolder(root, root, folderRead{size: tc.Size, channels: 3, resize: Resize{Mode: ResizeShortSideCrop}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := loadImage(filepath.Join(dir, tc.Want))
	if err != nil {
		t.Fatal(err)
	}
	s := tc.Size
	row := make([]uint8, 3*s)
	for y := range s {
		rgbRow(want, y, row)
		for x := range s {
			for ch := range 3 {
				if got, exp := d.Sample(1)[ch*s*s+y*s+x], float32(row[3*x+ch])/255; got != exp {
					t.Fatalf("channel %d, pixel (%d, %d): %g, torchvision's ToTensor %g", ch, x, y, got, exp)
				}
			}
		}
	}
}

func TestResizeShortSideDefaultsToImageNetRatio(t *testing.T) {
	for _, tc := range []struct{ size, short, want int }{{224, 0, 256}, {64, 0, 73}, {32, 0, 37}, {299, 0, 342}, {224, 232, 232}} {
		if got := (Resize{Mode: ResizeShortSideCrop, Short: tc.short}).ShortSide(tc.size); got != tc.want {
			t.Errorf("size %d, short %d: %d, want %d", tc.size, tc.short, got, tc.want)
		}
	}
	for _, bad := range []Resize{{Mode: "crop"}, {Mode: ResizeShortSideCrop, Short: 100}, {Mode: ResizeSquash, Short: 256}} {
		if err := bad.Check(224); err == nil {
			t.Errorf("%+v accepted for side 224", bad)
		}
	}
}

// The centre crop of a tall image reads only the rows it needs: memory in
// proportion to the crop, not to the image resized whole (a 300×30 000
// image, resized whole at 256 on its short side, would be 256×25 600).
func TestShortSideCropOfATallImageHoldsTheCropOnly(t *testing.T) {
	tall := image.NewNRGBA(image.Rect(0, 0, 300, 30000))
	var out *image.NRGBA
	if n := allocated(func() { out = shortSideCrop(tall, 224, 256) }); n > 2<<20 {
		t.Errorf("allocated %.1f MiB, want under 2", float64(n)/(1<<20))
	}
	if out.Bounds().Dx() != 224 || out.Bounds().Dy() != 224 {
		t.Errorf("crop of %v", out.Bounds())
	}
}
