// Package model saves and loads trained classifiers in Faithlab's model
// file format, version 1:
//
//	offset 0   8 bytes  magic "FLABMODL"
//	offset 8   uint32   format version (little-endian), 1
//	offset 12  uint32   header length L in bytes (≤ 16 MiB)
//	offset 16  L bytes  header, JSON (Header below)
//	then       float32  every parameter in header order, little-endian,
//	                    PyTorch layout
//	then       uint32   CRC-32C (Castagnoli) of every byte before it,
//	                    little-endian, when the header's "checksum" is
//	                    "crc32c"; nothing may follow
//
// The header names the architecture, the input shape, the class names, the
// input standardisation (tabular data) and the training record, and lists
// each parameter's name and shape. Loading checks every size against both
// the architecture and the file's length before reading, so a truncated or
// hostile file yields an error, never a panic or an outsized allocation,
// and then the checksum, so that a damaged file (a flipped bit in a class
// name, a loss or a weight) is refused rather than used.
//
// Faithlab writes the checksum into every file. Version 1 files written
// before it have no "checksum" key and end with the weights; they still
// load, unchecked (open and save one to add the checksum). Readers older
// than the checksum refuse new files (trailing data).
package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
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
	// MaxFileBytes bounds a model file (ResNet-18, the largest built-in
	// architecture, takes 45 MB).
	MaxFileBytes = 1 << 30
	// checksumCRC32C is the header's "checksum" of a file that ends with
	// the CRC-32C of everything before it.
	checksumCRC32C = "crc32c"
)

// fileChecksum is the part of the header that says how the file is
// checked; it is kept out of Header, which describes the model.
type fileChecksum struct {
	Checksum string `json:"checksum,omitempty"`
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

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
	Source          *Source               `json:"source,omitempty"` // the training data, for Data
	Training        *train.Record         `json:"training,omitempty"`
	Diffusion       *Diffusion            `json:"diffusion,omitempty"` // set for a diffusion prior (see prior.go)
	Test            *train.Evaluation     `json:"test,omitempty"`      // on the source's test split, after training
	Created         time.Time             `json:"created"`
	Faithlab        string                `json:"faithlab_version"`
	Params          []ParamInfo           `json:"params"`
	// Input, for an ONNX or TorchScript model, is what its description
	// says of how an image folder reaches it (not in a model file).
	Input *Input `json:"-"`
}

// Model is a classifier with what is needed to use it on new data.
type Model struct {
	Header
	Net   *native.Net
	Prior *native.UNet // instead of Net in a diffusion prior's file
	// Script, instead of Net, is a researcher's TorchScript classifier,
	// which only the torch engine runs (torchscript.go); it has no model
	// file of its own.
	Script *Script
	// ONNX, beside Net, says that Net was imported from an ONNX file
	// (onnx.go): it has no model file of its own, and retraining it trains
	// a copy of its layers from fresh weights.
	ONNX *ONNX
	// Unchecked reports that the file it was read from has no checksum
	// (from before checksums, or with its checksum removed): its bytes
	// were used unchecked. Saving the model again adds one.
	Unchecked bool
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
	if m.Script != nil {
		return nil, fmt.Errorf("%s is a TorchScript model: it has no Faithlab model file", m.Script.Path)
	}
	if m.ONNX != nil {
		return nil, fmt.Errorf("%s is an ONNX model: it has no Faithlab model file", m.ONNX.Path)
	}
	h.Params = nil
	params := m.params()
	for _, p := range params {
		h.Params = append(h.Params, ParamInfo{p.Name, p.Shape})
	}
	if err := m.CheckWeights(); err != nil {
		return nil, err
	}
	hj, err := json.Marshal(struct {
		Header
		fileChecksum
	}{h, fileChecksum{checksumCRC32C}})
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
	binary.Write(&buf, binary.LittleEndian, crc32c(buf.Bytes()))
	return buf.Bytes(), nil
}

// CheckWeights reports the first weight that is NaN or infinite: such a
// model computes nothing meaningful and is never written.
func (m *Model) CheckWeights() error {
	for _, p := range m.params() {
		for i, v := range p.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("parameter %s holds %g at index %d: weights must be finite", p.Name, v, i)
			}
		}
	}
	return nil
}

// Save writes the model to path atomically (temporary file, then rename).
func (m *Model) Save(path string) error {
	b, err := m.Encode()
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return data.WriteFileAtomic(path, b)
}

// Load reads a model file: a regular file of at most MaxFileBytes (1 GiB).
func Load(path string, kern gemm.Kernel) (*Model, error) {
	if IsONNX(path) {
		return LoadONNX(path, kern)
	}
	b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Decode(b, kern)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	return m, nil
}

// ReadFile reads a model file's bytes, unchecked: a regular file of at most
// MaxFileBytes that starts with the model magic (so that a large file of
// something else is refused before it is read).
func ReadFile(path string) ([]byte, error) {
	f, size, err := data.OpenRegular(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	defer f.Close()
	b := make([]byte, min(size, 16))
	if _, err := io.ReadFull(f, b); err != nil || len(b) < 16 || string(b[:8]) != magic {
		return nil, fmt.Errorf("load model %s: not a Faithlab model file (bad magic)", path)
	}
	b = append(b, make([]byte, size-16)...)
	if _, err := io.ReadFull(f, b[16:]); err != nil {
		return nil, fmt.Errorf("load model %s: reading %d bytes: %w", path, size, err)
	}
	return b, nil
}

// ReadHeader reads a model file's header alone (its architecture, input
// shape and classes), not its weights, which it does not check: enough to
// choose among files, not to trust one. Load reads and checks the whole
// file.
func ReadHeader(path string) (Header, error) {
	f, _, err := data.OpenRegular(path, MaxFileBytes)
	if err != nil {
		return Header{}, fmt.Errorf("read model header %s: %w", path, err)
	}
	defer f.Close()
	b := make([]byte, 16)
	if _, err := io.ReadFull(f, b); err != nil {
		b = b[:0] // too short: preamble says so
	}
	hl, err := preamble(b)
	if err != nil {
		return Header{}, fmt.Errorf("read model header %s: %w", path, err)
	}
	var h Header
	if err := json.NewDecoder(io.LimitReader(f, int64(hl))).Decode(&h); err != nil {
		return Header{}, fmt.Errorf("read model header %s: %w", path, err)
	}
	return h, nil
}

// HeaderOf reads what a model file of any kind says of itself: a Faithlab
// file's header (its weights unread), an ONNX graph's input and classes
// with its description (the graph read and checked), a TorchScript file's
// description. Enough to open data as the model takes it, not to run it.
func HeaderOf(path string) (Header, error) {
	var m *Model
	var err error
	switch {
	case IsONNX(path):
		m, err = LoadONNX(path, nil)
	case IsTorchScript(path):
		m, err = LoadTorchScript(path)
	default:
		return ReadHeader(path)
	}
	if err != nil {
		return Header{}, err
	}
	return m.Header, nil
}

// Takes says whether a model of this header takes samples of shape and
// that many classes (check says which of the two it does not).
func (h Header) Takes(shape []int, classes int) bool {
	return slices.Equal(h.InputShape, shape) && len(h.Classes) == classes
}

// Decode parses a classifier's model file held in memory (DecodePrior a
// diffusion prior's).
func Decode(b []byte, kern gemm.Kernel) (*Model, error) {
	m, err := decode(b, kern)
	if err == nil && m.Prior != nil {
		return nil, fmt.Errorf("the file holds a diffusion prior (%s), not a classifier", m.Arch)
	}
	return m, err
}

// preamble checks a model file's first 16 bytes (magic, format version,
// header length) and returns the length of the JSON header after them.
func preamble(b []byte) (int, error) {
	if len(b) < 16 || string(b[:8]) != magic {
		return 0, errors.New("not a Faithlab model file (bad magic)")
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != version {
		return 0, fmt.Errorf("model format version %d, this Faithlab reads version %d", v, version)
	}
	hl := int(binary.LittleEndian.Uint32(b[12:]))
	if hl > maxHeaderSize {
		return 0, fmt.Errorf("header of %d bytes, more than the %d a model file may have", hl, maxHeaderSize)
	}
	return hl, nil
}

func decode(b []byte, kern gemm.Kernel) (*Model, error) {
	hl, err := preamble(b)
	if err != nil {
		return nil, err
	}
	if hl > len(b)-16 {
		return nil, fmt.Errorf("header of %d bytes does not fit the %d-byte file (truncated?)", hl, len(b))
	}
	var h Header
	var ck fileChecksum
	if err := json.Unmarshal(b[16:16+hl], &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if err := json.Unmarshal(b[16:16+hl], &ck); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	rest := b[16+hl:]
	switch ck.Checksum {
	case checksumCRC32C:
		if len(rest) < 4 {
			return nil, errors.New("file ends before its checksum (truncated)")
		}
		n := len(b) - 4
		if got, want := crc32c(b[:n]), binary.LittleEndian.Uint32(b[n:]); got != want {
			return nil, fmt.Errorf("checksum mismatch (CRC-32C %08x, the file records %08x): the file is damaged", got, want)
		}
		rest = rest[:len(rest)-4]
	case "": // a version 1 file from before checksums, or one whose checksum was removed
	default:
		return nil, fmt.Errorf("header: unknown checksum %q (this Faithlab checks %q)", ck.Checksum, checksumCRC32C)
	}
	if len(h.Classes) < 2 {
		return nil, fmt.Errorf("header lists %d classes", len(h.Classes))
	}
	if err := data.CheckNames("class", h.Classes); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if len(h.InputShape) != 3 || slices.Min(h.InputShape) <= 0 || engine.Size(h.InputShape) > 1<<24 {
		return nil, fmt.Errorf("header: bad input shape %v", h.InputShape)
	}
	if s := h.Standardization; s != nil && (len(s.Mean) != engine.Size(h.InputShape) || len(s.Std) != len(s.Mean)) {
		return nil, fmt.Errorf("header: standardisation has %d means and %d deviations for %d features", len(s.Mean), len(s.Std), engine.Size(h.InputShape))
	}
	if s := h.Standardization; s != nil {
		for j := range s.Mean {
			if m, d := float64(s.Mean[j]), float64(s.Std[j]); math.IsInf(m, 0) || !(d > 0) || math.IsInf(d, 0) {
				return nil, fmt.Errorf("header: standardisation of feature %d is mean %g, deviation %g: want a finite mean and a positive, finite deviation", j, m, d)
			}
		}
	}
	// Before the network is built (which allocates its weights): the
	// parameters the header lists must be what the file holds, and the
	// input and the classes no larger than that (every built-in
	// architecture has a weight per input value and per class at least).
	held := 0
	for _, p := range h.Params {
		n := 1
		for _, d := range p.Shape {
			if d <= 0 || n > len(rest)/d {
				return nil, fmt.Errorf("header: parameter %s has shape %v: more than the %d bytes of weights the file holds", p.Name, p.Shape, len(rest))
			}
			n *= d
		}
		if held += 4 * n; held > len(rest) {
			return nil, fmt.Errorf("header lists parameters of more than the %d bytes of weights the file holds (truncated?)", len(rest))
		}
	}
	if held != len(rest) {
		return nil, fmt.Errorf("header lists parameters of %d bytes, the file holds %d after the header (truncated or trailing data)", held, len(rest))
	}
	if n := engine.Size(h.InputShape); 4*n > held || 4*len(h.Classes) > held {
		return nil, fmt.Errorf("header: %d inputs and %d classes, more than the %d weights the file holds", n, len(h.Classes), held/4)
	}
	net, prior, params, err := build(h, kern)
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if len(params) != len(h.Params) {
		return nil, fmt.Errorf("file lists %d parameters, %s has %d", len(h.Params), h.Arch, len(params))
	}
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
	return &Model{Header: h, Net: net, Prior: prior, Unchecked: ck.Checksum == ""}, nil
}

// unchecked reports whether the model file at path carries no checksum,
// from its header alone (the weights are not read).
func unchecked(path string) bool {
	f, _, err := data.OpenRegular(path, MaxFileBytes)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 16)
	if _, err := io.ReadFull(f, b); err != nil || string(b[:8]) != magic {
		return false
	}
	hl := int(binary.LittleEndian.Uint32(b[12:]))
	if hl > maxHeaderSize {
		return false
	}
	h := make([]byte, hl)
	var ck fileChecksum
	if _, err := io.ReadFull(f, h); err != nil || json.Unmarshal(h, &ck) != nil {
		return false
	}
	return ck.Checksum == ""
}

// FileNotice is what a front end says, once per file, when it opens a
// model or prior file ("" for nothing): a TorchScript model runs code from
// its file; a Faithlab file without a checksum is used unchecked.
func FileNotice(path string) string {
	switch {
	case IsTorchScript(path):
		return TorchScriptNotice(path)
	case unchecked(path):
		return UncheckedNotice(path)
	}
	return ""
}

// UncheckedNotice is what a front end says of a model or prior file that
// loads without a checksum.
func UncheckedNotice(path string) string {
	return fmt.Sprintf("%s has no checksum (a file from before Faithlab checked its files, or one whose checksum was removed): it is used unchecked, and a damaged weight would go unnoticed; open and save it again to add one, if you trust it", path)
}
