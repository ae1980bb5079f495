//go:build !cgo || !linux

package gemm

import "errors"

// LoadOpenBLAS reports that this build cannot load OpenBLAS (no cgo).
func LoadOpenBLAS() (Kernel, error) {
	return nil, errors.New("openblas not available: built without cgo")
}

// SetThreads does nothing without OpenBLAS.
func SetThreads(int) {}
