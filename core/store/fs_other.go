//go:build !unix

package store

import "os"

// noFollow is not available: the checks of Lstat stand alone.
const noFollow = 0

func links(os.FileInfo) uint64 { return 1 }

// Lock is a no-op where flock does not exist: one process per run folder
// is then the user's to ensure.
func (r *Run) Lock() (func(), error) { return func() {}, nil }
