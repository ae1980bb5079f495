package data

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Default paths of the datasets a Debian machine installs: the package
// dataset-fashion-mnist and python3-sklearn's bundled CSVs.
const (
	FashionMNISTDir = "/usr/share/datasets/fashion-mnist"
	SklearnDataDir  = "/usr/lib/python3/dist-packages/sklearn/datasets/data"
)

// IDs are the short names Open accepts.
func IDs() []string {
	return []string{"fashion-mnist", "iris", "wine", "breast-cancer", "digits", "gmm"}
}

// Options tune Open for formats that need them.
type Options struct {
	Label     string  // CSV label column (name or index; default last)
	ImageSize int     // image folders: side in pixels (default 28)
	Channels  int     // image folders: 1 or 3 (default 1)
	TestFrac  float64 // held-out fraction for sets without a test split (default 0.2)
	Seed      uint64  // seed of that split and of gmm
}

// Open loads a dataset by short id or path and returns its train and test
// splits. Paths may be an IDX folder (train-images-idx3-ubyte[.gz] …), a
// CIFAR binary folder, an image folder (with train/ and test/ sub-folders or
// one sub-folder per class), a .csv, or a .npz with x_train, y_train, x_test,
// y_test (or x, y). Tabular sets are standardised on the train split.
func Open(ref string, opt Options) (train, test *Dataset, err error) {
	if opt.TestFrac == 0 {
		opt.TestFrac = 0.2
	}
	if opt.ImageSize == 0 {
		opt.ImageSize = 28
	}
	if opt.Channels == 0 {
		opt.Channels = 1
	}
	split := func(d *Dataset) (*Dataset, *Dataset, error) {
		a, b := d.Split(opt.TestFrac, opt.Seed)
		if a.Len() == 0 || b.Len() == 0 {
			return nil, nil, fmt.Errorf("%s: %d samples are too few to hold out %.0f%% for testing", d.Name, d.Len(), 100*opt.TestFrac)
		}
		b.Name = d.Name + "-test"
		return a, b, nil
	}
	tabular := func(d *Dataset, err error) (*Dataset, *Dataset, error) {
		if err != nil {
			return nil, nil, err
		}
		a, b, err := split(d)
		if err != nil {
			return nil, nil, err
		}
		standardize(a, b)
		return a, b, nil
	}
	switch ref {
	case "fashion-mnist":
		return loadIDXDir(FashionMNISTDir, "fashion-mnist", FashionMNISTClasses())
	case "iris", "wine", "breast-cancer":
		file := map[string]string{"iris": "iris.csv", "wine": "wine_data.csv", "breast-cancer": "breast_cancer.csv"}[ref]
		return tabular(LoadSklearnCSV(filepath.Join(SklearnDataDir, file), ref, true))
	case "digits":
		d, err := LoadSklearnCSV(filepath.Join(SklearnDataDir, "digits.csv.gz"), "digits", false)
		if err != nil {
			return nil, nil, err
		}
		// 8×8 greyscale images with values 0–16.
		d.Shape = []int{1, 8, 8}
		for i := range d.X {
			d.X[i] /= 16
		}
		return split(d)
	case "gmm":
		d, err := GaussianMixture{Dim: 20, Samples: 6000, Seed: opt.Seed}.Generate()
		if err != nil {
			return nil, nil, err
		}
		return split(d)
	}
	st, err := os.Stat(ref)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset %q is neither a known id (%s) nor a readable path: %w", ref, strings.Join(IDs(), ", "), err)
	}
	name := strings.TrimSuffix(filepath.Base(ref), filepath.Ext(ref))
	if !st.IsDir() {
		switch strings.ToLower(filepath.Ext(ref)) {
		case ".csv", ".gz":
			return tabular(LoadCSV(ref, opt.Label))
		case ".npz":
			arrs, err := LoadNPZ(ref)
			if err != nil {
				return nil, nil, err
			}
			if arrs["x_train"] != nil {
				tr, err := npzSplit(ref, name, arrs, "x_train", "y_train")
				if err != nil {
					return nil, nil, err
				}
				te, err := npzSplit(ref, name+"-test", arrs, "x_test", "y_test")
				if err != nil {
					return nil, nil, err
				}
				return tr, te, nil
			}
			d, err := npzSplit(ref, name, arrs, "x", "y")
			if err != nil {
				return nil, nil, err
			}
			return split(d)
		}
		return nil, nil, fmt.Errorf("dataset %s: unknown file type (want .csv, .npz or a folder)", ref)
	}
	if matches, _ := filepath.Glob(filepath.Join(ref, "train-images-idx3-ubyte*")); len(matches) > 0 {
		return loadIDXDir(ref, name, nil)
	}
	if _, err := os.Stat(filepath.Join(ref, "test_batch.bin")); err == nil {
		return LoadCIFAR(ref)
	}
	if _, err := os.Stat(filepath.Join(ref, "test.bin")); err == nil {
		return LoadCIFAR(ref)
	}
	if st, err := os.Stat(filepath.Join(ref, "train")); err == nil && st.IsDir() {
		tr, err := LoadImageFolder(filepath.Join(ref, "train"), opt.ImageSize, opt.Channels)
		if err != nil {
			return nil, nil, err
		}
		te, err := LoadImageFolder(filepath.Join(ref, "test"), opt.ImageSize, opt.Channels)
		if err != nil {
			return nil, nil, err
		}
		tr.Name, te.Name = name, name+"-test"
		return tr, te, nil
	}
	d, err := LoadImageFolder(ref, opt.ImageSize, opt.Channels)
	if err != nil {
		return nil, nil, err
	}
	return split(d)
}

func npzSplit(path, name string, arrs map[string]*Array, xk, yk string) (*Dataset, error) {
	x, y := arrs[xk], arrs[yk]
	if x == nil || y == nil {
		return nil, fmt.Errorf("load %s: needs arrays %s and %s", path, xk, yk)
	}
	d, err := datasetFromArrays(name, x, y)
	if err != nil {
		return nil, fmt.Errorf("load %s: %s/%s: %w", path, xk, yk, err)
	}
	return d, nil
}

func loadIDXDir(dir, name string, classes []string) (*Dataset, *Dataset, error) {
	find := func(base string) string {
		for _, p := range []string{base + ".gz", base} {
			if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
				return filepath.Join(dir, p)
			}
		}
		return filepath.Join(dir, base+".gz")
	}
	tr, err := LoadIDX(name, find("train-images-idx3-ubyte"), find("train-labels-idx1-ubyte"), classes)
	if err != nil {
		return nil, nil, err
	}
	te, err := LoadIDX(name+"-test", find("t10k-images-idx3-ubyte"), find("t10k-labels-idx1-ubyte"), classes)
	if err != nil {
		return nil, nil, err
	}
	return tr, te, nil
}
