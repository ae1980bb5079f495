package torch

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
)

// The framed protocol (worker.py says the same): a frame is a uint32
// little-endian header length, the header (a JSON object), and the raw
// little-endian bytes of the arrays the header lists, in order.
const (
	maxHeader = 16 << 20
	// maxArrayBytes bounds one array a worker sends (a batch of logits or
	// of input gradients, a network's weights): a corrupt header must not
	// make us allocate without bound.
	maxArrayBytes = 4 << 30
)

// array is one payload of a frame: float32 (F), int32 (I) or bytes (B).
type array struct {
	Name  string `json:"name"`
	DType string `json:"dtype"` // "f4", "i4", "u1"
	Shape []int  `json:"shape"`
	F     []float32
	I     []int32
	B     []byte
}

func f32(name string, data []float32, shape ...int) array {
	return array{Name: name, DType: "f4", Shape: shape, F: data}
}

func i32(name string, data []int32, shape ...int) array {
	return array{Name: name, DType: "i4", Shape: shape, I: data}
}

func (a array) elems() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// frame is a decoded message: its header fields of interest, the raw
// header and its arrays by name.
type frame struct {
	ID     int64   `json:"id"`
	Event  string  `json:"event,omitempty"` // "hello", "alive", "batch"; "" for a reply
	OK     bool    `json:"ok"`
	Error  string  `json:"error,omitempty"`
	Trace  string  `json:"trace,omitempty"`
	Arrays []array `json:"arrays,omitempty"`
	raw    []byte
	byName map[string]array
}

// get returns the named float32 array's values, or nil.
func (f *frame) get(name string) []float32 { return f.byName[name].F }

// decode unmarshals the raw header into v.
func (f *frame) decode(v any) error { return json.Unmarshal(f.raw, v) }

// writeFrame writes header (a value JSON encodes as an object, with the
// arrays' descriptions added) and the arrays.
func writeFrame(w *bufio.Writer, header map[string]any, arrays []array) error {
	if len(arrays) > 0 {
		metas := make([]map[string]any, len(arrays))
		for i, a := range arrays {
			metas[i] = map[string]any{"name": a.Name, "dtype": a.DType, "shape": a.Shape}
		}
		header["arrays"] = metas
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return err
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(hb)))
	w.Write(n[:])
	w.Write(hb)
	var buf [4096]byte
	for _, a := range arrays {
		if got, want := len(a.F)+len(a.I)+len(a.B), a.elems(); got != want {
			return fmt.Errorf("array %s holds %d values for shape %v", a.Name, got, a.Shape)
		}
		switch a.DType {
		case "f4":
			for i := 0; i < len(a.F); {
				k := 0
				for ; k+4 <= len(buf) && i < len(a.F); i, k = i+1, k+4 {
					binary.LittleEndian.PutUint32(buf[k:], math.Float32bits(a.F[i]))
				}
				w.Write(buf[:k])
			}
		case "i4":
			for i := 0; i < len(a.I); {
				k := 0
				for ; k+4 <= len(buf) && i < len(a.I); i, k = i+1, k+4 {
					binary.LittleEndian.PutUint32(buf[k:], uint32(a.I[i]))
				}
				w.Write(buf[:k])
			}
		case "u1":
			w.Write(a.B)
		default:
			return fmt.Errorf("array %s: unknown dtype %q", a.Name, a.DType)
		}
	}
	return w.Flush()
}

// readFrame reads one frame, checking every size before allocating.
func readFrame(r *bufio.Reader) (*frame, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	hl := binary.LittleEndian.Uint32(n[:])
	if hl > maxHeader {
		return nil, fmt.Errorf("frame header of %d bytes (at most %d): not the worker's protocol", hl, maxHeader)
	}
	f := &frame{raw: make([]byte, hl)}
	if _, err := io.ReadFull(r, f.raw); err != nil {
		return nil, unexpected(err)
	}
	if err := json.Unmarshal(f.raw, f); err != nil {
		return nil, fmt.Errorf("frame header: %w (not the worker's protocol: %.80q)", err, f.raw)
	}
	f.byName = make(map[string]array, len(f.Arrays))
	for _, a := range f.Arrays {
		size := 4
		if a.DType == "u1" {
			size = 1
		} else if a.DType != "f4" && a.DType != "i4" {
			return nil, fmt.Errorf("array %s: unknown dtype %q", a.Name, a.DType)
		}
		elems := 1
		for _, d := range a.Shape {
			if d < 0 || (d > 0 && elems > maxArrayBytes/size/d) {
				return nil, fmt.Errorf("array %s of shape %v: more than %d bytes", a.Name, a.Shape, maxArrayBytes)
			}
			elems *= d
		}
		b := make([]byte, elems*size)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, unexpected(err)
		}
		switch a.DType {
		case "f4":
			a.F = make([]float32, elems)
			for i := range a.F {
				a.F[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
		case "i4":
			a.I = make([]int32, elems)
			for i := range a.I {
				a.I[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
			}
		default:
			a.B = b
		}
		f.byName[a.Name] = a
	}
	return f, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
