package data

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/disintegration/imaging"
)

// pngChunk is a PNG chunk of type typ holding data, with its CRC.
func pngChunk(typ string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(append(b, typ...), data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// greyPNG is a w×h 8-bit grey PNG, every pixel v, written by hand: the
// same rows compressed once and repeated (deflate blocks flushed to a byte
// boundary concatenate), so that 67 million pixels take milliseconds and
// about 130 KB.
func greyPNG(w, h int, v byte) []byte {
	row := append([]byte{0}, bytes.Repeat([]byte{v}, w)...) // filter byte: none
	per := max(1, (1<<20)/len(row))                         // rows a block
	deflated := func(rows int) []byte {
		var buf bytes.Buffer
		fw, _ := flate.NewWriter(&buf, flate.BestCompression)
		fw.Write(bytes.Repeat(row, rows))
		fw.Flush()
		return buf.Bytes()
	}
	z := []byte{0x78, 0xda}
	sum := adler32.New()
	block, full := deflated(per), bytes.Repeat(row, per)
	for range h / per {
		z = append(z, block...)
		sum.Write(full)
	}
	if rest := h % per; rest > 0 {
		z = append(z, deflated(rest)...)
		sum.Write(bytes.Repeat(row, rest))
	}
	z = append(z, 3, 0) // a final, empty block
	z = sum.Sum(z)
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = append(binary.BigEndian.AppendUint32(ihdr, uint32(h)), 8, 0, 0, 0, 0) // 8-bit grey
	out := append([]byte("\x89PNG\r\n\x1a\n"), pngChunk("IHDR", ihdr)...)
	out = append(out, pngChunk("IDAT", z)...)
	return append(out, pngChunk("IEND", nil)...)
}

func jpegSegment(marker byte, data []byte) []byte {
	return append([]byte{0xff, marker, byte((len(data) + 2) >> 8), byte(len(data) + 2)}, data...)
}

// handJPEG is a w×h JPEG whose components have the sampling factors hv
// (0x11, 0x22, …), every coefficient zero: one scan in which each block's
// DC difference (and, baseline, its end of block) is a 1-bit Huffman code.
// A progressive one stops after its DC scan, which image/jpeg decodes as
// it would a full one. scan false stops after the frame header (which is
// all image.DecodeConfig reads of a JFIF file). Four components get the
// Adobe segment image/jpeg needs for them.
func handJPEG(w, h int, hv []byte, progressive, scan bool) []byte {
	out := append([]byte{0xff, 0xd8}, jpegSegment(0xe0, []byte("JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"))...)
	if len(hv) == 4 {
		out = append(out, jpegSegment(0xee, []byte("Adobe\x00\x64\x00\x00\x00\x00\x00"))...)
	}
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), byte(len(hv))}
	for i, s := range hv {
		sof = append(sof, byte(i+1), s, 0)
	}
	marker := byte(0xc0)
	if progressive {
		marker = 0xc2
	}
	out = append(out, jpegSegment(marker, sof)...)
	if !scan {
		return out
	}
	oneCode := append([]byte{1}, make([]byte, 15)...) // one code of 1 bit, for symbol 0
	out = append(out, jpegSegment(0xc4, append(append([]byte{0x00}, oneCode...), 0))...)
	out = append(out, jpegSegment(0xc4, append(append([]byte{0x10}, oneCode...), 0))...)
	sos := []byte{byte(len(hv))}
	for i := range hv {
		sos = append(sos, byte(i+1), 0x00)
	}
	bitsPerBlock := 1
	if progressive {
		sos = append(sos, 0, 0, 0) // DC only
	} else {
		sos, bitsPerBlock = append(sos, 0, 63, 0), 2
	}
	out = append(out, jpegSegment(0xda, sos)...)
	var f jpegFrame
	for _, s := range hv {
		f.hv = append(f.hv, [2]int{int(s >> 4), int(s & 15)})
	}
	if len(hv) == 1 {
		f.hv[0] = [2]int{1, 1}
	}
	blocks := f.decodeBytes(image.Config{Width: w, Height: h}) / 64
	out = append(out, make([]byte, int(blocks)*bitsPerBlock/8+16)...)
	return append(out, 0xff, 0xd9)
}

// An image of a shape no picture has — a side past 65 535 pixels, one side
// over 1 000 times the other — or a JPEG whose decoder would keep more than
// 256 MiB of buffers is refused from its header, naming the file, its size
// and the problem, before anything is decoded or resized. Each of these
// fits the 64 MiB pixel limit; before, the 1×67 000 000 PNG asked 7.5 GB
// (the resize widened every row first), the 67 000 000×1 6.4 GB (filter
// weights), the 1×1 000 000 one 228 MB at size 28 and 1.7 GB at 224, and
// the JPEGs 350 to 480 MB.
func TestImageOfNoPicturesShapeIsRefusedBeforeDecoding(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		b    []byte
		ext  string
		size int
		want []string
	}{
		{"1×67 000 000 grey PNG", greyPNG(1, 67_000_000, 0), "png", 28, []string{"png of 1×67000000 pixels", "a side longer than 65535 pixels"}},
		{"67 000 000×1 grey PNG", greyPNG(67_000_000, 1, 0), "png", 28, []string{"png of 67000000×1 pixels", "a side longer than 65535 pixels"}},
		{"1×1 000 000 grey PNG at 28", greyPNG(1, 1_000_000, 0), "png", 28, []string{"png of 1×1000000 pixels", "a side longer than 65535 pixels"}},
		{"1×1 000 000 grey PNG at 224", greyPNG(1, 1_000_000, 0), "png", 224, []string{"png of 1×1000000 pixels", "a side longer than 65535 pixels"}},
		{"1×2 000 grey PNG", greyPNG(1, 2000, 0), "png", 28, []string{"png of 1×2000 pixels", "one side 2000 times the other", "1:1000 limit"}},
		{"progressive grey 8192×8192 JPEG", handJPEG(8192, 8192, []byte{0x11}, true, true), "jpg", 28, []string{"progressive jpeg of 8192×8192 pixels needs 320 MiB for the decoder's own buffers", "256 MiB limit"}},
		{"progressive CMYK 4096×4096 JPEG", handJPEG(4096, 4096, []byte{0x11, 0x11, 0x11, 0x11}, true, true), "jpg", 28, []string{"progressive jpeg of 4096×4096 pixels needs 384 MiB"}},
	} {
		root := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		writeFile(t, root, "a/0.png", pngBytes(t, 4, 4))
		p := writeFile(t, root, "b/0."+tc.ext, tc.b)
		var err error
		n := allocated(func() { _, err = LoadImageFolder(root, tc.size, 1) })
		wantError(t, tc.name, err, append(tc.want, p)...)
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes before refusing", tc.name, n)
		}
	}
}

// A long image within the limits (1:1 000, 3.6 megapixels) is read in
// little more than its own pixels: it is resized along its long side
// first, not widened to size×60 000 (54 MB at 224) on its way.
func TestLongImageIsReadInMemoryBoundedByItsPixels(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		w, h int
	}{{"60×60 000", 60, 60_000}, {"60 000×60", 60_000, 60}} {
		root := filepath.Join(dir, tc.name)
		writeFile(t, root, "a/0.png", pngBytes(t, 4, 4))
		writeFile(t, root, "b/0.png", greyPNG(tc.w, tc.h, 200))
		var d *Dataset
		var err error
		n := allocated(func() { d, err = LoadImageFolder(root, 224, 1) })
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// The decoded image (3.6 MB), the filter's weights along the long
		// side (about 96 bytes a source pixel: 5.8 MB), rows and the output.
		if n > 16<<20 {
			t.Errorf("%s: allocated %d MiB", tc.name, n>>20)
		}
		for _, v := range d.Sample(1) {
			if math.Abs(float64(v)-200.0/255) > 1e-2 {
				t.Fatalf("%s: a uniform image read as %g, want %g", tc.name, v, 200.0/255)
			}
		}
	}
}

// resizeImage allocates min(W, H)×size intermediate pixels, never
// max(W, H)×size, and resizes a picture as imaging.Resize does (the two
// orders differ by the rounding of the intermediate).
func TestResizeGoesAlongTheLongerSideFirst(t *testing.T) {
	tall := image.NewGray(image.Rect(0, 0, 50, 20000))
	var out *image.NRGBA
	// imaging.Resize would go through 224×20 000 (18 MB); the filter's
	// weights along the long side take 2 MB.
	if n := allocated(func() { out = resizeImage(tall, 224) }); n > 4<<20 {
		t.Errorf("allocated %d bytes", n)
	}
	if b := out.Bounds(); b.Dx() != 224 || b.Dy() != 224 {
		t.Errorf("resized to %v", b)
	}
	pic := image.NewGray(image.Rect(0, 0, 300, 400))
	for y := range 400 {
		for x := range 300 {
			pic.Pix[y*pic.Stride+x] = uint8((x*x/3 + y*y/4) / 1000)
		}
	}
	for _, size := range []int{28, 224, 500} {
		got, want := resizeImage(pic, size), imaging.Resize(pic, size, size, imaging.Lanczos)
		for i := range got.Pix {
			if d := int(got.Pix[i]) - int(want.Pix[i]); d < -2 || d > 2 {
				t.Fatalf("size %d: byte %d is %d, imaging.Resize's %d", size, i, got.Pix[i], want.Pix[i])
			}
		}
	}
}

// What decodeImage refuses a JPEG for is what image/jpeg allocates, read
// from the frame header: progressive or baseline, sampling factors, the
// MCU padding and the conversion of RGB and CMYK. A baseline JPEG as large
// as a progressive one that is refused passes.
func TestJPEGDecoderBuffersAreCountedFromItsFrameHeader(t *testing.T) {
	for _, tc := range []struct {
		name        string
		w, h        int
		hv          []byte
		progressive bool
	}{
		{"progressive grey", 1000, 700, []byte{0x11}, true},
		{"progressive 4:4:4", 1024, 1024, []byte{0x11, 0x11, 0x11}, true},
		{"progressive 4:2:0", 1001, 999, []byte{0x22, 0x11, 0x11}, true},
		{"progressive 4:1:1, padded", 33, 5000, []byte{0x41, 0x11, 0x11}, true},
		{"progressive CMYK", 800, 800, []byte{0x11, 0x11, 0x11, 0x11}, true},
		{"baseline 4:4:4", 1024, 1024, []byte{0x11, 0x11, 0x11}, false},
	} {
		b := handJPEG(tc.w, tc.h, tc.hv, tc.progressive, true)
		f, err := readJPEGFrame(bytes.NewReader(b))
		if err != nil || f.progressive != tc.progressive {
			t.Fatalf("%s: frame %+v, %v", tc.name, f, err)
		}
		cfg, _, _ := image.DecodeConfig(bytes.NewReader(b))
		var img image.Image
		n := allocated(func() { img, err = decodeImage(bytes.NewReader(b)) })
		if err != nil || img.Bounds().Dx() != tc.w || img.Bounds().Dy() != tc.h {
			t.Fatalf("%s: %v, %v", tc.name, img.Bounds(), err)
		}
		if est := f.decodeBytes(cfg); float64(n) > 1.02*float64(est)+(256<<10) || float64(n) < 0.9*float64(est) {
			t.Errorf("%s: allocated %d bytes, counted %d", tc.name, n, est)
		}
		if w := worstJPEGFrame(cfg.ColorModel).decodeBytes(cfg); w < f.decodeBytes(cfg) {
			t.Errorf("%s: the worst frame counts %d, this one %d", tc.name, w, f.decodeBytes(cfg))
		}
	}
	// The frame header alone: refused if progressive, decoded (and found
	// cut short) if baseline.
	for _, progressive := range []bool{true, false} {
		_, err := decodeImage(bytes.NewReader(handJPEG(8192, 8192, []byte{0x11}, progressive, false)))
		if refused := err != nil && strings.Contains(err.Error(), "decoder's own buffers"); refused != progressive {
			t.Errorf("progressive %v: %v", progressive, err)
		}
	}
}

// decodeImage, then the resize to a size, on anything: never an image past
// the limits, never a panic, and never more allocated than the decoder's
// bound (a JPEG's 256 MiB; a PNG's image, twice if interlaced) and the
// resize's intermediate image, filter weights and output.
func FuzzDecodeImage(f *testing.F) {
	f.Add(pngBytes(f, 3, 2))
	f.Add(withSize(pngBytes(f, 3, 2), 1<<20, 1<<20))
	f.Add(greyPNG(2, 3000, 7))
	f.Add(handJPEG(40, 9, []byte{0x22, 0x11, 0x11}, true, true))
	f.Add(handJPEG(17, 30, []byte{0x11, 0x11, 0x11, 0x11}, false, true))
	for _, p := range []string{"images/dark/0.png", "images/light/2.png"} {
		if b, err := os.ReadFile(fixture(p)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		size := 1 + len(b)%224
		var img image.Image
		var out *image.NRGBA
		var err error
		n := allocated(func() {
			if img, err = decodeImage(bytes.NewReader(b)); err == nil {
				out = resizeImage(img, size)
			}
		})
		if err != nil {
			return
		}
		r := img.Bounds()
		if int64(r.Dx())*int64(r.Dy()) > maxImageBytes || max(r.Dx(), r.Dy()) > maxImageSourceSide || max(r.Dx(), r.Dy()) > maxImageAspect*min(r.Dx(), r.Dy()) {
			t.Fatalf("decoded %v, beyond the limits", r)
		}
		if out.Bounds().Dx() != size || out.Bounds().Dy() != size {
			t.Fatalf("resized %v to %v, want %d×%d", r, out.Bounds(), size, size)
		}
		if n > maxJPEGDecodeBytes+maxImageBytes {
			t.Fatalf("decoding and resizing %v allocated %d MiB", r, n>>20)
		}
	})
}
