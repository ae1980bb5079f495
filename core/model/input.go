package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/data"
)

// Input is what a model's description (ScriptInfo) says of how images
// reach the model beyond their shape: the classes' WordNet ids, which an
// image folder's class folders may be named by, and the resize. Header
// carries it for an ONNX or TorchScript model (nil for a Faithlab model
// file, whose folders are read as it was trained: squashed, by the
// folder's own classes).
type Input struct {
	WNIDs  []string
	Resize data.Resize
	// Described says that the model came with a description (FILE.json);
	// Mean and Std are the normalisation it declares on Faithlab's [0, 1]
	// pixels (nil: none), Scaled that they were given on a 0–255 scale
	// and divided by 255.
	Described bool
	Mean, Std []float64
	Scaled    bool
}

// maxScale01 is the largest mean a description may give on Faithlab's
// [0, 1] scale: a larger one is a mean of 0–255 pixels (mmcv's and timm's
// convention, ImageNet's [123.675, 116.28, 103.53]).
const maxScale01 = 1.5

// scale brings a 0–255 mean and std (any mean above maxScale01) to
// Faithlab's [0, 1] pixels, dividing both by 255: (255x − m)/s is
// (x − m/255)/(s/255), the same input. It says what it did ("" when
// nothing). A mean on one scale and a std on the other (a 0–255 mean with
// every std at most 1, a near-constant input) is an error.
func (s *ScriptInfo) scale() (string, error) {
	if len(s.Mean) == 0 || slices.Max(s.Mean) <= maxScale01 {
		return "", nil
	}
	if slices.Max(s.Mean) > 255 || slices.Min(s.Mean) < -255 {
		return "", fmt.Errorf("mean %v: beyond 255, the largest pixel value on any scale", s.Mean)
	}
	if slices.Max(s.Std) <= 1 {
		return "", fmt.Errorf("mean %v is on a 0–255 scale but std %v on a 0–1 one: give both on one scale (ImageNet's: mean [0.485, 0.456, 0.406], std [0.229, 0.224, 0.225] on 0–1; [123.675, 116.28, 103.53] and [58.395, 57.12, 57.375] on 0–255)", s.Mean, s.Std)
	}
	was := fmt.Sprintf("mean %v, std %v", s.Mean, s.Std)
	for i := range s.Mean {
		s.Mean[i] /= 255
	}
	for i := range s.Std {
		s.Std[i] /= 255
	}
	return fmt.Sprintf("%s are on a 0–255 scale: Faithlab's pixels are in [0, 1], so they are used divided by 255 (mean %.4g, std %.4g), the same normalisation", was, s.Mean, s.Std), nil
}

// input is the Input the description declares.
func (s ScriptInfo) input() *Input {
	return &Input{WNIDs: s.WNIDs, Resize: data.Resize{Mode: s.Resize, Short: s.ResizeShort},
		Described: s.described, Mean: s.Mean, Std: s.Std, Scaled: s.scaled}
}

// checkInput checks the description's wnids and resize.
func (s ScriptInfo) checkInput() error {
	if s.WNIDs != nil {
		if err := data.CheckWNIDs(s.WNIDs, len(s.Classes)); err != nil {
			return err
		}
	}
	if s.Resize == "" && s.ResizeShort == 0 {
		return nil
	}
	if c := s.InputShape[0]; c != 1 && c != 3 {
		return fmt.Errorf("resize %q for inputs of %d channels: an image folder gives 1 or 3", s.Resize, c)
	}
	if s.Resize == data.ResizeShortSideCrop && s.InputShape[1] != s.InputShape[2] {
		return fmt.Errorf("resize %q for inputs of %d×%d: the centre crop is square", s.Resize, s.InputShape[1], s.InputShape[2])
	}
	return data.Resize{Mode: s.Resize, Short: s.ResizeShort}.Check(s.InputShape[1])
}

// decodeInfo parses and checks a model's description, b, read from path,
// and brings 0–255 statistics to [0, 1] (scale); note says what it
// changed ("" for nothing).
func decodeInfo(b []byte) (info ScriptInfo, note string, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		return info, "", err
	}
	if dec.More() {
		return info, "", errors.New("more than one JSON value")
	}
	if err := info.check(); err != nil {
		return info, "", err
	}
	note, err = info.scale()
	info.described, info.scaled = true, note != ""
	return info, note, err
}

// InputNotice says, once per model, how images reach a model read from an
// ONNX or TorchScript file at path, where its description leaves that to
// Faithlab's defaults or Faithlab changed it ("" for a Faithlab model
// file, and for a description that declares all): no description at all,
// no resize declared (images squashed, Lanczos, aspect not kept), no
// normalisation, statistics on a 0–255 scale divided by 255. It reads the
// description alone; a description that cannot be read is left to the
// loader's error.
func InputNotice(path string) string {
	if path == "" || (!IsONNX(path) && !IsTorchScript(path)) {
		return ""
	}
	b, err := data.ReadFileLimit(ScriptInfoPath(path), 1<<20)
	if errors.Is(err, os.ErrNotExist) && IsONNX(path) {
		return fmt.Sprintf("%s has no description %s: its classes are numbered, images are squashed to its input's side (Lanczos, aspect not kept), and no normalisation is applied (pixels in [0, 1]); a description declares them (classes, wnids, resize, mean, std)", path, ScriptInfoPath(path))
	}
	if err != nil {
		return ""
	}
	info, scaled, err := decodeInfo(b)
	if err != nil {
		return ""
	}
	var notes []string
	if c := info.InputShape[0]; (c == 1 || c == 3) && info.Resize == "" {
		notes = append(notes, fmt.Sprintf("no resize declared: an image folder's images are %s (declare \"resize\": %q for torchvision's Resize(%d) + CenterCrop(%d))",
			data.Resize{}.String(info.InputShape[1]), data.ResizeShortSideCrop, data.Resize{}.ShortSide(info.InputShape[1]), info.InputShape[1]))
	}
	if len(info.Mean) == 0 {
		notes = append(notes, "no normalisation declared (no mean and std): the model sees pixels in [0, 1]")
	}
	if scaled != "" {
		notes = append(notes, scaled)
	}
	if len(notes) == 0 {
		return ""
	}
	return path + ": " + strings.Join(notes, "; ")
}

// NormalisationText says what the model does to an image's [0, 1] pixels
// before its first layer: the mean and std its description declares
// (Input), or none and why.
func (h Header) NormalisationText() string {
	switch in := h.Input; {
	case in == nil:
		return "no normalisation: the model was trained in Faithlab on pixels in [0, 1]"
	case !in.Described:
		return "no normalisation: the model has no description declaring a mean and std, so it sees pixels in [0, 1]"
	case len(in.Mean) == 0:
		return "no normalisation: its description declares no mean and std, so the model sees pixels in [0, 1]"
	}
	scaled := ""
	if h.Input.Scaled {
		scaled = " (declared on a 0–255 scale, divided by 255)"
	}
	return fmt.Sprintf("normalised as the model's description declares: (x − mean)/std, mean %s, std %s%s",
		floatsText(h.Input.Mean), floatsText(h.Input.Std), scaled)
}

// floatsText writes values to four significant digits: [0.485, 0.456, 0.406].
func floatsText(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', 4, 64)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// Conversions says every conversion between an image folder's files and
// what model h reads of ds's samples: the folder's resize, channels and
// scale (ds.Conversion) and, where h takes the samples, its normalisation.
// h nil: no model. "" for samples that are no image folder's.
func Conversions(h *Header, ds *data.Dataset) string {
	if ds == nil || ds.Conversion == nil {
		return ""
	}
	text := ds.Conversion.String()
	if h != nil && slices.Equal(h.InputShape, ds.Shape) {
		text += "; " + h.NormalisationText()
	}
	return text
}

// ClassNames are the names every front end gives the classes of model h
// on a dataset whose classes are named dataset (nil: none open, or one
// the model does not take): the model's own where it names them (a
// Faithlab model's, a description's), else the dataset's where it names
// as many (an ONNX model without a description numbers its classes), else
// the model's numbers. With h nil, the dataset's.
func ClassNames(h *Header, dataset []string) []string {
	switch {
	case h == nil:
		return dataset
	case data.Numbered(h.Classes) && len(dataset) == len(h.Classes):
		return dataset
	}
	return h.Classes
}

// FitsDataset says, of each model header asked, whether the model takes
// the dataset ref as a front end opens ref for it: an image folder read
// at the model's side and channels, its class folders matched to the
// model's classes (ImageOptions), any other set as Open reads it. A
// folder described at Open's defaults (1×28×28) fitted no model of
// another input, so that the workbench started with another model than
// the one chosen last for a folder of photos. A dataset that cannot be
// described fits none.
func FitsDataset(ref string) func(Header) bool {
	sum, err := data.Describe(ref)
	return func(h Header) bool {
		if err != nil {
			return false
		}
		if sum.Conversion == nil { // no image folder: read as it is
			return h.Takes(sum.Shape, len(sum.Classes))
		}
		opt, oerr := h.ImageOptions(data.Options{})
		if oerr != nil || opt.ImageSize == 0 {
			return false // a model that takes no folder's images
		}
		s, derr := data.DescribeWith(ref, opt)
		return derr == nil && h.Takes(s.Shape, len(s.Classes))
	}
}
