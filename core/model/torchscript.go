package model

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"path"
	"slices"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/torch"
)

// Script is a researcher's own classifier: a TorchScript file
// (torch.jit.save) with a description beside it, FILE.json (ScriptInfo),
// saying what the file does not: the input it takes, its classes, its
// normalisation and the data it was trained on. It runs on the torch
// engine only.
type Script struct {
	Path  string
	Bytes []byte
	Info  ScriptInfo
}

// ScriptInfo is the JSON description beside a TorchScript classifier.
//
//	{"input_shape": [1, 28, 28], "classes": ["T-shirt/top", …],
//	 "mean": [0.286], "std": [0.353], "cam_layer": "conv2",
//	 "dataset": {"ref": "fashion-mnist", "options": {}}}
//
// Inputs are what Faithlab's dataset holds (images in [0, 1]); the
// module sees (x − mean)/std per channel when mean and std are given, and
// attributions are with respect to x. cam_layer names one of the
// activations the module exposes through an exported method
// forward_activations(x) → (logits, {name: tensor}), for Grad-CAM.
// dataset is optional: commands then need --dataset.
//
// How an image folder reaches the model (Input): wnids, optional, are the
// classes' ImageNet WordNet ids, one per class in order ("n01440764", …),
// so that class folders named by them are matched to the classes, as
// folders named by the classes themselves are (data.ClassList); resize is
// "short-side+center-crop" (torchvision's evaluation transform: the
// shorter side resized to resize_short, default round(side·256/224), 256
// for 224, bilinear as Pillow; then the centre side×side) or "squash"
// (both sides to the model's, Lanczos, aspect not kept: the default,
// which InputNotice names). A mean above 1.5 is a mean of 0–255 pixels
// (mmcv's and timm's convention): mean and std are then divided by 255,
// the same normalisation of Faithlab's [0, 1] pixels, and InputNotice
// says so; a 0–255 mean with a std of at most 1 is refused.
type ScriptInfo struct {
	InputShape  []int     `json:"input_shape"`
	Classes     []string  `json:"classes"`
	WNIDs       []string  `json:"wnids,omitempty"`
	Mean        []float64 `json:"mean,omitempty"`
	Std         []float64 `json:"std,omitempty"`
	Resize      string    `json:"resize,omitempty"`
	ResizeShort int       `json:"resize_short,omitempty"`
	CAMLayer    string    `json:"cam_layer,omitempty"`
	Dataset     *Source   `json:"dataset,omitempty"`

	described bool // read from a description file (decodeInfo), not made up for a graph without one
	scaled    bool // Mean and Std were given on a 0–255 scale and divided by 255 (scale)
}

// MaxScriptBytes bounds a TorchScript file.
const MaxScriptBytes = 1 << 30

// IsTorchScript reports whether path is a TorchScript file: a zip
// archive (torch.jit.save writes one) rather than a Faithlab model file.
func IsTorchScript(path string) bool {
	f, _, err := data.OpenRegular(path, MaxScriptBytes)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && string(b[:]) == "PK\x03\x04"
}

// TorchScriptNotice is what a front end says, once per file, when a
// TorchScript model is opened: loading one runs code from the file, as
// PyTorch warns of torch.load.
func TorchScriptNotice(path string) string {
	d, err := ScriptDigest(path)
	if err != nil {
		d = "unreadable: " + err.Error()
	}
	return fmt.Sprintf("%s is a TorchScript model: loading it runs code from the file, with your rights, in the PyTorch worker. Open models only from sources you trust (SHA-256 of the file and its description: %s)", path, d)
}

// ScriptWeightBytes is the bytes of the tensors a TorchScript file stores:
// its archive's data/ entries (torch.jit.save writes one per storage).
func ScriptWeightBytes(file string) (int64, error) {
	f, size, err := data.OpenRegular(file, MaxScriptBytes)
	if err != nil {
		return 0, fmt.Errorf("TorchScript model %s: %w", file, err)
	}
	defer f.Close()
	z, err := zip.NewReader(f, size)
	if err != nil {
		return 0, fmt.Errorf("TorchScript model %s: %w", file, err)
	}
	var n int64
	for _, e := range z.File {
		if path.Base(path.Dir(e.Name)) == "data" {
			n += int64(min(e.UncompressedSize64, MaxScriptBytes))
		}
	}
	return n, nil
}

// ScriptInfoPath is where a TorchScript file's description is: FILE.json.
func ScriptInfoPath(path string) string { return path + ".json" }

// LoadTorchScript reads a TorchScript classifier and its description.
// The module itself is checked when a torch engine loads it.
func LoadTorchScript(path string) (*Model, error) {
	b, err := data.ReadFileLimit(path, MaxScriptBytes)
	if err != nil {
		return nil, fmt.Errorf("load TorchScript model %s: %w", path, err)
	}
	if !bytes.HasPrefix(b, []byte("PK\x03\x04")) {
		return nil, fmt.Errorf("load TorchScript model %s: not a TorchScript file (torch.jit.save writes a zip archive)", path)
	}
	ip := ScriptInfoPath(path)
	jb, err := data.ReadFileLimit(ip, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("load TorchScript model %s: its description %s: %w (a JSON object with input_shape, classes and, optionally, wnids, mean, std, resize, resize_short, cam_layer, dataset)", path, ip, err)
	}
	info, _, err := decodeInfo(jb)
	if err != nil {
		return nil, fmt.Errorf("TorchScript description %s: %w", ip, err)
	}
	return &Model{Header: Header{Arch: torch.ScriptArch, InputShape: info.InputShape, Classes: info.Classes, Source: info.Dataset, Input: info.input()},
		Script: &Script{Path: path, Bytes: b, Info: info}}, nil
}

func (s ScriptInfo) check() error {
	if len(s.InputShape) != 3 || slices.Min(s.InputShape) <= 0 || engine.Size(s.InputShape) > 1<<24 {
		return fmt.Errorf("input_shape %v: want C, H, W, all positive", s.InputShape)
	}
	if len(s.Classes) < 2 {
		return fmt.Errorf("%d classes: name at least 2", len(s.Classes))
	}
	if err := data.CheckNames("class", s.Classes); err != nil {
		return err
	}
	if (len(s.Mean) == 0) != (len(s.Std) == 0) {
		return fmt.Errorf("give mean and std together")
	}
	for _, v := range s.Mean {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("mean %g: want a finite number", v)
		}
	}
	for _, v := range s.Std {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("std %g: want a positive, finite number", v)
		}
	}
	for _, v := range [][]float64{s.Mean, s.Std} {
		if n := len(v); n > 1 && n != s.InputShape[0] {
			return fmt.Errorf("%d normalisation values for %d channels: give one, or one per channel", n, s.InputShape[0])
		}
	}
	return s.checkInput()
}

// spec is the torch engine's description of the script.
func (s *Script) spec(m *Model) torch.Script {
	return torch.Script{Shape: m.InputShape, Classes: len(m.Classes), Mean: s.Info.Mean, Std: s.Info.Std, CAMLayer: s.Info.CAMLayer}
}

// ScriptDigest is the SHA-256 of a TorchScript file and its description,
// hex: what a campaign's keys hold of the model.
func ScriptDigest(path string) (string, error) {
	h := sha256.New()
	for _, p := range []string{path, ScriptInfoPath(path)} {
		b, err := data.ReadFileLimit(p, MaxScriptBytes)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%d\n", len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// encodeNPZ writes parameters as an uncompressed .npz archive.
func encodeNPZ(ps []engine.Param) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range ps {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p.Name + ".npy", Method: zip.Store})
		if err != nil {
			return nil, err
		}
		if err := data.EncodeNPY(w, p.Shape, p.Data); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
