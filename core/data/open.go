package data

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	return []string{"fashion-mnist", "fashion-mnist-planted", "iris", "wine", "breast-cancer", "digits", "gmm"}
}

// IsID reports whether ref names a built-in dataset (IDs, or gmm with its
// settings, ParseGMM) rather than a path.
func IsID(ref string) bool {
	_, ok, _ := ParseGMM(ref)
	return ok || slices.Contains(IDs(), ref)
}

// Options tune Open for formats that need them.
type Options struct {
	Label     string  `json:"label,omitempty"`      // CSV label column (name or index; default last)
	ImageSize int     `json:"image_size,omitempty"` // image folders: side in pixels (default 28)
	Channels  int     `json:"channels,omitempty"`   // image folders: 1 or 3 (default 1)
	TestFrac  float64 `json:"test_fraction"`        // held-out fraction for sets without a test split (default 0.2)
	Seed      uint64  `json:"seed"`                 // seed of that split, of gmm and of fashion-mnist-planted's labels
	// Raw leaves tabular sets as read; otherwise Open standardises them
	// with the training split's statistics (Dataset.Standardization).
	Raw bool `json:"-"`
	// TrainHead and TestHead keep only the first n samples of each split
	// (0: all; more than a split holds is an error). A split the files hold apart (IDX) is read only that far;
	// others are cut after loading and splitting; an image folder's are
	// drawn balanced over its classes with Seed (Dataset.Balanced).
	TrainHead, TestHead int `json:"-"`

	// For a model (model.Header.ImageOptions sets them from its
	// description), an image folder is read with:
	//
	// Classes, the model's classes, which the class folders are matched to
	// (by name or WordNet id: a folder of 4 classes for a 1000-class
	// model; labels are the model's indices and the set's Classes its
	// list), nil for the folder's own classes in lexical order;
	Classes *ClassList `json:"-"`
	// Resize, how an image is brought to the model's side (zero: squashed);
	Resize Resize `json:"-"`
	// Unlabelled, to take a folder of images without class folders
	// (Dataset.Unlabelled), for a command that explains the predicted
	// class only; without it such a folder is refused, saying why.
	Unlabelled bool `json:"-"`
}

// Applied is o without the image folder's side and channels where the
// samples read with o are not of that shape (shape: channels, height,
// width): options that never applied, such as the train command's default
// size recorded for a dataset that is no folder of images (digits' 8×8).
func (o Options) Applied(shape []int) Options {
	if len(shape) != 3 {
		o.ImageSize, o.Channels = 0, 0
		return o
	}
	if o.ImageSize != 0 && (o.ImageSize != shape[1] || o.ImageSize != shape[2]) {
		o.ImageSize = 0
	}
	if o.Channels != 0 && o.Channels != shape[0] {
		o.Channels = 0
	}
	return o
}

// Open loads a dataset by short id or path and returns its train and test
// splits. Paths may be an IDX folder (train-images-idx3-ubyte[.gz] …), a
// CIFAR binary folder, an image folder (with train/ and test/ sub-folders or
// one sub-folder per class, or, with opt.Unlabelled, a folder of images
// alone, whose parts are both all of it), a .csv, or a .npz with x_train, y_train, x_test,
// y_test (or x, y). Tabular sets are standardised on the train split. The
// two parts of a set that comes with both must agree on the sample shape and
// the classes (checkParts), so that a mismatch is found on load, not after
// training. Each loader states the limits it applies to a file.
func Open(ref string, opt Options) (train, test *Dataset, err error) {
	if train, test, err = open(ref, opt); err != nil {
		return nil, nil, err
	}
	if err := CheckNames("class", train.Classes); err != nil {
		return nil, nil, fmt.Errorf("dataset %s: %w", ref, err)
	}
	for _, h := range []struct {
		set  **Dataset
		n    int
		name string
	}{{&train, opt.TrainHead, "training"}, {&test, opt.TestHead, "test"}} {
		switch have := (*h.set).Len(); {
		case h.n > have:
			// A cap above what the set holds is a mistake in the spec (a
			// record would claim samples the model never saw), not "all".
			return nil, nil, fmt.Errorf("dataset %s: %d %s samples asked for, its %s split holds %d", ref, h.n, h.name, h.name, have)
		case h.n > 0 && h.n < have && (*h.set).folder:
			*h.set = (*h.set).Balanced(h.n, opt.Seed)
		case h.n > 0 && h.n < have:
			*h.set = (*h.set).Head(h.n)
		}
	}
	return train, test, nil
}

func open(ref string, opt Options) (train, test *Dataset, err error) {
	if opt.TestFrac == 0 {
		opt.TestFrac = 0.2
	}
	defaulted := opt.ImageSize == 0 && opt.Channels == 0
	if opt.ImageSize == 0 {
		opt.ImageSize = 28
	}
	if opt.Channels == 0 {
		opt.Channels = 1
	}
	if !(opt.TestFrac > 0 && opt.TestFrac < 1) {
		return nil, nil, fmt.Errorf("dataset %s: held-out fraction %g: want a value in (0, 1)", ref, opt.TestFrac)
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
		if !opt.Raw {
			standardize(a, b)
		}
		return a, b, nil
	}
	switch ref {
	case "fashion-mnist":
		return loadIDXDir(FashionMNISTDir, "fashion-mnist", FashionMNISTClasses(), opt)
	case "fashion-mnist-planted":
		return openPlanted(opt)
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
	}
	if g, ok, err := ParseGMM(ref); ok {
		if err != nil {
			return nil, nil, err
		}
		g.Seed = opt.Seed
		d, err := g.Generate()
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
			z, err := OpenNPZ(ref)
			if err != nil {
				return nil, nil, err
			}
			defer z.Close()
			if z.Has("x_train") {
				tr, err := npzSplit(z, name, "x_train", "y_train")
				if err != nil {
					return nil, nil, err
				}
				te, err := npzSplit(z, name+"-test", "x_test", "y_test")
				if err != nil {
					return nil, nil, err
				}
				if err := checkParts(tr, te, true); err != nil {
					return nil, nil, fmt.Errorf("load %s: %w", ref, err)
				}
				return tr, te, nil
			}
			d, err := npzSplit(z, name, "x", "y")
			if err != nil {
				return nil, nil, err
			}
			return split(d)
		}
		return nil, nil, fmt.Errorf("dataset %s: unknown file type (want .csv, .npz or a folder)", ref)
	}
	if matches, _ := filepath.Glob(filepath.Join(ref, "train-images-idx3-ubyte*")); len(matches) > 0 {
		return loadIDXDir(ref, name, nil, opt)
	}
	if _, err := os.Stat(filepath.Join(ref, "test_batch.bin")); err == nil {
		return LoadCIFAR(ref)
	}
	if _, err := os.Stat(filepath.Join(ref, "test.bin")); err == nil {
		return LoadCIFAR(ref)
	}
	rd := folderRead{size: opt.ImageSize, channels: opt.Channels, resize: opt.Resize, classes: opt.Classes, unlabelled: opt.Unlabelled}
	rd.conv = newConversion(rd)
	rd.conv.Defaulted = defaulted
	if st, err := os.Stat(filepath.Join(ref, "train")); err == nil && st.IsDir() {
		// Links in train/ may lead into test/ or a folder of all images
		// beside them: inside the dataset's folder.
		tr, err := loadImageFolder(filepath.Join(ref, "train"), ref, rd)
		if err != nil {
			return nil, nil, err
		}
		te, err := loadImageFolder(filepath.Join(ref, "test"), ref, rd)
		if err != nil {
			return nil, nil, err
		}
		tr.Name, te.Name = name, name+"-test"
		if err := checkParts(tr, te, false); err != nil {
			return nil, nil, fmt.Errorf("load %s: %w", ref, err)
		}
		tr.folder, te.folder = true, true
		return tr, te, nil
	}
	d, err := loadImageFolder(ref, ref, rd)
	if err != nil {
		return nil, nil, err
	}
	if d.Unlabelled { // nothing trains on it: both parts are all of it
		te := d.Subset(seq(d.Len()))
		te.Name = d.Name + "-test"
		d.folder, te.folder = true, true
		return d, te, nil
	}
	tr, te, err := split(d)
	if err == nil {
		tr.folder, te.folder = true, true
	}
	return tr, te, err
}

// npzSplit reads the arrays xk (features) and yk (labels) of an .npz
// archive as a dataset.
func npzSplit(z *NPZ, name, xk, yk string) (*Dataset, error) {
	if !z.Has(xk) || !z.Has(yk) {
		return nil, fmt.Errorf("load %s: needs arrays %s and %s (holds %s)", z.Path, xk, yk, strings.Join(z.Names(), ", "))
	}
	y, err := z.Array(yk)
	if err != nil {
		return nil, err
	}
	x, err := z.Array(xk)
	if err != nil {
		return nil, err
	}
	d, err := datasetFromArrays(name, x, y)
	if err != nil {
		return nil, fmt.Errorf("load %s: %s/%s: %w", z.Path, xk, yk, err)
	}
	return d, nil
}

// checkParts checks that a dataset's training and test parts describe one
// problem: samples of one shape and the same classes. With numbered
// classes (named by the labels found, as IDX and .npz sets are), a test
// part whose labels are a subset of the training part's takes the training
// part's class list; a label beyond it is an error.
func checkParts(train, test *Dataset, numberedClasses bool) error {
	if !slices.Equal(train.Shape, test.Shape) {
		return fmt.Errorf("the training part's samples have shape %v, the test part's %v", train.Shape, test.Shape)
	}
	if slices.Equal(train.Classes, test.Classes) {
		return nil
	}
	if numberedClasses && len(test.Classes) <= len(train.Classes) {
		test.Classes = train.Classes
		return nil
	}
	if numberedClasses {
		return fmt.Errorf("the test part has a label %d, the training part only classes 0 to %d", len(test.Classes)-1, len(train.Classes)-1)
	}
	return fmt.Errorf("the training part has classes %v, the test part %v", train.Classes, test.Classes)
}

// idxFiles names an IDX folder's training images and labels and test
// images and labels, gzipped or raw (gzipped where neither is there, for
// the error).
func idxFiles(dir string) [4]string {
	var files [4]string
	for i, base := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		files[i] = filepath.Join(dir, base+".gz")
		if _, err := os.Stat(files[i]); err != nil {
			if _, err := os.Stat(filepath.Join(dir, base)); err == nil {
				files[i] = filepath.Join(dir, base)
			}
		}
	}
	return files
}

func loadIDXDir(dir, name string, classes []string, opt Options) (*Dataset, *Dataset, error) {
	f := idxFiles(dir)
	tr, err := loadIDX(name, f[0], f[1], classes, opt.TrainHead)
	if err != nil {
		return nil, nil, err
	}
	te, err := loadIDX(name+"-test", f[2], f[3], classes, opt.TestHead)
	if err != nil {
		return nil, nil, err
	}
	if err := checkParts(tr, te, classes == nil); err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", dir, err)
	}
	return tr, te, nil
}
