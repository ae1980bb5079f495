//go:build !linux

package onnx

import "os"

// mapFile reads f whole where files are not mapped.
func mapFile(f *os.File, size int) (b []byte, drop func([]byte), unmap func(), err error) {
	b = make([]byte, size)
	_, err = f.ReadAt(b, 0)
	return b, nil, func() {}, err
}
