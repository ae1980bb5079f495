package data

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// allocated returns the bytes that f allocates (the heap's running total,
// so freed memory counts too).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// idxBytes is an IDX file of unsigned bytes with the given dimensions and
// payload.
func idxBytes(dims []int, payload []byte) []byte {
	b := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, payload...)
}

func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

// lowNoise is n bytes of 2-bit noise: gzip shrinks them about 4×.
func lowNoise(n int) []byte {
	b := noise(n)
	for i := range b {
		b[i] &= 3
	}
	return b
}

// noise is n incompressible bytes.
func noise(n int) []byte {
	b := make([]byte, n)
	x := uint32(1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func wantError(t *testing.T, name string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one mentioning %q", name, parts)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not mention %q", name, err, p)
		}
	}
}

func TestIDXHeaderClaimingMoreThanFileHoldsIsRefusedBeforeAllocating(t *testing.T) {
	dir := t.TempDir()
	labels := writeFile(t, dir, "labels", idxBytes([]int{60000}, make([]byte, 60000)))
	// 64 MiB of zeros, honestly there, in a 64 KiB gzip: a bomb.
	bomb := gzipped(t, idxBytes([]int{1 << 16, 32, 32}, make([]byte, 1<<26)))
	for _, tc := range []struct {
		name   string
		images []byte
		want   []string
		most   uint64 // bytes it may allocate
	}{
		{"raw file shorter than its header claims", idxBytes([]int{60000, 28, 28}, make([]byte, 1000)), []string{"need 47040000 bytes", "holds 1000"}, 1 << 20},
		{"gzip claiming far more than it can inflate to", gzipped(t, idxBytes([]int{60000, 28, 28}, make([]byte, 1000))), []string{"decompression bomb"}, 1 << 20},
		{"consistent gzip bomb", bomb, []string{"decompression bomb"}, 1 << 20},
		{"more values than any IDX file may hold", idxBytes([]int{1 << 16, 1 << 16, 1 << 16}, nil), []string{"exceed the limit"}, 1 << 20},
		{"gzip cut short", gzipped(t, idxBytes([]int{60000, 5, 5}, noise(60000*25)))[:100000], []string{"truncated"}, 1 << 20}, // an honest claim (6 MB of images), a file cut short
		// A whole gzip stream whose content stops one byte short of a claim
		// it could honestly hold (1.6 MB of 2-bit noise in about 0.4 MB:
		// 4 bytes a value were spent before the counting pass).
		{"gzip one byte short", gzipped(t, idxBytes([]int{2000, 28, 28}, lowNoise(2000*28*28-1))), []string{"need 1568000 bytes", "holds 1567999"}, 1 << 20},
		{"gzip with a byte past its claim", gzipped(t, idxBytes([]int{2000, 28, 28}, lowNoise(2000*28*28+1))), []string{"trailing data"}, 1 << 20},
	} {
		p := writeFile(t, dir, strings.ReplaceAll(tc.name, " ", "-"), tc.images)
		var err error
		n := allocated(func() { _, err = LoadIDX("t", p, labels, nil) })
		wantError(t, tc.name, err, append(tc.want, p)...)
		// The labels (60 000 bytes, read first) and 64 KiB buffers; never
		// more images than the file can hold.
		if n > tc.most {
			t.Errorf("%s: allocated %d bytes before refusing", tc.name, n)
		}
	}
}

func TestIDXLabelFileMustMatchTheImagesBeforeEitherIsRead(t *testing.T) {
	dir := t.TempDir()
	images := writeFile(t, dir, "images", idxBytes([]int{5000, 28, 28}, make([]byte, 5000*784)))
	for _, tc := range []struct {
		name   string
		labels []byte
		want   string
	}{
		{"fewer labels", idxBytes([]int{4999}, make([]byte, 4999)), "labels for 5000 images"},
		{"labels as images", idxBytes([]int{5000, 1, 1}, make([]byte, 5000)), "labels for 5000 images"},
	} {
		p := writeFile(t, dir, tc.name, tc.labels)
		var err error
		n := allocated(func() { _, err = LoadIDX("t", images, p, nil) })
		wantError(t, tc.name, err, tc.want, p)
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes before refusing", tc.name, n)
		}
	}
}

func TestIDXTrainAndTestPartsMustDescribeOneProblem(t *testing.T) {
	part := func(dir, prefix string, n, h, w int, labels []byte) {
		writeFile(t, dir, prefix+"-images-idx3-ubyte", idxBytes([]int{n, h, w}, make([]byte, n*h*w)))
		writeFile(t, dir, prefix+"-labels-idx1-ubyte", idxBytes([]int{n}, labels))
	}
	for _, tc := range []struct {
		name       string
		testH      int
		testLabels []byte
		want       string // "" for no error
	}{
		{"same shape and classes", 3, []byte{0, 1, 2}, ""},
		{"test part without the last class", 3, []byte{0, 1, 1}, ""},
		{"test part of another shape", 4, []byte{0, 1, 2}, "shape [1 3 3], the test part's [1 4 3]"},
		{"test part with a class the training part lacks", 3, []byte{0, 1, 3}, "label 3"},
	} {
		dir := t.TempDir()
		part(dir, "train", 3, 3, 3, []byte{0, 1, 2})
		part(dir, "t10k", 3, tc.testH, 3, tc.testLabels)
		tr, te, err := Open(dir, Options{})
		if tc.want != "" {
			wantError(t, tc.name, err, tc.want, dir)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(tr.Classes, te.Classes) || len(te.Classes) != 3 {
			t.Errorf("%s: classes %v and %v", tc.name, tr.Classes, te.Classes)
		}
	}
}

func TestImageFolderPartsWithOtherClassesAreRefused(t *testing.T) {
	dir := t.TempDir()
	img := pngBytes(t, 4, 4)
	for _, p := range []string{"train/cat/0.png", "train/dog/0.png", "test/cat/0.png", "test/cow/0.png"} {
		writeFile(t, dir, p, img)
	}
	_, _, err := Open(dir, Options{ImageSize: 4})
	wantError(t, "classes differ", err, "classes [cat dog], the test part [cat cow]", dir)
}

// TestReadersRefuseStreamsAndOversizedFiles: /dev/zero, and files one byte
// past each reader's limit (sparse, so they take no disk space).
func TestReadersRefuseStreamsAndOversizedFiles(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := t.TempDir()
	link := func(name string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sparse := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Skipf("sparse files: %v", err)
		}
		return p
	}
	labels := writeFile(t, dir, "labels", idxBytes([]int{3}, []byte{0, 1, 1}))
	for _, tc := range []struct {
		name string
		load func() error
		want string
	}{
		{"npy stream", func() error { _, err := LoadNPY(link("z.npy")); return err }, "not a regular file"},
		{"npz stream", func() error { _, err := OpenNPZ(link("z.npz")); return err }, "not a regular file"},
		{"csv stream", func() error { _, err := LoadCSV(link("z.csv"), ""); return err }, "not a regular file"},
		{"sklearn csv stream", func() error { _, err := LoadSklearnCSV(link("s.csv"), "s", true); return err }, "not a regular file"},
		{"idx stream", func() error { _, err := LoadIDX("t", link("z-idx"), labels, nil); return err }, "not a regular file"},
		{"cifar stream", func() error {
			link("cifar/data_batch_1.bin")
			_, _, err := LoadCIFAR(filepath.Join(dir, "cifar"))
			return err
		}, "not a regular file"},
		{"image stream", func() error {
			link("imgs/a/0.png")
			_, err := LoadImageFolder(filepath.Join(dir, "imgs"), 4, 1)
			return err
		}, "leads to /dev/zero, outside"}, // a fifo inside: read_unix_test.go
		{"any file", func() error { _, err := ReadFileLimit("/dev/zero", 10); return err }, "not a regular file"},
		{"a folder", func() error { _, err := LoadNPY(dir); return err }, "is a folder"},
		{"npy past its limit", func() error { _, err := LoadNPY(sparse("big.npy", maxNPYBytes+1)); return err }, "more than the 1 GiB"},
		{"csv past its limit", func() error { _, err := LoadCSV(sparse("big.csv", maxCSVBytes+1), ""); return err }, "more than the 256 MiB"},
		{"idx past its limit", func() error { _, err := LoadIDX("t", sparse("big-idx", maxIDXFileBytes+1), labels, nil); return err }, "more than the"},
		{"cifar past its limit", func() error {
			sparse("bigcifar/data_batch_1.bin", (maxCIFARBytes/3073+1)*3073)
			_, _, err := LoadCIFAR(filepath.Join(dir, "bigcifar"))
			return err
		}, "more than the 200 MiB"},
		{"image past its limit", func() error {
			sparse("bigimgs/a/0.png", maxImageFileBytes+1)
			_, err := LoadImageFolder(filepath.Join(dir, "bigimgs"), 4, 1)
			return err
		}, "more than the 64 MiB"},
	} {
		var err error
		n := allocated(func() { err = tc.load() })
		wantError(t, tc.name, err, tc.want)
		if err != nil && !strings.Contains(err.Error(), dir) && tc.name != "any file" {
			t.Errorf("%s: error %q does not name the file", tc.name, err)
		}
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes before refusing", tc.name, n)
		}
	}
}

func TestStreamLimitsRefuseRatherThanCut(t *testing.T) {
	_, err := io.ReadAll(&limitedReader{r: strings.NewReader("0123456789ab"), left: 10, limit: 10})
	wantError(t, "limited", err, "more than 10 bytes")
	if b, err := io.ReadAll(&limitedReader{r: strings.NewReader("0123456789"), left: 10, limit: 10}); err != nil || len(b) != 10 {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
	_, err = io.ReadAll(&lineLimitReader{r: strings.NewReader("a,b\n1,2\n" + strings.Repeat("x", 9)), max: 8})
	wantError(t, "line", err, "a line longer than 8 bytes")
	if _, err := io.ReadAll(&lineLimitReader{r: strings.NewReader(strings.Repeat("12345678\n", 100)), max: 8}); err != nil {
		t.Errorf("short lines: %v", err)
	}
}

func TestCSVCellsAreStrictDecimalNumbersPlacedByLineAndColumn(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"NaN", "a,b,y\n1,2,0\n3,NaN,1\n", []string{"line 3, column 2 (\"b\")", `"NaN" is not a finite number`}},
		{"nan lower case", "a,b,y\n1,nan,0\n", []string{"line 2, column 2", "not a finite number"}},
		{"infinity", "a,b,y\n-Inf,1,0\n", []string{"line 2, column 1 (\"a\")", "not a finite number"}},
		{"underscores", "a,b,y\n1_000,1,0\n", []string{"line 2, column 1", `"1_000" is not a decimal number`}},
		{"hexadecimal", "a,b,y\n0x1p-2,1,0\n", []string{"line 2, column 1", "not a decimal number"}},
		{"beyond float32", "a,b,y\n1,1e39,0\n", []string{"line 2, column 2", "beyond float32's range"}},
		{"empty cell", "a,b,y\n1,,0\n", []string{"line 2, column 2", "empty cell"}},
		{"line after a quoted newline", "a,b,y\n1,2,\"x\ny\"\n3,NaN,z\n", []string{"line 4, column 2", "not a finite number"}},
	} {
		p := writeFile(t, dir, tc.name+".csv", []byte(tc.body))
		_, err := LoadCSV(p, "")
		wantError(t, tc.name, err, append(tc.want, p)...)
	}
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"sklearn NaN", "2,2,a,b\n1,2,0\n3,NaN,1\n", []string{"line 3, column 2", "not a finite number"}},
		{"sklearn underscore label", "1,1,a,b\n1,1_0\n", []string{"line 2, column 2", "not a class index"}},
	} {
		p := writeFile(t, dir, tc.name+".csv", []byte(tc.body))
		_, err := LoadSklearnCSV(p, "s", true)
		wantError(t, tc.name, err, append(tc.want, p)...)
	}
	// What strict parsing still accepts.
	for _, s := range []string{"1", "-1.5", "+.5", "5.", "1e-3", "2.5E+10", "0"} {
		if _, err := parseNumber(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// npzWith builds an .npz whose members are raw (already compressed when
// method is Deflate) with the sizes declared as given.
type rawMember struct {
	name         string
	method       uint16
	body         []byte // as stored
	uncompressed uint64 // declared
	crc          uint32
}

func npzWith(t testing.TB, members ...rawMember) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: m.name, Method: m.method, CRC32: m.crc,
			CompressedSize64: uint64(len(m.body)), UncompressedSize64: m.uncompressed})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(m.body)
	}
	zw.Close()
	return buf.Bytes()
}

func deflated(b []byte) []byte { return deflatedAt(b, flate.BestCompression) }

func deflatedAt(b []byte, level int) []byte {
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, level)
	fw.Write(b)
	fw.Close()
	return buf.Bytes()
}

func npyBytes(t testing.TB, shape []int, data []float32) []byte {
	var buf bytes.Buffer
	if err := EncodeNPY(&buf, shape, data); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestNPZMembersAreCheckedByNameAndDeclaredSizeBeforeReading(t *testing.T) {
	dir := t.TempDir()
	big := npyBytes(t, []int{1 << 24}, make([]float32, 1<<24)) // 64 MiB of zeros
	small := npyBytes(t, []int{2}, []float32{1, 2})
	p := writeFile(t, dir, "w.npz", npzWith(t,
		rawMember{"bomb.npy", zip.Deflate, deflated(big), uint64(len(big)), crc32.ChecksumIEEE(big)},
		rawMember{"liar.npy", zip.Deflate, deflated(small), 900 << 20, crc32.ChecksumIEEE(small)},
		rawMember{"huge.npy", zip.Deflate, deflated(small), 2 << 30, crc32.ChecksumIEEE(small)},
		rawMember{"ok.npy", zip.Store, small, uint64(len(small)), crc32.ChecksumIEEE(small)},
	))
	var z *NPZ
	var err error
	if n := allocated(func() { z, err = OpenNPZ(p) }); err != nil || n > 1<<20 {
		t.Fatalf("open: %v, %d bytes allocated", err, n)
	}
	defer z.Close()
	if got := z.Names(); !slices.Equal(got, []string{"bomb", "huge", "liar", "ok"}) || !z.Has("ok") || z.Has("nope") {
		t.Errorf("names %v", got)
	}
	for _, tc := range []struct{ name, want string }{
		{"bomb", "zip bomb"},
		{"liar", "zip bomb"},
		{"huge", "more than the 1 GiB limit"},
		{"nope", "no array nope (holds bomb, huge, liar, ok)"},
	} {
		var err error
		n := allocated(func() { _, err = z.Array(tc.name) })
		wantError(t, tc.name, err, tc.want, p)
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes before refusing", tc.name, n)
		}
	}
	if shape, err := z.Shape("ok"); err != nil || !slices.Equal(shape, []int{2}) {
		t.Errorf("shape %v, %v", shape, err)
	}
	if a, err := z.Array("ok"); err != nil || !slices.Equal(a.Data, []float32{1, 2}) {
		t.Errorf("ok: %v, %v", a, err)
	}
	// A compressed member that stops short of what its header and the
	// archive's directory claim, or runs past it, is refused before its
	// array is allocated (a counting pass first).
	vals := make([]float32, 1<<20) // 4 MiB that deflate shrinks about 10×
	for i, b := range lowNoise(len(vals)) {
		vals[i] = float32(b)
	}
	full := npyBytes(t, []int{len(vals)}, vals)
	short := full[:len(full)-4]
	long := append(slices.Clone(full), 0, 0, 0, 0)
	r := writeFile(t, dir, "short.npz", npzWith(t,
		rawMember{"short.npy", zip.Deflate, deflatedAt(short, flate.BestSpeed), uint64(len(full)), crc32.ChecksumIEEE(short)},
		rawMember{"long.npy", zip.Deflate, deflatedAt(long, flate.BestSpeed), uint64(len(full)), crc32.ChecksumIEEE(long)},
	))
	zs, err := OpenNPZ(r)
	if err != nil {
		t.Fatal(err)
	}
	defer zs.Close()
	for _, tc := range []struct{ name, want string }{
		{"short", "of 1048576 values: unexpected EOF"},
		{"long", "decompresses to other than its declared size"},
	} {
		var err error
		n := allocated(func() { _, err = zs.Array(tc.name) })
		wantError(t, tc.name, err, tc.want, r)
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes before refusing (the array: %d)", tc.name, n, 4*len(vals))
		}
	}
	// A member whose bytes do not match its checksum.
	q := writeFile(t, dir, "crc.npz", npzWith(t, rawMember{"x.npy", zip.Store, small, uint64(len(small)), 1}))
	zc, err := OpenNPZ(q)
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	_, err = zc.Array("x")
	wantError(t, "checksum", err, "checksum", q)
}

// npyHead is a .npy preamble and header (format 1.0) for a shape, with no
// payload.
func npyHead(descr, shape string) []byte {
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }\n", descr, shape)
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	return append(b, h...)
}

func TestNPYHeaderClaimingMoreThanFileHoldsIsRefusedBeforeAllocating(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"256 MiB claimed, 64 bytes held", append(npyHead("<f4", "(67108864,)"), make([]byte, 64)...), "needs 268435456 bytes, file holds 64"},
		{"more than any .npy may hold", npyHead("<f8", "(65536, 65536)"), "exceeds the limit"},
		{"header longer than the file", npyHead("<f4", "(2,)")[:30], "header of"},
	} {
		p := writeFile(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".npy", tc.b)
		var err error
		n := allocated(func() { _, err = LoadNPY(p) })
		wantError(t, tc.name, err, tc.want, p)
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes before refusing", tc.name, n)
		}
	}
}

func pngBytes(t testing.TB, w, h int) []byte {
	var buf bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// withSize rewrites a PNG's IHDR to claim w×h pixels, with a valid CRC.
func withSize(b []byte, w, h uint32) []byte {
	b = slices.Clone(b)
	// 8-byte signature, then the IHDR chunk: length, "IHDR", width, height, …
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

func TestImageClaimingHugeDimensionsIsRefusedBeforeDecoding(t *testing.T) {
	dir := t.TempDir()
	var gifBuf bytes.Buffer
	gif.Encode(&gifBuf, image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White}), nil)
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"100 000 × 100 000 grey", withSize(pngBytes(t, 4, 4), 100000, 100000), "more than the 64 MiB limit"},
		{"9000 × 9000 grey", withSize(pngBytes(t, 4, 4), 9000, 9000), "more than the 64 MiB limit"},
		{"a GIF named .png", gifBuf.Bytes(), "want PNG or JPEG"},
		{"not an image", []byte("hello"), "not a readable image"},
		{"PNG cut short", pngBytes(t, 64, 64)[:60], "png"},
	} {
		root := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		p := writeFile(t, root, "a/0.png", tc.b)
		writeFile(t, root, "b/0.png", pngBytes(t, 4, 4))
		var err error
		n := allocated(func() { _, err = LoadImageFolder(root, 4, 1) })
		wantError(t, tc.name, err, tc.want, p)
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes before refusing", tc.name, n)
		}
	}
}

// Options that would split nonsensically or allocate without bound (a
// model file's recorded options can be anything) are refused.
func TestOpenRefusesOptionsOutsideTheirRange(t *testing.T) {
	for _, tc := range []struct {
		name string
		ref  string
		opt  Options
		want string
	}{
		{"held-out fraction NaN", "gmm", Options{TestFrac: math.NaN()}, "held-out fraction NaN"},
		{"held-out fraction 1", "gmm", Options{TestFrac: 1}, "want a value in (0, 1)"},
		{"held-out fraction negative", fixture("csv", "tabular.csv"), Options{TestFrac: -0.5}, "want a value in (0, 1)"},
		{"image side 100 000", fixture("images"), Options{ImageSize: 100000}, "want a size in [1, 4096]"},
	} {
		_, _, err := Open(tc.ref, tc.opt)
		wantError(t, tc.name, err, tc.want)
	}
}

// A CSV's header names the features (all columns but the label's).
func TestCSVHeaderNamesTheFeatures(t *testing.T) {
	p := writeFile(t, t.TempDir(), "f.csv", []byte("a,kind,b\n1,x,2\n3,y,4\n"))
	d, err := LoadCSV(p, "kind")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Features, []string{"a", "b"}) || !slices.Equal(d.X, []float32{1, 2, 3, 4}) {
		t.Errorf("features %v, values %v", d.Features, d.X)
	}
}

// A PNG cut short after its header says so once: "png: …", not "png: png: …".
func TestTruncatedPNGNamesItsFormatOnce(t *testing.T) {
	b := pngBytes(t, 8, 8)
	_, err := decodeImage(bytes.NewReader(b[:len(b)-20]))
	if err == nil || !strings.HasPrefix(err.Error(), "png: ") || strings.Contains(err.Error(), "png: png:") {
		t.Errorf("truncated PNG: %v", err)
	}
}
