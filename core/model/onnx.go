package model

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/engine/onnx"
)

// ONNXArch is the architecture name of an imported ONNX classifier.
const ONNXArch = "onnx"

// ONNX is a classifier imported from an ONNX file: its graph, read into
// native layers (package onnx), runs on the native engine like a built-in
// architecture. Loading it runs no code from the file.
type ONNX struct {
	Path   string
	Digest string // SHA-256 of the file and its description
	Graph  *onnx.Graph
}

// IsONNX reports whether path names an ONNX file (by its extension: the
// format has no magic number).
func IsONNX(path string) bool { return strings.EqualFold(filepath.Ext(path), ".onnx") }

// LoadONNX reads an ONNX classifier and, when present, its description
// FILE.json (ScriptInfo's fields: input_shape, classes, wnids, mean, std,
// resize, resize_short, cam_layer, dataset), which must agree with the graph. Without one, the
// classes are named by number and commands need --dataset. A mean and std
// become the network's first layer: the graph sees (x − mean)/std, and
// attributions are with respect to x.
func LoadONNX(path string, kern gemm.Kernel) (*Model, error) {
	if kern == nil {
		kern = gemm.Gonum{}
	}
	fail := func(err error) (*Model, error) { return nil, fmt.Errorf("load ONNX model %s: %w", path, err) }
	// The file is mapped, not read into memory, and hashed as a stream:
	// its weights are held once (onnx.ParseFile).
	f, size, err := data.OpenRegular(path, onnx.MaxBytes)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	g, err := onnx.ParseFile(f, size)
	if err != nil {
		return fail(err)
	}
	h := sha256.New()
	if err := hashSized(h, f, size); err != nil {
		return fail(err)
	}
	info := ScriptInfo{InputShape: g.InputShape}
	for k := range g.Classes {
		info.Classes = append(info.Classes, strconv.Itoa(k))
	}
	ip := ScriptInfoPath(path)
	switch jb, err := data.ReadFileLimit(ip, 1<<20); {
	case err == nil:
		fmt.Fprintf(h, "%d\n", len(jb))
		h.Write(jb)
		if info, _, err = decodeInfo(jb); err != nil {
			return nil, fmt.Errorf("ONNX description %s: %w", ip, err)
		}
		if !slices.Equal(info.InputShape, g.InputShape) {
			layout := ""
			if g.NHWC {
				layout = " (its channels-last input, as Faithlab feeds it channels-first)"
			}
			return nil, fmt.Errorf("ONNX description %s: input_shape %v, the graph takes %v%s", ip, info.InputShape, g.InputShape, layout)
		}
		if len(info.Classes) != g.Classes {
			return nil, fmt.Errorf("ONNX description %s: %d classes, the graph gives %d logits", ip, len(info.Classes), g.Classes)
		}
	case errors.Is(err, os.ErrNotExist):
	default:
		return nil, fmt.Errorf("ONNX description %s: %w", ip, err)
	}
	layers := g.Layers
	if len(info.Mean) > 0 {
		c := info.InputShape[0]
		norm := native.Layer{Op: "normalize", Name: "normalize"}
		for ch := range c {
			norm.Mean = append(norm.Mean, float32(info.Mean[min(ch, len(info.Mean)-1)]))
			norm.Std = append(norm.Std, float32(info.Std[min(ch, len(info.Std)-1)]))
		}
		layers = append([]native.Layer{norm}, layers...)
	}
	net, err := (&onnx.Graph{Layers: layers, Weights: g.Weights, InputShape: g.InputShape, Classes: g.Classes}).BuildMoved(ONNXArch, kern)
	if err != nil {
		return fail(err)
	}
	if info.CAMLayer != "" {
		if err := net.SetCAMLayer(info.CAMLayer); err != nil {
			return nil, fmt.Errorf("ONNX description %s: cam_layer: %w", ip, err)
		}
	}
	return &Model{Header: Header{Arch: ONNXArch, InputShape: g.InputShape, Classes: info.Classes, Source: info.Dataset, Input: info.input()},
		Net: net, ONNX: &ONNX{Path: path, Digest: hex.EncodeToString(h.Sum(nil)), Graph: g}}, nil
}

// ONNXDigest is the SHA-256 of an ONNX file and of its description, if
// any (ONNX.Digest, without reading the graph): what a campaign's keys
// hold of the model.
func ONNXDigest(path string) (string, error) {
	h := sha256.New()
	for i, p := range []string{path, ScriptInfoPath(path)} {
		f, size, err := data.OpenRegular(p, onnx.MaxBytes)
		if i == 1 && errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		err = hashSized(h, f, size)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashSized writes size and f's size bytes, from its start, to h, as a
// stream: what hashing the bytes read whole wrote.
func hashSized(h io.Writer, f *os.File, size int64) error {
	fmt.Fprintf(h, "%d\n", size)
	n, err := io.Copy(h, io.NewSectionReader(f, 0, size))
	if err == nil && n != size {
		err = fmt.Errorf("read %d of %d bytes", n, size)
	}
	return err
}

// ONNXNotice says what a front end should know of an ONNX model it opens
// ("" for nothing): a softmax left out, a channels-last input.
func ONNXNotice(m *Model) string {
	if m == nil || m.ONNX == nil {
		return ""
	}
	var notes []string
	if s := m.ONNX.Graph.DroppedSoftmax; s != "" {
		notes = append(notes, fmt.Sprintf("its final %s is left out: methods explain the logits before it", s))
	}
	if m.ONNX.Graph.NHWC {
		notes = append(notes, "it takes channels-last input: Faithlab feeds its channels-first images past the graph's leading transpose")
	}
	if len(notes) == 0 {
		return ""
	}
	return m.ONNX.Path + ": " + strings.Join(notes, "; ")
}
