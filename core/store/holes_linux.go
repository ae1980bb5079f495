package store

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// seekData is lseek's SEEK_DATA on Linux: the next offset holding data.
const seekData = 3

// skipHole moves f, read up to off, past the hole of a sparse file that
// starts there (zeros the file system stores as nothing) and returns its
// length; 0 where there is none, or the file system cannot say.
func skipHole(f *os.File, off int64) (int64, error) {
	next, err := f.Seek(off, seekData)
	switch {
	case errors.Is(err, syscall.ENXIO): // only a hole up to the end
		end, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return 0, err
		}
		return end - off, nil
	case err != nil || next < off:
		_, err := f.Seek(off, io.SeekStart)
		return 0, err
	}
	return next - off, nil
}
