package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/model"
)

// logitsUsage is eval's --logits flag.
const logitsUsage = "also write every test input's logits and predicted class to `FILE`: a .csv of columns input, label, predicted, " +
	"logit_0 … logit_K−1 (the input's position in the test split; label and predicted class as class indices, the label −1 for a folder of images without class folders, which --logits reads as it is; logit_k the logit of " +
	"class k, in the order the per-class lines and --json's classes list them) or a .npy of float32, inputs × classes. " +
	"An existing regular file is replaced; a link, a folder or a device there is refused"

// checkLogitsOut says, before any work, whether eval --logits can write
// path: a .csv or .npy whose folder exists and takes files, with nothing
// but a regular file in its place (a symbolic link there is refused, not
// followed, as data.WriteFileIn refuses it).
func checkLogitsOut(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".npy":
	default:
		return fmt.Errorf("--logits %s: want a .csv or .npy file", path)
	}
	if err := model.CheckWritable(path); err != nil {
		return err
	}
	return data.CheckWritableIn(filepath.Dir(path), filepath.Base(path))
}

// writeLogits writes the n×k logits of a test split's inputs (labels y) to
// path, as CSV or .npy by its extension (checkLogitsOut), through
// data.WriteIn: whole or not at all, never through a link, streamed rather
// than built in memory (a CSV of 50 000 inputs × 1 000 classes is 0.5 GB).
func writeLogits(path string, logits []float32, y []int, k int) error {
	npy := strings.EqualFold(filepath.Ext(path), ".npy")
	return data.WriteIn(filepath.Dir(path), filepath.Base(path), func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<16)
		if npy {
			if err := data.EncodeNPY(bw, []int{len(y), k}, logits); err != nil {
				return err
			}
			return bw.Flush()
		}
		w := csv.NewWriter(bw)
		row := make([]string, 3+k)
		row[0], row[1], row[2] = "input", "label", "predicted"
		for c := range k {
			row[3+c] = "logit_" + strconv.Itoa(c)
		}
		w.Write(row)
		for i, label := range y {
			l := logits[i*k : (i+1)*k]
			row[0], row[1], row[2] = strconv.Itoa(i), strconv.Itoa(label), strconv.Itoa(engine.Argmax(l))
			for c, v := range l {
				// The shortest decimal that reads back as the same float32.
				row[3+c] = strconv.FormatFloat(float64(v), 'g', -1, 32)
			}
			w.Write(row)
		}
		if w.Flush(); w.Error() != nil {
			return w.Error()
		}
		return bw.Flush()
	})
}

// classList is "0 name, 1 name, …" of at most 20 classes.
func classList(names []string) string {
	var b strings.Builder
	for i, c := range names {
		if i == 20 {
			fmt.Fprintf(&b, ", … (%d in all)", len(names))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %q", i, c)
	}
	return b.String()
}
