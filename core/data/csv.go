package data

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// LoadCSV reads a tabular dataset: a header row of column names, one sample
// per row, numeric features, and a label column chosen by name or by index
// ("" means the last column; a negative index counts from the end). Labels
// may be integers or names; classes are their sorted distinct values.
func LoadCSV(path, label string) (*Dataset, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	d, err := parseCSV(b, label)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	d.Name = path
	return d, nil
}

func parseCSV(b []byte, label string) (*Dataset, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, errors.New("empty file")
	}
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	col := len(header) - 1
	if label != "" {
		col = slices.Index(header, label)
		if col < 0 {
			i, err := strconv.Atoi(label)
			if err != nil {
				return nil, fmt.Errorf("no column %q in header %v", label, header)
			}
			if i < 0 {
				i += len(header)
			}
			if i < 0 || i >= len(header) {
				return nil, fmt.Errorf("label column %d outside the %d columns", i, len(header))
			}
			col = i
		}
	}
	if len(header) < 2 {
		return nil, fmt.Errorf("%d columns: need features and a label", len(header))
	}
	var x []float32
	var labels []string
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		for j, cell := range rec {
			if j == col {
				labels = append(labels, strings.TrimSpace(cell))
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(cell), 32)
			if err != nil {
				return nil, fmt.Errorf("line %d, column %q: non-numeric cell %q", line, header[j], cell)
			}
			x = append(x, float32(v))
		}
	}
	if len(labels) == 0 {
		return nil, errors.New("no data rows: empty set")
	}
	classes, y := classify(labels)
	d := &Dataset{Shape: []int{len(header) - 1, 1, 1}, X: x, Y: y, Classes: classes}
	return d, d.Validate()
}

// classify maps label strings to indices: numerically sorted when every label
// is an integer, lexically otherwise.
func classify(labels []string) ([]string, []int) {
	set := map[string]bool{}
	for _, l := range labels {
		set[l] = true
	}
	classes := make([]string, 0, len(set))
	for l := range set {
		classes = append(classes, l)
	}
	numeric := true
	for _, c := range classes {
		if _, err := strconv.Atoi(c); err != nil {
			numeric = false
		}
	}
	sort.Slice(classes, func(i, j int) bool {
		if numeric {
			a, _ := strconv.Atoi(classes[i])
			b, _ := strconv.Atoi(classes[j])
			return a < b
		}
		return classes[i] < classes[j]
	})
	idx := map[string]int{}
	for i, c := range classes {
		idx[c] = i
	}
	y := make([]int, len(labels))
	for i, l := range labels {
		y[i] = idx[l]
	}
	return classes, y
}

// LoadSklearnCSV reads the CSV layout of scikit-learn's bundled datasets: a
// first line "n_samples,n_features,class names…", then rows of features with
// an integer label last. With header false (digits.csv.gz) there is no first
// line and the classes are the distinct labels.
func LoadSklearnCSV(path, name string, header bool) (*Dataset, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	d, err := parseSklearnCSV(b, header)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	d.Name = name
	return d, nil
}

func parseSklearnCSV(b []byte, header bool) (*Dataset, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	n, dim := -1, -1
	var classes []string
	if header {
		h, err := r.Read()
		if err != nil {
			return nil, fmt.Errorf("header: %w", err)
		}
		if len(h) < 2 {
			return nil, fmt.Errorf("header %v: want n_samples,n_features,class names", h)
		}
		if n, err = strconv.Atoi(strings.TrimSpace(h[0])); err != nil || n <= 0 {
			return nil, fmt.Errorf("header: sample count %q", h[0])
		}
		if dim, err = strconv.Atoi(strings.TrimSpace(h[1])); err != nil || dim <= 0 {
			return nil, fmt.Errorf("header: feature count %q", h[1])
		}
		classes = h[2:]
	}
	var x []float32
	var y []int
	for line := 1 + btoi(header); ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if dim < 0 {
			dim = len(rec) - 1
		}
		if len(rec) != dim+1 {
			return nil, fmt.Errorf("line %d: %d cells, want %d features and a label", line, len(rec), dim)
		}
		for j, cell := range rec[:dim] {
			v, err := strconv.ParseFloat(strings.TrimSpace(cell), 32)
			if err != nil {
				return nil, fmt.Errorf("line %d, column %d: non-numeric cell %q", line, j+1, cell)
			}
			x = append(x, float32(v))
		}
		l, err := strconv.ParseFloat(strings.TrimSpace(rec[dim]), 64)
		if err != nil || l != float64(int(l)) || l < 0 || l >= maxClasses {
			return nil, fmt.Errorf("line %d: label %q is not a class index in [0, %d)", line, rec[dim], maxClasses)
		}
		y = append(y, int(l))
	}
	if len(y) == 0 {
		return nil, errors.New("no data rows: empty set")
	}
	if n >= 0 && len(y) != n {
		return nil, fmt.Errorf("header says %d samples, file has %d", n, len(y))
	}
	if classes == nil {
		classes = numbered(slices.Max(y) + 1)
	}
	d := &Dataset{Shape: []int{dim, 1, 1}, X: x, Y: y, Classes: classes}
	return d, d.Validate()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
