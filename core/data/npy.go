package data

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Array is an n-dimensional array read from or written to .npy, as float32.
// Integer and float64 files are converted; Ints keeps integer values exactly.
type Array struct {
	Shape []int
	Data  []float32
	Ints  []int64 // set for integer dtypes
}

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([<>|=])([fiub])(\d+)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// ParseNPY decodes a .npy file (format 1.0–3.0) holding float32, float64,
// uint8, int32 or int64 values in C order.
func ParseNPY(b []byte) (*Array, error) {
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, errors.New("npy: bad magic")
	}
	var hlen, off int
	switch b[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, errors.New("npy: truncated header")
		}
		hlen, off = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return nil, fmt.Errorf("npy: unsupported format version %d", b[6])
	}
	if hlen > len(b)-off {
		return nil, fmt.Errorf("npy: header of %d bytes, file has %d after the preamble", hlen, len(b)-off)
	}
	h := string(b[off : off+hlen])
	payload := b[off+hlen:]
	m := npyDescr.FindStringSubmatch(h)
	if m == nil {
		return nil, fmt.Errorf("npy: unsupported or missing dtype in header %q", strings.TrimSpace(h))
	}
	if m[1] == ">" {
		return nil, errors.New("npy: big-endian data is not supported")
	}
	kind, size := m[2], m[3]
	if f := npyFortran.FindStringSubmatch(h); f == nil || f[1] == "True" {
		return nil, errors.New("npy: only C-order arrays are supported")
	}
	sm := npyShape.FindStringSubmatch(h)
	if sm == nil {
		return nil, errors.New("npy: header has no shape")
	}
	var shape []int
	total := 1
	for _, f := range strings.Split(sm[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("npy: bad dimension %q", f)
		}
		shape = append(shape, d)
		if d > 0 && total > maxFileBytes/d {
			return nil, fmt.Errorf("npy: shape %v is too large", shape)
		}
		total *= d
	}
	width, _ := strconv.Atoi(size)
	dtype := kind + size
	switch dtype {
	case "f4", "f8", "u1", "i4", "i8", "b1":
	default:
		return nil, fmt.Errorf("npy: dtype %s%s is not supported (float32, float64, uint8, int32, int64, bool)", kind, size)
	}
	if len(payload) != total*width {
		return nil, fmt.Errorf("npy: shape %v of %s needs %d bytes, file holds %d (truncated?)", shape, dtype, total*width, len(payload))
	}
	a := &Array{Shape: shape, Data: make([]float32, total)}
	isInt := kind == "i" || kind == "u" || kind == "b"
	if isInt {
		a.Ints = make([]int64, total)
	}
	for i := 0; i < total; i++ {
		switch dtype {
		case "f4":
			a.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(payload[4*i:]))
		case "f8":
			a.Data[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(payload[8*i:])))
		case "u1", "b1":
			a.Ints[i] = int64(payload[i])
		case "i4":
			a.Ints[i] = int64(int32(binary.LittleEndian.Uint32(payload[4*i:])))
		case "i8":
			a.Ints[i] = int64(binary.LittleEndian.Uint64(payload[8*i:]))
		}
		if isInt {
			a.Data[i] = float32(a.Ints[i])
		}
	}
	return a, nil
}

// LoadNPY reads a .npy file.
func LoadNPY(path string) (*Array, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	a, err := ParseNPY(b)
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
	out := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	_, err := w.Write(out)
	return err
}

// SaveNPY writes a float32 .npy file.
func SaveNPY(path string, shape []int, data []float32) error {
	var buf bytes.Buffer
	if err := EncodeNPY(&buf, shape, data); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return WriteFileAtomic(path, buf.Bytes())
}

// LoadNPZ reads every array of a .npz archive (stored or deflated).
func LoadNPZ(path string) (map[string]*Array, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	out, err := ParseNPZ(b)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return out, nil
}

// ParseNPZ decodes a .npz archive held in memory.
func ParseNPZ(b []byte) (map[string]*Array, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("npz: not a zip archive: %w", err)
	}
	out := map[string]*Array{}
	for _, f := range zr.File {
		if f.UncompressedSize64 > maxFileBytes {
			return nil, fmt.Errorf("npz: member %s is too large", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("npz: member %s: %w", f.Name, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, maxFileBytes))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("npz: member %s: %w", f.Name, err)
		}
		a, err := ParseNPY(data)
		if err != nil {
			return nil, fmt.Errorf("npz: member %s: %w", f.Name, err)
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = a
	}
	if len(out) == 0 {
		return nil, errors.New("npz: no arrays")
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

// WriteFileAtomic writes b through a temporary file and a rename, so that a
// crash never leaves a half-written file under path.
func WriteFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(b)
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
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
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
