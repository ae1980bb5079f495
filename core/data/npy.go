package data

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Array is an n-dimensional array read from or written to .npy, as float32.
// Integer, boolean and float64 files are converted (integers of more than
// 24 bits lose precision; labels stay far below that).
type Array struct {
	Shape []int
	Data  []float32
}

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([<>|=])([fiub])(\d+)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// npyHeader is what a .npy header declares.
type npyHeader struct {
	shape []int
	dtype string // f4, f8, u1, i4, i8 or b1
	width int    // bytes per value
	total int64  // values
}

// readNPYHeader reads the preamble and header of a .npy stream of size
// bytes in all and checks that the payload the header declares is exactly
// what the stream holds after it, before anything else is read.
func readNPYHeader(r io.Reader, size int64) (npyHeader, error) {
	var h npyHeader
	pre := make([]byte, 12)
	if n, _ := io.ReadFull(r, pre[:10]); n < 10 || string(pre[:6]) != "\x93NUMPY" {
		return h, errors.New("npy: bad magic")
	}
	var hlen, off int64
	switch pre[6] {
	case 1:
		hlen, off = int64(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 2, 3:
		if _, err := io.ReadFull(r, pre[10:12]); err != nil {
			return h, errors.New("npy: truncated header")
		}
		hlen, off = int64(binary.LittleEndian.Uint32(pre[8:12])), 12
	default:
		return h, fmt.Errorf("npy: unsupported format version %d", pre[6])
	}
	if hlen > maxNPYHeader {
		return h, fmt.Errorf("npy: header of %d bytes, more than the %d allowed", hlen, maxNPYHeader)
	}
	if hlen > size-off {
		return h, fmt.Errorf("npy: header of %d bytes, file has %d after the preamble", hlen, max(size-off, 0))
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return h, fmt.Errorf("npy: header of %d bytes cut short: %w", hlen, err)
	}
	hs := string(hb)
	m := npyDescr.FindStringSubmatch(hs)
	if m == nil {
		return h, fmt.Errorf("npy: unsupported or missing dtype in header %q", strings.TrimSpace(hs))
	}
	if m[1] == ">" {
		return h, errors.New("npy: big-endian data is not supported")
	}
	if f := npyFortran.FindStringSubmatch(hs); f == nil || f[1] == "True" {
		return h, errors.New("npy: only C-order arrays are supported")
	}
	sm := npyShape.FindStringSubmatch(hs)
	if sm == nil {
		return h, errors.New("npy: header has no shape")
	}
	h.total = 1
	for _, f := range strings.Split(sm[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 {
			return h, fmt.Errorf("npy: bad dimension %q", f)
		}
		h.shape = append(h.shape, d)
		if d > 0 && h.total > maxNPYBytes/int64(d) {
			return h, fmt.Errorf("npy: shape %v exceeds the limit of %s", h.shape, bytesText(maxNPYBytes))
		}
		h.total *= int64(d)
	}
	h.dtype = m[2] + m[3]
	switch h.dtype {
	case "f4", "i4":
		h.width = 4
	case "f8", "i8":
		h.width = 8
	case "u1", "b1":
		h.width = 1
	default:
		return h, fmt.Errorf("npy: dtype %s is not supported (float32, float64, uint8, int32, int64, bool)", h.dtype)
	}
	if need, held := h.total*int64(h.width), size-off-hlen; need != held {
		return h, fmt.Errorf("npy: shape %v of %s needs %d bytes, file holds %d (truncated or trailing data?)", h.shape, h.dtype, need, held)
	}
	return h, nil
}

// readNPYPayload reads h's payload from r through a 64 KiB buffer,
// converting it into the array as it comes (only counting it when !keep),
// and checks that nothing follows.
func readNPYPayload(r io.Reader, h npyHeader, keep bool) (*Array, error) {
	a := &Array{Shape: h.shape}
	if keep {
		a.Data = make([]float32, h.total)
	}
	buf := make([]byte, min(int64(64<<10), h.total*int64(h.width)))
	per := len(buf) / max(h.width, 1)
	for done := 0; done < int(h.total); {
		k := min(per, int(h.total)-done)
		p := buf[:k*h.width]
		if n, err := io.ReadFull(r, p); err != nil {
			return nil, fmt.Errorf("npy: payload cut short after %d of %d values: %w", done+n/max(h.width, 1), h.total, zipErrors(err))
		}
		if !keep {
			done += k
			continue
		}
		x := a.Data[done : done+k]
		switch h.dtype {
		case "f4":
			for i := range x {
				x[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
			}
		case "f8":
			for i := range x {
				x[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:])))
			}
		case "u1", "b1":
			for i := range x {
				x[i] = float32(p[i])
			}
		case "i4":
			for i := range x {
				x[i] = float32(int32(binary.LittleEndian.Uint32(p[4*i:])))
			}
		case "i8":
			for i := range x {
				x[i] = float32(int64(binary.LittleEndian.Uint64(p[8*i:])))
			}
		}
		done += k
	}
	if err := atEOF(r); err != nil { // a gzip or zip stream's end checks its CRC
		return nil, fmt.Errorf("npy: %w", zipErrors(err))
	}
	return a, nil
}

// ParseNPY decodes a .npy file (format 1.0–3.0) holding float32, float64,
// uint8, bool, int32 or int64 values in C order.
func ParseNPY(b []byte) (*Array, error) {
	r := bytes.NewReader(b)
	h, err := readNPYHeader(r, int64(len(b)))
	if err != nil {
		return nil, err
	}
	return readNPYPayload(r, h, true)
}

// ReadNPY decodes a .npy stream of size bytes as it comes, converting the
// payload into the array a buffer at a time: what a caller holding no copy
// of the file's bytes uses (the artefact cache). The header is checked
// against size before the array is allocated.
func ReadNPY(r io.Reader, size int64) (*Array, error) {
	br := bufio.NewReader(r)
	h, err := readNPYHeader(br, size)
	if err != nil {
		return nil, err
	}
	return readNPYPayload(br, h, true)
}

// LoadNPY reads a .npy file: a regular file of at most 1 GiB
// (maxNPYBytes) whose header (at most 64 KiB) declares exactly the payload
// the file holds, checked before the payload is read.
func LoadNPY(path string) (*Array, error) {
	f, size, err := OpenRegular(path, maxNPYBytes)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	h, err := readNPYHeader(r, size)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	a, err := readNPYPayload(r, h, true)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return a, nil
}

// EncodeNPY writes a float32 array in .npy format 1.0.
func EncodeNPY(w io.Writer, shape []int, data []float32) error {
	n := 1
	for _, d := range shape {
		n *= d
	}
	if n != len(data) {
		return fmt.Errorf("npy: shape %v holds %d values, got %d", shape, n, len(data))
	}
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	st := strings.Join(dims, ", ")
	if len(shape) == 1 {
		st += ","
	}
	h := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", st)
	pad := 64 - (10+len(h)+1)%64
	h += strings.Repeat(" ", pad%64) + "\n"
	var buf bytes.Buffer
	buf.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&buf, binary.LittleEndian, uint16(len(h)))
	buf.WriteString(h)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	// A buffer at a time: an array of hundreds of MB is never doubled.
	out := make([]byte, 4*min(len(data), 16<<10))
	for lo := 0; lo < len(data); lo += len(out) / 4 {
		part := data[lo:min(lo+len(out)/4, len(data))]
		for i, v := range part {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
		if _, err := w.Write(out[:4*len(part)]); err != nil {
			return err
		}
	}
	return nil
}

// SaveNPY writes a float32 .npy file.
func SaveNPY(path string, shape []int, data []float32) error {
	var buf bytes.Buffer
	if err := EncodeNPY(&buf, shape, data); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return WriteFileAtomic(path, buf.Bytes())
}

// NPZ is an open .npz archive (members stored or deflated). Opening reads
// only the archive's directory; each array is read on request, by name,
// after its declared size is checked: at most 1 GiB (maxNPYBytes), and for
// a deflated member at most 64 times its compressed size (16 MiB for small
// members), so that a zip bomb is refused before it is inflated. A caller
// checks the names (Names, Has) and shapes (Shape) it expects before
// reading any array.
type NPZ struct {
	Path    string // for errors; "npz" for an archive in memory
	size    int64  // of the archive
	file    *os.File
	members map[string]*zip.File // by array name (the member name without .npy)
	names   []string
}

// OpenNPZ opens a .npz file (a regular file; no limit on the archive
// itself, whose members are checked one by one).
func OpenNPZ(path string) (*NPZ, error) {
	f, size, err := OpenRegular(path, math.MaxInt64)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	z, err := newNPZ(f, size, path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	z.file = f
	return z, nil
}

func newNPZ(ra io.ReaderAt, size int64, path string) (*NPZ, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, fmt.Errorf("npz: not a zip archive: %w", err)
	}
	z := &NPZ{Path: path, size: size, members: map[string]*zip.File{}}
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := z.members[name]; dup {
			return nil, fmt.Errorf("npz: two members hold array %s", name)
		}
		z.members[name] = f
		z.names = append(z.names, name)
	}
	if len(z.names) == 0 {
		return nil, errors.New("npz: no arrays")
	}
	slices.Sort(z.names)
	return z, nil
}

// Close closes the archive's file.
func (z *NPZ) Close() error {
	if z.file == nil {
		return nil
	}
	return z.file.Close()
}

// Names lists the archive's arrays, sorted.
func (z *NPZ) Names() []string { return slices.Clone(z.names) }

// Has reports whether the archive holds the array.
func (z *NPZ) Has(name string) bool { _, ok := z.members[name]; return ok }

// open opens a member after checking its declared size, and reads its
// header.
func (z *NPZ) open(name string) (io.ReadCloser, npyHeader, error) {
	f, ok := z.members[name]
	if !ok {
		return nil, npyHeader{}, fmt.Errorf("load %s: no array %s (holds %s)", z.Path, name, strings.Join(z.names, ", "))
	}
	fail := func(err error) (io.ReadCloser, npyHeader, error) {
		return nil, npyHeader{}, fmt.Errorf("load %s: array %s: %w", z.Path, name, err)
	}
	size := f.UncompressedSize64
	if size > maxNPYBytes {
		return fail(fmt.Errorf("declares %d bytes, more than the %s limit", size, bytesText(maxNPYBytes)))
	}
	off, err := f.DataOffset()
	if err != nil {
		return fail(err)
	}
	switch {
	case off < 0 || off > z.size || f.CompressedSize64 > uint64(z.size-off):
		return fail(fmt.Errorf("declares %d compressed bytes, more than the archive holds (truncated?)", f.CompressedSize64))
	case f.Method == zip.Store && size != f.CompressedSize64:
		return fail(fmt.Errorf("stored, but declares %d bytes in %d", size, f.CompressedSize64))
	case f.Method != zip.Store && size > max(f.CompressedSize64*maxGzipRatio, minGzipCapacity):
		return fail(fmt.Errorf("declares %d bytes from %d compressed, more than %d× (a zip bomb?)", size, f.CompressedSize64, maxGzipRatio))
	}
	rc, err := f.Open()
	if err != nil {
		return fail(err)
	}
	h, err := readNPYHeader(rc, int64(size))
	if err != nil {
		rc.Close()
		return fail(err)
	}
	return rc, h, nil
}

// Shape returns an array's shape, reading only its header.
func (z *NPZ) Shape(name string) ([]int, error) {
	rc, h, err := z.open(name)
	if err != nil {
		return nil, err
	}
	rc.Close()
	return h.shape, nil
}

// Array reads one array. A compressed member's length is known only by
// decompressing it: a counting pass first, so that a member cut short of
// its header's claim is refused before its array is allocated.
func (z *NPZ) Array(name string) (*Array, error) {
	if f := z.members[name]; f != nil && f.Method != zip.Store {
		rc, h, err := z.open(name)
		if err != nil {
			return nil, err
		}
		_, err = readNPYPayload(rc, h, false)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("load %s: array %s: %w", z.Path, name, err)
		}
	}
	rc, h, err := z.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	a, err := readNPYPayload(rc, h, true)
	if err != nil {
		return nil, fmt.Errorf("load %s: array %s: %w", z.Path, name, err)
	}
	return a, nil
}

// zipErrors words the errors of a zip member's stream at its end.
func zipErrors(err error) error {
	switch {
	case errors.Is(err, zip.ErrFormat):
		return errors.New("decompresses to other than its declared size (corrupt, or a zip bomb?)")
	case errors.Is(err, zip.ErrChecksum):
		return errors.New("checksum mismatch: the member is corrupt")
	}
	return err
}

// ParseNPZ decodes every array of a .npz archive held in memory, under the
// checks of NPZ.
func ParseNPZ(b []byte) (map[string]*Array, error) {
	z, err := newNPZ(bytes.NewReader(b), int64(len(b)), "npz")
	if err != nil {
		return nil, err
	}
	out := map[string]*Array{}
	for _, name := range z.names {
		if out[name], err = z.Array(name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NamedArray is one member of an .npz archive to write.
type NamedArray struct {
	Name  string
	Shape []int
	Data  []float32
}

// SaveNPZ writes float32 arrays into an uncompressed .npz archive, in order.
func SaveNPZ(path string, arrays []NamedArray) error {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, a := range arrays {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: zip.Store})
		if err != nil {
			return fmt.Errorf("save %s: %w", path, err)
		}
		if err := EncodeNPY(w, a.Shape, a.Data); err != nil {
			return fmt.Errorf("save %s: %s: %w", path, a.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return WriteFileAtomic(path, buf.Bytes())
}

// WriteFileAtomic writes the parts, one after another, through a temporary
// file and a rename, so that a crash never leaves a half-written file under
// path. It replaces a regular file but nothing else: a folder, a device
// such as /dev/null (which the rename would replace, for a user allowed
// to), a pipe.
func WriteFileAtomic(path string, parts ...[]byte) error {
	return WriteAtomic(path, func(f *os.File) error {
		for _, b := range parts {
			if _, err := f.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteAtomic is WriteFileAtomic for content that write produces: it
// writes into a temporary file beside path, then makes it path's.
func WriteAtomic(path string, write func(f *os.File) error) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("save %s: there is a %s there, not a regular file to replace", path, kindOf(st))
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := fillAndKeep(f, write, func() error { return os.Rename(f.Name(), path) }); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

// fillAndKeep is the tail of both atomic saves (WriteAtomic, WriteIn):
// write fills the temporary file f, which is made 0644, synced and closed;
// then keep puts it in place.
func fillAndKeep(f *os.File, write func(f *os.File) error, keep func() error) error {
	err := write(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = keep()
	}
	return err
}

// datasetFromArrays builds a dataset from x (n×… features) and y (n labels).
func datasetFromArrays(name string, x, y *Array) (*Dataset, error) {
	if len(x.Shape) < 1 || len(y.Shape) != 1 || x.Shape[0] != y.Shape[0] {
		return nil, fmt.Errorf("x has shape %v and y %v: want n×… and n", x.Shape, y.Shape)
	}
	shape := append([]int(nil), x.Shape[1:]...)
	switch len(shape) {
	case 1:
		shape = []int{shape[0], 1, 1}
	case 2:
		shape = []int{1, shape[0], shape[1]}
	case 3:
	default:
		return nil, fmt.Errorf("x has shape %v: want n×D, n×H×W or n×C×H×W", x.Shape)
	}
	d := &Dataset{Name: name, Shape: shape, X: x.Data, Y: make([]int, len(y.Data))}
	k := 0
	for i, v := range y.Data {
		if v != float32(int(v)) || v < 0 || v >= maxClasses {
			return nil, fmt.Errorf("label %d is %g, want a class index in [0, %d)", i, v, maxClasses)
		}
		d.Y[i] = int(v)
		k = max(k, d.Y[i]+1)
	}
	d.Classes = numbered(k)
	return d, d.Validate()
}

// NPYShape reads the shape a .npy file's header declares, checked against
// the file's size as LoadNPY checks it, without reading the payload.
func NPYShape(path string) ([]int, error) {
	f, size, err := OpenRegular(path, maxNPYBytes)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	h, err := readNPYHeader(bufio.NewReader(f), size)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return h.shape, nil
}
