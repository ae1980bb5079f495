//go:build unix

package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe in a run folder (or in a folder given as one) is refused,
// never opened: opening it for reading would block until a writer came.
func TestNamedPipeInARunFolderIsRefusedNotWaitedOn(t *testing.T) {
	withPipe := func(name string) (dir, pipe string) {
		dir = t.TempDir()
		pipe = filepath.Join(dir, name)
		if err := syscall.Mkfifo(pipe, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		return dir, pipe
	}
	for _, tc := range []struct {
		name, pipe, want string
		open             func(dir string) error
	}{
		{"a foreign pipe in the output folder", "notes", "is not empty", func(dir string) error { _, err := Open(dir, []byte("spec")); return err }},
		{"a pipe as the spec of a finished run", "spec.yaml", "not a regular file", func(dir string) error { _, _, err := OpenExisting(dir); return err }},
	} {
		dir, pipe := withPipe(tc.pipe)
		done := make(chan error, 1)
		go func() { done <- tc.open(dir) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: still blocked after 10 s", tc.name)
			for err == nil {
				if w, werr := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); werr == nil {
					w.Close()
				}
				select {
				case err = <-done:
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: %v, want an error naming %s and saying %q", tc.name, err, dir, tc.want)
		}
	}
}
