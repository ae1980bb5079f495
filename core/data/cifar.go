package data

import (
	"bufio"
	"fmt"
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
	x = make([]float32, n*3072)
	y = make([]int, n)
	for i := 0; i < n; i++ {
		r := b[i*rec : (i+1)*rec]
		y[i] = int(r[labelBytes-1])
		for j, p := range r[labelBytes:] {
			x[i*3072+j] = float32(p) / 255
		}
	}
	return x, y, nil
}

// LoadCIFAR reads a CIFAR-10 (data_batch_*.bin, test_batch.bin) or CIFAR-100
// (train.bin, test.bin) binary folder; class names come from
// batches.meta.txt or fine_label_names.txt when present.
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
	if b, err := os.ReadFile(filepath.Join(dir, meta)); err == nil {
		var names []string
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if s := strings.TrimSpace(sc.Text()); s != "" {
				names = append(names, s)
			}
		}
		if len(names) == k {
			classes = names
		}
	}
	load := func(name string, files []string) (*Dataset, error) {
		d := &Dataset{Name: name, Shape: []int{3, 32, 32}, Classes: classes}
		for _, f := range files {
			p := filepath.Join(dir, f)
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("load %s: %w", p, err)
			}
			x, y, err := ParseCIFAR(b, labelBytes)
			if err != nil {
				return nil, fmt.Errorf("load %s: %w", p, err)
			}
			d.X, d.Y = append(d.X, x...), append(d.Y, y...)
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
