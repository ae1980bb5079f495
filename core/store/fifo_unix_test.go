//go:build unix

package store

import (
	"path/filepath"
	"strings"
	"testing"

	"faithlab/internal/fifotest"
)

// A named pipe in a run folder (or in a folder given as one) is refused,
// never opened: opening it for reading would block until a writer came.
func TestNamedPipeInARunFolderIsRefusedNotWaitedOn(t *testing.T) {
	withPipe := func(name string) (dir, pipe string) {
		dir = t.TempDir()
		return dir, fifotest.Make(t, filepath.Join(dir, name))
	}
	for _, tc := range []struct {
		name, pipe, want string
		open             func(dir string) error
	}{
		{"a foreign pipe in the output folder", "notes", "is not empty", func(dir string) error { _, err := Open(dir, []byte("spec")); return err }},
		{"a pipe as the spec of a finished run", "spec.yaml", "not a regular file", func(dir string) error { _, _, err := OpenExisting(dir); return err }},
	} {
		dir, pipe := withPipe(tc.pipe)
		err := fifotest.Refused(t, pipe, func() error { return tc.open(dir) })
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: %v, want an error naming %s and saying %q", tc.name, err, dir, tc.want)
		}
	}
}
