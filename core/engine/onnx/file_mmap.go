//go:build linux

package onnx

import (
	"os"
	"syscall"
	"unsafe"
)

// mapFile maps f's size bytes read-only; drop gives back the whole pages
// a slice of them spans (a private file mapping reads them again from
// the file if touched), unmap ends the mapping. An empty file is read.
func mapFile(f *os.File, size int) (b []byte, drop func([]byte), unmap func(), err error) {
	if size == 0 {
		return nil, nil, func() {}, nil
	}
	b, err = syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return readFile(f, size)
	}
	page := uintptr(os.Getpagesize())
	base := uintptr(unsafe.Pointer(&b[0]))
	drop = func(s []byte) {
		if len(s) == 0 {
			return
		}
		lo := uintptr(unsafe.Pointer(&s[0])) - base
		hi := lo + uintptr(len(s))
		lo = lo / page * page
		hi = min((hi+page-1)/page*page, uintptr(len(b)))
		syscall.Madvise(b[lo:hi], syscall.MADV_DONTNEED) // advice: nothing to do if refused
	}
	return b, drop, func() { syscall.Munmap(b) }, nil
}

func readFile(f *os.File, size int) ([]byte, func([]byte), func(), error) {
	b := make([]byte, size)
	_, err := f.ReadAt(b, 0)
	return b, nil, func() {}, err
}
