package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// openCSV opens a CSV file, raw or gzipped, as a stream of at most
// maxCSVBytes (256 MiB, after gunzipping) whose lines are at most
// maxCSVLine (16 MiB) long.
func openCSV(path string) (io.Reader, func() error, error) {
	c, err := openContent(path, maxCSVBytes)
	if err != nil {
		return nil, nil, err
	}
	r := c.r
	if c.gzipped {
		r = &limitedReader{r: r, left: maxCSVBytes, limit: maxCSVBytes}
	}
	return &lineLimitReader{r: r, max: maxCSVLine}, c.close, nil
}

// LoadCSV reads a tabular dataset: a header row of column names, one sample
// per row, numeric features, and a label column chosen by name or by index
// ("" means the last column; a negative index counts from the end). Labels
// may be integers or names; classes are their sorted distinct values.
// Features are decimal numbers (parseNumber: no NaN, no infinities, no
// underscores or hexadecimal); a cell that is not one is reported with its
// 1-based line and its column. The file, raw or gzipped, may hold at most
// 256 MiB (after gunzipping) in lines of at most 16 MiB.
func LoadCSV(path, label string) (*Dataset, error) {
	r, done, err := openCSV(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer done()
	d, err := parseCSV(path, r, label)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return d, nil
}

// parseNumber reads a decimal number strictly: an optional sign, digits
// with an optional point and fraction (or a point and a fraction), and an
// optional exponent. Underscores, hexadecimal, "Inf" and "NaN" are refused,
// and so is a value beyond float32's range.
func parseNumber(s string) (float32, error) {
	if !isDecimal(s) {
		switch strings.ToLower(strings.TrimLeft(s, "+-")) {
		case "nan", "inf", "infinity":
			return 0, fmt.Errorf("%q is not a finite number", s)
		case "":
			return 0, errors.New("empty cell: want a number")
		}
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	v, err := strconv.ParseFloat(s, 32)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is beyond float32's range", s)
	}
	return float32(v), nil
}

// isDecimal reports whether s is [+-](digits[.digits*] | .digits)([eE][+-]digits).
func isDecimal(s string) bool {
	i := 0
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	n := digits()
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// cellError places a cell's problem: its 1-based line in the file and its
// column (1-based, and its name when the file has a header).
func cellError(r *csv.Reader, field int, name string, err error) error {
	line, _ := r.FieldPos(field)
	if name != "" {
		return fmt.Errorf("line %d, column %d (%q): %w", line, field+1, name, err)
	}
	return fmt.Errorf("line %d, column %d: %w", line, field+1, err)
}

func parseCSV(name string, src io.Reader, label string) (*Dataset, error) {
	r := csv.NewReader(src)
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
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err // csv's errors carry the line
		}
		for j, cell := range rec {
			if j == col {
				labels = append(labels, strings.TrimSpace(cell))
				continue
			}
			v, err := parseNumber(strings.TrimSpace(cell))
			if err != nil {
				return nil, cellError(r, j, header[j], err)
			}
			x = append(x, v)
		}
	}
	if len(labels) == 0 {
		return nil, errors.New("no data rows: empty set")
	}
	classes, y := classify(labels)
	features := slices.Delete(slices.Clone(header), col, col+1)
	d := &Dataset{Name: name, Shape: []int{len(header) - 1, 1, 1}, X: x, Y: y, Classes: classes, Features: features}
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
// line and the classes are the distinct labels. Cells are read and limits
// applied as LoadCSV does.
func LoadSklearnCSV(path, name string, header bool) (*Dataset, error) {
	r, done, err := openCSV(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer done()
	d, err := parseSklearnCSV(name, r, header)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return d, nil
}

func parseSklearnCSV(name string, src io.Reader, header bool) (*Dataset, error) {
	r := csv.NewReader(src)
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
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err // csv's errors carry the line
		}
		if dim < 0 {
			dim = len(rec) - 1
		}
		if len(rec) != dim+1 {
			line, _ := r.FieldPos(0)
			return nil, fmt.Errorf("line %d: %d cells, want %d features and a label", line, len(rec), dim)
		}
		for j, cell := range rec[:dim] {
			v, err := parseNumber(strings.TrimSpace(cell))
			if err != nil {
				return nil, cellError(r, j, "", err)
			}
			x = append(x, v)
		}
		l, err := parseNumber(strings.TrimSpace(rec[dim]))
		if err != nil || l != float32(int(l)) || l < 0 || l >= maxClasses {
			return nil, cellError(r, dim, "", fmt.Errorf("label %q is not a class index in [0, %d)", rec[dim], maxClasses))
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
	if slices.Max(y) >= len(classes) {
		return nil, fmt.Errorf("label %d, but the header names %d classes", slices.Max(y), len(classes))
	}
	d := &Dataset{Name: name, Shape: []int{dim, 1, 1}, X: x, Y: y, Classes: classes}
	return d, d.Validate()
}
