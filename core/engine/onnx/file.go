package onnx

import (
	"fmt"
	"os"
	"runtime/debug"
)

// ParseFile reads the ONNX model in f, an open regular file of size bytes
// (at most MaxBytes; callers check what else they need of it), as Parse
// reads its bytes, holding the weights once: where the system maps files
// into memory and takes pages back on advice (Linux), the file is mapped
// rather than read, each weight is decoded from the mapping into its
// float32 values, and the pages decoded are given back as it goes, so
// that what is resident while a file opens is its weights and a few MiB,
// not the file and its weights besides. Nothing of the mapping outlives
// the call; f stays open. A file cut short while it is read is an error,
// not a crash.
func ParseFile(f *os.File, size int64) (g *Graph, err error) {
	if size < 0 || size > MaxBytes {
		return nil, fmt.Errorf("%d bytes: an ONNX file Faithlab reads holds at most %d", size, int64(MaxBytes))
	}
	b, drop, unmap, err := mapFile(f, int(size))
	if err != nil {
		return nil, err
	}
	defer unmap()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			g, err = nil, fmt.Errorf("the file changed while it was read (%v)", r)
		}
	}()
	return parse(b, drop)
}
