package data

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ParseCIFAR decodes CIFAR binary records: labelBytes label bytes (1 for
// CIFAR-10; 2 for CIFAR-100, coarse then fine, of which the fine is used)
// followed by 3×32×32 pixels in CHW order.
func ParseCIFAR(b []byte, labelBytes int) (x []float32, y []int, err error) {
	rec := labelBytes + 3072
	if len(b) == 0 || len(b)%rec != 0 {
		return nil, nil, fmt.Errorf("CIFAR: %d bytes is not a whole number of %d-byte records (truncated?)", len(b), rec)
	}
	n := len(b) / rec
	x, y = make([]float32, n*3072), make([]int, n)
	decodeCIFAR(x, y, b, labelBytes)
	return x, y, nil
}

// decodeCIFAR decodes len(y) records of b into x and y.
func decodeCIFAR(x []float32, y []int, b []byte, labelBytes int) {
	rec := labelBytes + 3072
	for i := range y {
		r := b[i*rec : (i+1)*rec]
		y[i] = int(r[labelBytes-1])
		for j, p := range r[labelBytes:] {
			x[i*3072+j] = float32(p) / 255
		}
	}
}

// LoadCIFAR reads a CIFAR-10 (data_batch_*.bin, test_batch.bin) or CIFAR-100
// (train.bin, test.bin) binary folder; class names come from
// batches.meta.txt or fine_label_names.txt when present (at most 1 MiB; a
// list of the wrong length is an error). Each batch is a regular file of
// at most 200 MiB (maxCIFARBytes; CIFAR-100's train.bin, the largest, is
// 154 MB) whose size is a whole number of records, checked before it is
// read.
func LoadCIFAR(dir string) (train, test *Dataset, err error) {
	labelBytes, trainFiles, testFile, meta := 1, []string{}, "test_batch.bin", "batches.meta.txt"
	if _, err := os.Stat(filepath.Join(dir, "train.bin")); err == nil {
		labelBytes, trainFiles, testFile, meta = 2, []string{"train.bin"}, "test.bin", "fine_label_names.txt"
	} else {
		trainFiles, _ = filepath.Glob(filepath.Join(dir, "data_batch_*.bin"))
		for i := range trainFiles {
			trainFiles[i] = filepath.Base(trainFiles[i])
		}
		if len(trainFiles) == 0 {
			return nil, nil, fmt.Errorf("load %s: no data_batch_*.bin or train.bin: not a CIFAR binary folder", dir)
		}
	}
	k := 10
	if labelBytes == 2 {
		k = 100
	}
	classes := numbered(k)
	metaPath := filepath.Join(dir, meta)
	if b, err := ReadFileLimit(metaPath, maxNamesBytes); err == nil {
		var names []string
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if s := strings.TrimSpace(sc.Text()); s != "" {
				names = append(names, s)
			}
		}
		if len(names) != k {
			return nil, nil, fmt.Errorf("load %s: %d class names, want %d", metaPath, len(names), k)
		}
		classes = names
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("load %s: %w", metaPath, err)
	}
	rec := labelBytes + 3072
	load := func(name string, files []string) (*Dataset, error) {
		// Check every file's size first, then read each into its place.
		var sizes []int64
		var total int64
		for _, f := range files {
			p := filepath.Join(dir, f)
			st, err := os.Stat(p)
			if err == nil {
				err = checkRegular(st, maxCIFARBytes)
			}
			if err == nil && (st.Size() == 0 || st.Size()%int64(rec) != 0) {
				err = fmt.Errorf("CIFAR: %d bytes is not a whole number of %d-byte records (truncated?)", st.Size(), rec)
			}
			if err != nil {
				return nil, fmt.Errorf("load %s: %w", p, err)
			}
			sizes = append(sizes, st.Size())
			total += st.Size() / int64(rec)
		}
		d := &Dataset{Name: name, Shape: []int{3, 32, 32}, Classes: classes,
			X: make([]float32, total*3072), Y: make([]int, total)}
		at := 0
		for i, f := range files {
			p := filepath.Join(dir, f)
			b, err := ReadFileLimit(p, sizes[i])
			if err == nil && int64(len(b)) != sizes[i] {
				err = fmt.Errorf("changed size while it was read (%d bytes, then %d)", sizes[i], len(b))
			}
			if err != nil {
				return nil, fmt.Errorf("load %s: %w", p, err)
			}
			n := len(b) / rec
			decodeCIFAR(d.X[at*3072:(at+n)*3072], d.Y[at:at+n], b, labelBytes)
			at += n
		}
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("load %s: %w", dir, err)
		}
		return d, nil
	}
	if train, err = load(filepath.Base(dir), trainFiles); err != nil {
		return nil, nil, err
	}
	if test, err = load(filepath.Base(dir)+"-test", []string{testFile}); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}
