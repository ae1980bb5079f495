//go:build unix

package data

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A rename would replace a device or a pipe with a regular file (for root,
// even /dev/null): WriteFileAtomic refuses. A named pipe stands in for the
// device here.
func TestWriteFileAtomicReplacesOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	err := WriteFileAtomic(fifo, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), fifo) {
		t.Errorf("over a named pipe: %v", err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", st, err)
	}
	if err := WriteFileAtomic(dir, []byte("x")); err == nil || !strings.Contains(err.Error(), "folder") {
		t.Errorf("over a folder: %v", err)
	}
	file := filepath.Join(dir, "f")
	for _, s := range []string{"one", "two"} {
		if err := WriteFileAtomic(file, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "two" {
		t.Errorf("regular file holds %q", b)
	}
}
