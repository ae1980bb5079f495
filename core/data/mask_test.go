package data

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"slices"
	"testing"
)

// maskPNG is a w×h greyscale PNG with value v in the rectangle in and 0
// elsewhere.
func maskPNG(t testing.TB, w, h int, in image.Rectangle, v uint8) []byte {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := in.Min.Y; y < in.Max.Y; y++ {
		for x := in.Min.X; x < in.Max.X; x++ {
			img.SetGray(x, y, color.Gray{v})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// maskOf is a size×size mask with 1 in the rectangle in.
func maskOf(size int, in image.Rectangle) []float32 {
	m := make([]float32, size*size)
	for y := in.Min.Y; y < in.Max.Y; y++ {
		for x := in.Min.X; x < in.Max.X; x++ {
			m[y*size+x] = 1
		}
	}
	return m
}

// An image folder with .masks reads each image's mask beside it: any
// pixel that is not black is in the mask (value 1 or 255 alike), resized
// by nearest neighbour (an 8×8 mask's 2×2 block at (2, 4) is the 4×4
// mask's pixel (1, 2)); .masks and any other hidden folder are no class.
func TestImageFolderReadsTheMasksBesideIt(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/0.png", "a/1.png", "b/0.png"} {
		writeFile(t, root, p, pngBytes(t, 8, 8))
	}
	writeFile(t, root, ".ipynb_checkpoints/x.png", pngBytes(t, 8, 8))
	writeFile(t, root, ".masks/a/0.png", maskPNG(t, 8, 8, image.Rect(4, 2, 6, 4), 255))
	writeFile(t, root, ".masks/a/1.png", maskPNG(t, 8, 8, image.Rect(0, 0, 8, 8), 1))
	writeFile(t, root, ".masks/b/0.png", maskPNG(t, 8, 8, image.Rect(0, 0, 0, 0), 0))
	d, err := LoadImageFolder(root, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Classes, []string{"a", "b"}) || d.Len() != 3 {
		t.Fatalf("classes %v, %d samples", d.Classes, d.Len())
	}
	want := slices.Concat(maskOf(4, image.Rect(2, 1, 3, 2)), maskOf(4, image.Rect(0, 0, 4, 4)), maskOf(4, image.Rectangle{}))
	if !slices.Equal(d.Masks, want) {
		t.Errorf("masks %v, want %v", d.Masks, want)
	}
	// Split carries them with their samples.
	tr, te, err := Open(root, Options{ImageSize: 4, TestFrac: 1.0 / 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Dataset{tr, te} {
		for i, row := range s.Rows {
			if !slices.Equal(s.Masks[i*16:(i+1)*16], want[row*16:(row+1)*16]) {
				t.Errorf("%s: sample %d (row %d) has another's mask", s.Name, i, row)
			}
		}
	}
	if s, err := Describe(root); err != nil || !s.Masks {
		t.Errorf("described as %+v (%v)", s, err)
	}
	if tr, _, err := Open(fixture("images"), Options{ImageSize: 4}); err != nil || tr.Masks != nil {
		t.Errorf("a folder without .masks: masks %v (%v)", tr.Masks, err)
	}
}

// A set with train/ and test/ keeps its masks in .masks/train/ and
// .masks/test/.
func TestImageFolderPartsReadTheirMasks(t *testing.T) {
	set := t.TempDir()
	for _, p := range []string{"train/a/0.png", "train/b/0.png", "test/a/0.png", "test/b/0.png"} {
		writeFile(t, set, p, pngBytes(t, 4, 4))
		writeFile(t, set, filepath.Join(".masks", p), maskPNG(t, 4, 4, image.Rect(0, 0, 1+len(p)%3, 1), 9))
	}
	tr, te, err := Open(set, Options{ImageSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	// "train/a/0.png" is 13 characters, "test/a/0.png" 12: rows 2 and 1 wide.
	if !slices.Equal(tr.Masks[:16], maskOf(4, image.Rect(0, 0, 2, 1))) || !slices.Equal(te.Masks[:16], maskOf(4, image.Rect(0, 0, 1, 1))) {
		t.Errorf("train masks %v, test masks %v", tr.Masks, te.Masks)
	}
}

// A mask that is missing, of another size than its image, no image, over
// the limits, or where no folder of masks can be is refused, naming the
// file and the problem.
func TestBadMasksAreRefusedByName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  []string
	}{
		{"missing", map[string][]byte{".masks/a/0.png": maskPNG(t, 4, 4, image.Rect(0, 0, 1, 1), 1)},
			[]string{filepath.Join("a", "1.png"), "no mask", filepath.Join(".masks", "a", "1.png")}},
		{"another size", map[string][]byte{".masks/a/0.png": maskPNG(t, 4, 4, image.Rectangle{}, 0), ".masks/a/1.png": maskPNG(t, 8, 4, image.Rectangle{}, 0)},
			[]string{filepath.Join(".masks", "a", "1.png"), "8×4", "4×4", filepath.Join("a", "1.png")}},
		{"not an image", map[string][]byte{".masks/a/0.png": []byte("mask"), ".masks/a/1.png": maskPNG(t, 4, 4, image.Rectangle{}, 0)},
			[]string{filepath.Join(".masks", "a", "0.png"), "not a readable image"}},
		{"huge", map[string][]byte{".masks/a/0.png": withSize(maskPNG(t, 4, 4, image.Rectangle{}, 0), 60000, 60000), ".masks/a/1.png": maskPNG(t, 4, 4, image.Rectangle{}, 0)},
			[]string{filepath.Join(".masks", "a", "0.png"), "60000×60000", "limit"}},
		{"masks a file", map[string][]byte{".masks": []byte("x")}, []string{".masks", "not a folder"}},
	} {
		root := t.TempDir()
		writeFile(t, root, "a/0.png", pngBytes(t, 4, 4))
		writeFile(t, root, "a/1.png", pngBytes(t, 4, 4))
		writeFile(t, root, "b/0.png", pngBytes(t, 4, 4))
		if _, ok := tc.files[".masks"]; !ok {
			writeFile(t, root, ".masks/b/0.png", maskPNG(t, 4, 4, image.Rectangle{}, 0))
		}
		for p, b := range tc.files {
			writeFile(t, root, p, b)
		}
		_, err := LoadImageFolder(root, 4, 1)
		wantError(t, tc.name, err, tc.want...)
	}
}

// decodeMask never panics, allocates no more than an image's limits allow,
// and gives size×size values of 0 or 1.
func FuzzDecodeMask(f *testing.F) {
	f.Add(maskPNG(f, 5, 3, image.Rect(1, 1, 3, 2), 200))
	f.Add(withSize(maskPNG(f, 3, 2, image.Rectangle{}, 0), 1<<20, 1<<20))
	f.Add(greyPNG(2, 3000, 7))
	f.Add(handJPEG(17, 30, []byte{0x11, 0x11, 0x11, 0x11}, false, true))
	f.Fuzz(func(t *testing.T, b []byte) {
		size := 1 + len(b)%224
		var m []float32
		var err error
		n := allocated(func() { m, _, err = decodeMask(bytes.NewReader(b), size, Resize{}) })
		if err != nil {
			return
		}
		if len(m) != size*size || slices.ContainsFunc(m, func(v float32) bool { return v != 0 && v != 1 }) {
			t.Fatalf("a mask of %d values, want %d of 0 or 1", len(m), size*size)
		}
		if n > maxJPEGDecodeBytes+maxImageBytes {
			t.Fatalf("decoding a mask allocated %d MiB", n>>20)
		}
	})
}
