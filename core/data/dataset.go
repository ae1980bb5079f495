package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Dataset holds n labelled samples of one shape.
type Dataset struct {
	Name    string
	Shape   []int     // C, H, W of one sample
	X       []float32 // n×C×H×W
	Y       []int     // n labels in [0, len(Classes))
	Classes []string
	// Features names the values of a tabular sample (a CSV's header), when
	// the file names them.
	Features []string
	// Standardization, when set, was applied to X: x = (raw − Mean)/Std per feature.
	Standardization *Standardization
	// Truth, when the generator knows it, is the ground-truth attribution
	// of each class (one value per value of a sample): the features that
	// tell that class from the others, signed toward it.
	Truth [][]float32
	// Masks, when the set carries them, is each sample's ground-truth
	// mask, n×H×W, 1 where the evidence for its label lies and 0 elsewhere
	// (the planted-truth set, or masks beside an image folder): what the
	// localisation metrics compare a map with.
	Masks []float32
	// Rows, where Split made the set — from a file Faithlab splits itself
	// (a CSV, an .npz of x and y, an image folder without train/ and test/,
	// the built-in tables) or, in training, a validation part of any set —
	// is each sample's position among the SourceLen samples split, so that
	// what another tool made for a file's rows can be lined up with a
	// split; nil for a file's own splits (IDX, CIFAR, x_train/x_test).
	Rows      []int
	SourceLen int
	// Unlabelled says that the samples came without labels (an image
	// folder of images and no class folders, read for a model that
	// explains its predicted class): Y is 0 throughout and means nothing.
	Unlabelled bool
	// Drawn, where Balanced drew the samples from a split (a spec's
	// test_samples of an image folder), is each sample's position in that
	// split; nil where the samples are the split's first (Head) or all.
	Drawn []int
	// Conversion, for samples read from an image folder, says how its
	// files became the samples (nil for any other format).
	Conversion *Conversion
	// folder marks a split Open read from an image folder, whose heads
	// it draws balanced over the classes (Balanced).
	folder bool
}

// Standardization is a per-feature affine normalisation.
type Standardization struct {
	Mean, Std []float32
}

// Kind is "tabular" for samples of shape D×1×1 (a table's rows) and
// "image" for any other C×H×W: the words methods and protocols list the
// data they take in.
func Kind(shape []int) string {
	if len(shape) == 3 && shape[1] == 1 && shape[2] == 1 {
		return "tabular"
	}
	return "image"
}

// Len is the number of samples.
func (d *Dataset) Len() int { return len(d.Y) }

// Dim is the number of values in one sample.
func (d *Dataset) Dim() int { return d.Shape[0] * d.Shape[1] * d.Shape[2] }

// Sample returns sample i (a view, not a copy).
func (d *Dataset) Sample(i int) []float32 { return d.X[i*d.Dim() : (i+1)*d.Dim()] }

// Validate reports the first inconsistency: wrong sizes, labels out of range,
// non-finite values, or an empty set.
func (d *Dataset) Validate() error {
	if len(d.Shape) != 3 || slices.Min(d.Shape) <= 0 {
		return fmt.Errorf("%s: sample shape %v: want C, H, W, all positive", d.Name, d.Shape)
	}
	if d.Len() == 0 {
		return fmt.Errorf("%s: empty dataset", d.Name)
	}
	if len(d.X) != d.Len()*d.Dim() {
		return fmt.Errorf("%s: %d values for %d samples of %v", d.Name, len(d.X), d.Len(), d.Shape)
	}
	if len(d.Classes) < 2 {
		return fmt.Errorf("%s: %d classes: need at least 2", d.Name, len(d.Classes))
	}
	for i, y := range d.Y {
		if y < 0 || y >= len(d.Classes) {
			return fmt.Errorf("%s: sample %d has label %d outside [0, %d)", d.Name, i, y, len(d.Classes))
		}
	}
	for i, v := range d.X {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%s: sample %d has a non-finite value", d.Name, i/d.Dim())
		}
	}
	if d.Masks != nil {
		if len(d.Masks) != d.Len()*d.MaskLen() {
			return fmt.Errorf("%s: %d mask values for %d samples of %d×%d", d.Name, len(d.Masks), d.Len(), d.Shape[1], d.Shape[2])
		}
		for i, v := range d.Masks {
			if v != 0 && v != 1 {
				return fmt.Errorf("%s: sample %d's mask holds %g: want 0 or 1", d.Name, i/d.MaskLen(), v)
			}
		}
	}
	return nil
}

// MaskLen is the number of values in one sample's mask: H×W.
func (d *Dataset) MaskLen() int { return d.Shape[1] * d.Shape[2] }

// Subset returns the samples at idx, copied, in that order.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := &Dataset{Name: d.Name, Shape: d.Shape, Classes: d.Classes, Features: d.Features, Standardization: d.Standardization, Truth: d.Truth, Unlabelled: d.Unlabelled, Conversion: d.Conversion,
		X: make([]float32, 0, len(idx)*d.Dim()), Y: make([]int, 0, len(idx))}
	for _, i := range idx {
		s.X = append(s.X, d.Sample(i)...)
		s.Y = append(s.Y, d.Y[i])
	}
	if d.Masks != nil {
		a := d.MaskLen()
		s.Masks = make([]float32, 0, len(idx)*a)
		for _, i := range idx {
			s.Masks = append(s.Masks, d.Masks[i*a:(i+1)*a]...)
		}
	}
	if d.Rows != nil {
		s.Rows, s.SourceLen = make([]int, len(idx)), d.SourceLen
		for j, i := range idx {
			s.Rows[j] = d.Rows[i]
		}
	}
	if d.Drawn != nil {
		s.Drawn = make([]int, len(idx))
		for j, i := range idx {
			s.Drawn[j] = d.Drawn[i]
		}
	}
	return s
}

// SplitPositions say which inputs of their split d's samples are, as
// attr.Input takes them: index, each sample's position in the split (nil:
// 0…Len−1, where d is the split or its first samples), and rows, indexed
// by that position, each one's position in the file Faithlab split (nil
// where it split none; where d was drawn, only the drawn positions are
// set, the others −1).
func (d *Dataset) SplitPositions() (index, rows []int) {
	if d.Drawn == nil || d.Rows == nil {
		return d.Drawn, d.Rows
	}
	rows = make([]int, slices.Max(d.Drawn)+1)
	for i := range rows {
		rows[i] = -1
	}
	for j, p := range d.Drawn {
		rows[p] = d.Rows[j]
	}
	return d.Drawn, rows
}

// Head returns the first n samples (all when n ≥ Len), copied.
func (d *Dataset) Head(n int) *Dataset {
	idx := make([]int, min(n, d.Len()))
	for i := range idx {
		idx[i] = i
	}
	return d.Subset(idx)
}

// Balanced returns n samples (all, in order, when n ≥ Len) drawn evenly
// over the classes with seed, copied: each class's samples in an order
// shuffled by the seed, the classes visited round-robin in an order
// shuffled by the seed, one sample from each in turn, a class that runs
// out skipped. The samples keep the order they were drawn in; Drawn
// records each one's position in d (SplitPositions), and Rows, where d has
// them, its position in d's file.
func (d *Dataset) Balanced(n int, seed uint64) *Dataset {
	if n >= d.Len() {
		return d.Subset(seq(d.Len()))
	}
	r := rand.New(rand.NewPCG(seed, 0xba1a))
	per := make([][]int, len(d.Classes))
	for i, y := range d.Y {
		per[y] = append(per[y], i)
	}
	for _, p := range per {
		r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	}
	order := r.Perm(len(per))
	idx := make([]int, 0, n)
	for round := 0; len(idx) < n; round++ {
		for _, c := range order {
			if round < len(per[c]) && len(idx) < n {
				idx = append(idx, per[c][round])
			}
		}
	}
	s := d.Subset(idx)
	if s.Drawn == nil {
		s.Drawn = idx
	}
	return s
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// Split shuffles with seed and returns the first (1−frac) and the last frac
// of the samples; used for validation and for datasets without a test split.
//
// The parts' Rows say where each sample sits in d (or in d's own source,
// when d was itself split from one).
func (d *Dataset) Split(frac float64, seed uint64) (*Dataset, *Dataset) {
	perm := rand.New(rand.NewPCG(seed, 0x5eed)).Perm(d.Len())
	k := SplitLen(d.Len(), frac)
	whole := d
	if d.Rows == nil {
		whole = &Dataset{}
		*whole = *d
		whole.Rows, whole.SourceLen = make([]int, d.Len()), d.Len()
		for i := range whole.Rows {
			whole.Rows[i] = i
		}
	}
	return whole.Subset(perm[:k]), whole.Subset(perm[k:])
}

// SplitLen is the length of the first part Split makes of n samples.
func SplitLen(n int, frac float64) int { return n - int(math.Round(frac*float64(n))) }

// ClassCounts counts the samples of each class.
func (d *Dataset) ClassCounts() []int {
	c := make([]int, len(d.Classes))
	for _, y := range d.Y {
		c[y]++
	}
	return c
}

// standardize computes per-feature mean and std on d and applies them to d
// and to each of others (e.g. the test split).
func standardize(d *Dataset, others ...*Dataset) {
	dim := d.Dim()
	st := &Standardization{Mean: make([]float32, dim), Std: make([]float32, dim)}
	for j := 0; j < dim; j++ {
		var s, ss float64
		for i := 0; i < d.Len(); i++ {
			v := float64(d.X[i*dim+j])
			s += v
			ss += v * v
		}
		n := float64(d.Len())
		mean := s / n
		sd := math.Sqrt(math.Max(ss/n-mean*mean, 0))
		if sd < 1e-12 {
			sd = 1
		}
		st.Mean[j], st.Std[j] = float32(mean), float32(sd)
	}
	for _, ds := range append([]*Dataset{d}, others...) {
		for i := 0; i < ds.Len(); i++ {
			for j := 0; j < dim; j++ {
				ds.X[i*dim+j] = (ds.X[i*dim+j] - st.Mean[j]) / st.Std[j]
			}
		}
		ds.Standardization = st
	}
}
