package data

import (
	"fmt"
	"path/filepath"
)

// Summary is what a dataset holds: its sample shape, the sizes of its
// splits, its classes and whether it carries a ground-truth mask per
// sample (Dataset.Masks); for an image folder, how its files became
// the samples (Conversion).
type Summary struct {
	Shape       []int
	Train, Test int
	Classes     []string
	Masks       bool
	Conversion  *Conversion
}

// Describe says what Open(ref, Options{}) returns without decoding the
// samples where the format allows it: an IDX set is described by its four
// headers (and its label files when its classes are not known); any other
// set is opened. It checks the headers against each other, not the
// payloads: a file cut short is found when the set is opened.
func Describe(ref string) (Summary, error) { return DescribeWith(ref, Options{}) }

// DescribeWith is Describe for Open(ref, opt): an image folder described
// at the side, channels and classes a model reads it with
// (model.Header.ImageOptions), not at Open's defaults (28×28 grey).
func DescribeWith(ref string, opt Options) (Summary, error) {
	dir, classes := ref, []string(nil)
	switch ref {
	case "fashion-mnist":
		dir, classes = FashionMNISTDir, FashionMNISTClasses()
	case "fashion-mnist-planted":
		s, err := describeIDX(FashionMNISTDir, PlantedClasses())
		s.Masks = true
		return s, err
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "train-images-idx3-ubyte*")); len(matches) > 0 {
		return describeIDX(dir, classes)
	}
	tr, te, err := Open(ref, opt)
	if err != nil {
		return Summary{}, err
	}
	return Summary{Shape: tr.Shape, Train: tr.Len(), Test: te.Len(), Classes: tr.Classes, Masks: tr.Masks != nil, Conversion: tr.Conversion}, nil
}

func describeIDX(dir string, classes []string) (Summary, error) {
	files := idxFiles(dir)
	var s Summary
	var dims [4][]int
	for i, path := range files {
		c, err := openContent(path, maxIDXFileBytes)
		if err != nil {
			return s, fmt.Errorf("load %s: %w", path, err)
		}
		dims[i], _, err = readIDXHeader(c.r)
		c.close()
		if err != nil {
			return s, fmt.Errorf("load %s: IDX: %w", path, err)
		}
	}
	for i := 0; i < 4; i += 2 {
		if im, lb := dims[i], dims[i+1]; len(im) != 3 || len(lb) != 1 || lb[0] != im[0] {
			return s, fmt.Errorf("load %s: images of shape %v and labels of shape %v: want n×H×W and n", dir, im, lb)
		}
	}
	if dims[0][1] != dims[2][1] || dims[0][2] != dims[2][2] {
		return s, fmt.Errorf("load %s: training images of %d×%d, test images of %d×%d", dir, dims[0][1], dims[0][2], dims[2][1], dims[2][2])
	}
	if classes == nil {
		k := 0
		for _, path := range []string{files[1], files[3]} {
			lb, err := openIDX(path)
			if err != nil {
				return s, fmt.Errorf("load %s: %w", path, err)
			}
			err = lb.read(int(lb.total), func(_ int, piece []byte) {
				for _, b := range piece {
					k = max(k, int(b)+1)
				}
			})
			lb.close()
			if err != nil {
				return s, fmt.Errorf("load %s: %w", path, err)
			}
		}
		classes = numbered(k)
	}
	return Summary{Shape: []int{1, dims[0][1], dims[0][2]}, Train: dims[0][0], Test: dims[2][0], Classes: classes}, nil
}
