//go:build unix

package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/internal/fifotest"
)

// Opening a named pipe for reading blocks until a writer comes (and Ctrl-C
// cannot reach a process blocked there): every reader refuses one before
// opening it, naming the file. A reader still blocked after a few seconds
// fails the test and is released by writers coming and going.
func TestReadersRefuseANamedPipeBeforeOpeningIt(t *testing.T) {
	dir := t.TempDir()
	fifo := func(name string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		return fifotest.Make(t, p)
	}
	labels := writeFile(t, dir, "labels", idxBytes([]int{3}, []byte{0, 1, 1}))
	for _, tc := range []struct {
		name, pipe string
		load       func(pipe string) error
	}{
		{"npy", "p.npy", func(p string) error { _, err := LoadNPY(p); return err }},
		{"npz", "p.npz", func(p string) error { _, err := OpenNPZ(p); return err }},
		{"csv", "p.csv", func(p string) error { _, err := LoadCSV(p, ""); return err }},
		{"dataset", "d.csv", func(p string) error { _, _, err := Open(p, Options{}); return err }},
		{"idx", "p-idx", func(p string) error { _, err := LoadIDX("t", p, labels, nil); return err }},
		{"cifar", "cifar/data_batch_1.bin", func(p string) error { _, _, err := LoadCIFAR(filepath.Dir(p)); return err }},
		{"image folder", "imgs/a/0.png", func(p string) error {
			_, err := LoadImageFolder(filepath.Dir(filepath.Dir(p)), 4, 1)
			return err
		}},
		{"any file", "p.txt", func(p string) error { _, err := ReadFileLimit(p, 10); return err }},
	} {
		p := fifo(tc.pipe)
		err := fifotest.Refused(t, p, func() error { return tc.load(p) })
		wantError(t, tc.name, err, "not a regular file", "named pipe")
		if err != nil && tc.name != "any file" && !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: error %q does not name the file", tc.name, err)
		}
	}
	if err := StatRegular(fifo("q")); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("StatRegular of a named pipe: %v", err)
	}
	if err := StatRegular(labels); err != nil {
		t.Errorf("StatRegular of a regular file: %v", err)
	}
}
