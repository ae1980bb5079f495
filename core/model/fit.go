package model

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/train"
)

// Source says where a model's training data came from and how it was
// read, so that every later use of the model — eval, attribute, a
// campaign, the workbench — opens the same test split (for datasets
// without one: the same held-out fraction and seed) with the same options.
type Source struct {
	Ref     string       `json:"ref"` // dataset id or path, as given
	Options data.Options `json:"options"`
}

// Fit is one training job: a built-in architecture trained on Train with
// Config (zero fields: train.Config's defaults, GOAR's recipe), then
// evaluated on Test. It is the one way the CLI, a campaign and the
// workbench make a trained model.
type Fit struct {
	Arch   string
	Config train.Config
	Train  *data.Dataset
	Test   *data.Dataset // evaluated after training; nil: no test evaluation
	Source *Source       // recorded in the model; nil: unknown
	Kernel gemm.Kernel
	// Engine trains and evaluates (nil: native). The model starts from
	// the native engine's initialisation and is saved as a model file on
	// every engine.
	Engine *Engine
	// Out, when set, is the file the model is saved to; it is checked
	// before the first epoch, so that a bad path fails at once.
	Out string
}

// Run trains, evaluates and (with Out) saves the model. Progress goes to
// progress (nil: none) after every batch and epoch. A cancelled context
// stops within the current piece of a batch and returns ctx's error with
// nothing saved.
func (f Fit) Run(ctx context.Context, progress func(train.Progress)) (*Model, error) {
	if f.Train == nil {
		return nil, errors.New("fit: no training data")
	}
	if f.Out != "" {
		if err := CheckWritable(f.Out); err != nil {
			return nil, err
		}
	}
	m, err := New(f.Arch, f.Train, f.Kernel, f.Config.Seed)
	if err != nil {
		return nil, err
	}
	if f.Source != nil {
		src := *f.Source
		m.Source = &src
	}
	net, err := f.Engine.Network(ctx, m)
	if err != nil {
		return nil, err
	}
	rec, err := train.Train(ctx, net, f.Train, f.Config, progress)
	if err != nil {
		return nil, err
	}
	if net != engine.Network(m.Net) {
		if err := CopyWeights(m.Net, net); err != nil {
			return nil, err
		}
	}
	m.Training = &rec
	if f.Test != nil {
		if err := m.check(f.Test); err != nil {
			return nil, err
		}
		ev, err := train.Evaluate(ctx, net, f.Test, 512)
		if err != nil {
			return nil, err
		}
		m.Test = &ev
	}
	if f.Out != "" {
		if err := m.Save(f.Out); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Data opens a dataset as the model saw it in training: with the options
// its Source records (so a dataset without a test split is split as it was
// for training), read raw and scaled by the model's own standardisation,
// and checked against the model's input shape and classes. ref "" means
// the model's own dataset. Models written before sources were recorded
// split with their training seed, as `faithlab-cli train` did, and opt's
// other fields. opt's heads (the samples kept) apply in both cases. An
// image folder is decoded as the model takes its inputs (DataOptions).
func (m *Model) Data(ref string, opt data.Options) (trainSet, testSet *data.Dataset, err error) {
	if ref, err = m.DataRef(ref); err != nil {
		return nil, nil, err
	}
	if opt, err = m.DataOptions(opt); err != nil {
		return nil, nil, fmt.Errorf("dataset %s: %w", ref, err)
	}
	opt.Raw = true
	trainSet, testSet, err = data.Open(ref, opt)
	if err != nil {
		return nil, nil, err
	}
	for _, ds := range []*data.Dataset{trainSet, testSet} {
		if err := m.check(ds); err != nil {
			return nil, nil, err
		}
		if st := m.Standardization; st != nil {
			standardize(ds, st)
		}
	}
	return trainSet, testSet, nil
}

// DataRef is the dataset that Data opens: ref, or when ref is "" the
// model's own (its Source); an error when the model records none.
func (m *Model) DataRef(ref string) (string, error) {
	if ref == "" && m.Source != nil {
		ref = m.Source.Ref
	}
	if ref == "" {
		return "", errors.New("the model does not record its dataset: name one")
	}
	return ref, nil
}

// DataOptions are the options Data opens a dataset with, given opt: the
// ones the model's Source records (opt's heads and Unlabelled kept) or, for a model that
// records none, opt with the training seed; then ImageOptions.
func (h Header) DataOptions(opt data.Options) (data.Options, error) {
	if _, err := h.ImageOptions(opt); err != nil {
		return opt, err // what the user asked for, before the record's
	}
	if src := h.Source; src != nil {
		trainHead, testHead, unlabelled := opt.TrainHead, opt.TestHead, opt.Unlabelled
		opt = src.Options.Applied(h.InputShape)
		opt.TrainHead, opt.TestHead, opt.Unlabelled = trainHead, testHead, unlabelled
	} else if h.Training != nil {
		opt.Seed = h.Training.Config.Seed
	}
	return h.ImageOptions(opt)
}

// ImageOptions are opt with an image folder's decoding set from the
// model's input shape: its side (a square input) and its channels (1 or
// 3), where opt leaves them 0; its class folders matched to the model's
// classes (by name, or by WordNet id where its description lists them:
// data.Options.Classes); its images resized as the description declares
// (Input.Resize; squashed without one). A side or channel count that opt
// asks for and the model does not take is an error naming both. A model
// that takes no images a folder gives (other channel counts: tabular
// data) leaves opt as it is.
func (h Header) ImageOptions(opt data.Options) (data.Options, error) {
	if len(h.InputShape) != 3 || (h.InputShape[0] != 1 && h.InputShape[0] != 3) {
		return opt, nil
	}
	c, y, x := h.InputShape[0], h.InputShape[1], h.InputShape[2]
	takes := fmt.Sprintf("the model takes %d×%d×%d inputs (%s)", c, y, x, map[int]string{1: "grey", 3: "RGB"}[c])
	if opt.ImageSize != 0 && (opt.ImageSize != y || opt.ImageSize != x) {
		return opt, fmt.Errorf("images of %d×%d pixels asked for, but %s", opt.ImageSize, opt.ImageSize, takes)
	}
	if opt.Channels != 0 && opt.Channels != c {
		return opt, fmt.Errorf("%d-channel images asked for, but %s", opt.Channels, takes)
	}
	opt.Channels = c
	if y == x {
		opt.ImageSize = y
	}
	opt.Classes = &data.ClassList{Names: h.Classes}
	if h.Input != nil {
		opt.Classes.WNIDs, opt.Resize = h.Input.WNIDs, h.Input.Resize
	}
	return opt, nil
}

// check says whether ds's samples fit the model.
func (m *Model) check(ds *data.Dataset) error {
	if !slices.Equal(ds.Shape, m.InputShape) {
		return fmt.Errorf("%s samples have shape %v, the model expects %v", ds.Name, ds.Shape, m.InputShape)
	}
	if len(ds.Classes) != len(m.Classes) {
		return fmt.Errorf("%s has %d classes, the model %d: give its labels as the model's class indices (an image folder's class folders are matched to the model's classes by name, or by ImageNet wnid where its description lists them)", ds.Name, len(ds.Classes), len(m.Classes))
	}
	return nil
}

// standardize scales a raw dataset in place by st: x = (raw − Mean)/Std.
func standardize(ds *data.Dataset, st *data.Standardization) {
	dim := ds.Dim()
	for i := range ds.Len() {
		x := ds.X[i*dim : (i+1)*dim]
		for j := range x {
			x[j] = (x[j] - st.Mean[j]) / st.Std[j]
		}
	}
	ds.Standardization = st
}

// CheckWritable says whether a file can be written at path: its folder
// exists and takes new files, and path is not a folder. It leaves
// nothing behind, so that a command can check its output before hours of work.
func CheckWritable(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("output %s is a folder: name a file", path)
	} else if err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("output %s is not a regular file (a device or a pipe): name a file", path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("output %s: folder %s: %w", path, dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("output %s: %s is not a folder", path, dir)
	}
	probe, err := os.CreateTemp(dir, ".faithlab-write-check-*")
	if err != nil {
		return fmt.Errorf("output %s: cannot write in %s: %w", path, dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// Architectures lists the built-in architectures Fit trains.
func Architectures() []string { return native.Architectures() }

// Fits says whether a built-in architecture can be built for ds's samples
// and classes (goar-cnn needs images large enough for its three
// convolutions, say), and why not.
func Fits(arch string, ds *data.Dataset) error {
	_, err := native.New(arch, ds.Shape, len(ds.Classes), gemm.Gonum{})
	return err
}

// Copy returns the model with a network of its own (networks are not safe
// for concurrent use): what a piece of background work uses while others
// use the model.
func (m *Model) Copy() *Model {
	c := *m
	if m.Net != nil {
		c.Net = m.Net.Clone().(*native.Net)
	}
	return &c
}
