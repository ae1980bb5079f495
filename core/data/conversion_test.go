package data

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A folder's train/ and test/ parts are counted as one: the sizes its
// files come in, from the smallest to the largest, and the grey ones made
// RGB for a model of 3 channels; at Open's defaults the text says that no
// one sized the read.
func TestAFolderSaysHowItsFilesBecameItsSamples(t *testing.T) {
	root := t.TempDir()
	write := func(part, class, name string, img image.Image) {
		dir := filepath.Join(root, part, class)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, part := range []string{"train", "test"} {
		for _, class := range []string{"a", "b"} {
			write(part, class, "rgb.png", image.NewNRGBA(image.Rect(0, 0, 100, 80)))
		}
	}
	write("train", "a", "grey.png", image.NewGray(image.Rect(0, 0, 40, 30)))
	write("test", "b", "big.png", image.NewNRGBA(image.Rect(0, 0, 320, 240)))

	tr, te, err := Open(root, Options{ImageSize: 16, Channels: 3})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Conversion != te.Conversion {
		t.Fatal("the parts count their files apart")
	}
	c := tr.Conversion
	if c.Files != 6 || c.Sizes != 3 || c.Smallest != image.Pt(40, 30) || c.Largest != image.Pt(320, 240) || c.Grey != 1 || c.Colour != 5 {
		t.Errorf("counted %+v", *c)
	}
	want := "images of 3 sizes, from 40×30 to 320×240 → 16×16: squashed to 16×16 (Lanczos, aspect not kept); 1 of 6 files in grey copied to R, G and B; the others RGB as stored; pixel values scaled to [0, 1]"
	if got := c.String(); got != want {
		t.Errorf("said %q\nwant  %q", got, want)
	}
	tr, _, err = Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Conversion.String(); !strings.Contains(got, "5 of 6 files in colour made grey") || !strings.HasSuffix(got, "(28×28 grey: the default for a folder no model sized)") {
		t.Errorf("at the defaults: %q", got)
	}
}
