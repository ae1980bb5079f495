// Package model saves and loads trained classifiers in Faithlab's model
// file format, version 1:
//
//	offset 0   8 bytes  magic "FLABMODL"
//	offset 8   uint32   format version (little-endian), 1
//	offset 12  uint32   header length L in bytes (≤ 16 MiB)
//	offset 16  L bytes  header, JSON (Header below)
//	then       float32  every parameter in header order, little-endian,
//	                    PyTorch layout; nothing may follow
//
// The header names the architecture, the input shape, the class names, the
// input standardisation (tabular data) and the training record, and lists
// each parameter's name and shape. Loading checks every size against both
// the architecture and the file's length before reading, so a truncated or
// hostile file yields an error, never a panic or an outsized allocation.
package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/train"
)

const (
	magic         = "FLABMODL"
	version       = 1
	maxHeaderSize = 16 << 20
)

// Version is Faithlab's version, recorded in every file it writes.
const Version = "0.1.0"

// ParamInfo names and shapes one stored parameter.
type ParamInfo struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

// Header is the JSON part of a model file.
type Header struct {
	Arch            string                `json:"arch"`
	InputShape      []int                 `json:"input_shape"`
	Classes         []string              `json:"classes"`
	Standardization *data.Standardization `json:"standardization,omitempty"`
	Training        *train.Record         `json:"training,omitempty"`
	Created         time.Time             `json:"created"`
	Faithlab        string                `json:"faithlab_version"`
	Params          []ParamInfo           `json:"params"`
}

// Model is a classifier with what is needed to use it on new data.
type Model struct {
	Header
	Net *native.Net
}

// New builds an untrained model of a built-in architecture for a dataset.
func New(arch string, ds *data.Dataset, kern gemm.Kernel, seed uint64) (*Model, error) {
	net, err := native.New(arch, ds.Shape, len(ds.Classes), kern)
	if err != nil {
		return nil, err
	}
	net.Init(seed)
	return &Model{Header: Header{Arch: arch, InputShape: ds.Shape, Classes: ds.Classes,
		Standardization: ds.Standardization}, Net: net}, nil
}

// Encode returns the model file's bytes.
func (m *Model) Encode() ([]byte, error) {
	h := m.Header
	h.Faithlab = Version
	if h.Created.IsZero() {
		h.Created = time.Now().UTC()
	}
	h.Params = nil
	params := m.Net.Params()
	for _, p := range params {
		h.Params = append(h.Params, ParamInfo{p.Name, p.Shape})
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(magic)
	binary.Write(&buf, binary.LittleEndian, uint32(version))
	binary.Write(&buf, binary.LittleEndian, uint32(len(hj)))
	buf.Write(hj)
	for _, p := range params {
		b := make([]byte, 4*len(p.Data))
		for i, v := range p.Data {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// Save writes the model to path atomically (temporary file, then rename).
func (m *Model) Save(path string) error {
	b, err := m.Encode()
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return data.WriteFileAtomic(path, b)
}

// Load reads a model file.
func Load(path string, kern gemm.Kernel) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	m, err := Decode(b, kern)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	return m, nil
}

// Decode parses a model file held in memory.
func Decode(b []byte, kern gemm.Kernel) (*Model, error) {
	if len(b) < 16 || string(b[:8]) != magic {
		return nil, errors.New("not a Faithlab model file (bad magic)")
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != version {
		return nil, fmt.Errorf("model format version %d, this Faithlab reads version %d", v, version)
	}
	hl := int(binary.LittleEndian.Uint32(b[12:]))
	if hl > maxHeaderSize || hl > len(b)-16 {
		return nil, fmt.Errorf("header of %d bytes does not fit the %d-byte file (truncated?)", hl, len(b))
	}
	var h Header
	if err := json.Unmarshal(b[16:16+hl], &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if len(h.Classes) < 2 {
		return nil, fmt.Errorf("header lists %d classes", len(h.Classes))
	}
	if len(h.InputShape) != 3 || slices.Min(h.InputShape) <= 0 || engine.Size(h.InputShape) > 1<<24 {
		return nil, fmt.Errorf("header: bad input shape %v", h.InputShape)
	}
	if s := h.Standardization; s != nil && (len(s.Mean) != engine.Size(h.InputShape) || len(s.Std) != len(s.Mean)) {
		return nil, fmt.Errorf("header: standardisation has %d means and %d deviations for %d features", len(s.Mean), len(s.Std), engine.Size(h.InputShape))
	}
	net, err := native.New(h.Arch, h.InputShape, len(h.Classes), kern)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	params := net.Params()
	if len(params) != len(h.Params) {
		return nil, fmt.Errorf("file lists %d parameters, %s has %d", len(h.Params), h.Arch, len(params))
	}
	rest := b[16+hl:]
	need := 0
	for i, p := range params {
		if h.Params[i].Name != p.Name || !slices.Equal(h.Params[i].Shape, p.Shape) {
			return nil, fmt.Errorf("parameter %d is %s %v, %s expects %s %v", i, h.Params[i].Name, h.Params[i].Shape, h.Arch, p.Name, p.Shape)
		}
		need += 4 * len(p.Data)
	}
	if len(rest) != need {
		return nil, fmt.Errorf("weights take %d bytes, file holds %d after the header (truncated or trailing data)", need, len(rest))
	}
	off := 0
	for _, p := range params {
		for i := range p.Data {
			v := math.Float32frombits(binary.LittleEndian.Uint32(rest[off:]))
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("parameter %s holds a non-finite value at %d", p.Name, i)
			}
			p.Data[i] = v
			off += 4
		}
	}
	return &Model{Header: h, Net: net}, nil
}

// Prepare applies the model's input standardisation to a raw dataset whose
// shape matches, in place; image models have none.
func (m *Model) Prepare(ds *data.Dataset) error {
	if !slices.Equal(ds.Shape, m.InputShape) {
		return fmt.Errorf("%s samples have shape %v, the model expects %v", ds.Name, ds.Shape, m.InputShape)
	}
	if len(ds.Classes) != len(m.Classes) {
		return fmt.Errorf("%s has %d classes, the model %d", ds.Name, len(ds.Classes), len(m.Classes))
	}
	return nil
}
