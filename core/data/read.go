package data

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"syscall"
)

// Limits on what one file may hold. Each loader states the limits it
// applies in its doc comment and refuses a file past them with an error
// naming the file, before reading it.
const (
	// maxIDXValues bounds the values of one IDX file: 256 Mi (1 GiB as
	// float32; Fashion-MNIST's training images are 47 Mi).
	maxIDXValues = 1 << 28
	// maxGzipRatio and minGzipCapacity bound what a gzipped file may claim
	// to hold: at most maxGzipRatio times its compressed size, or
	// minGzipCapacity, whichever is more. Image and label data compress 2 to
	// 5 times (MNIST 4.8×, Fashion-MNIST 1.8×); a file claiming more is a
	// decompression bomb, refused before anything is allocated.
	maxGzipRatio    = 64
	minGzipCapacity = 16 << 20
	// maxCSVBytes bounds a CSV file (after gunzipping) and maxCSVLine one
	// of its lines.
	maxCSVBytes = 256 << 20
	maxCSVLine  = 16 << 20
	// maxCIFARBytes bounds one CIFAR binary batch: CIFAR-100's train.bin,
	// the largest, holds 50 000 records of 3 074 bytes (154 MB).
	maxCIFARBytes = 200 << 20
	// maxNPYBytes bounds one .npy file or .npz member, and maxNPYHeader its
	// header (NumPy itself refuses headers over 10 000 bytes by default).
	maxNPYBytes  = 1 << 30
	maxNPYHeader = 1 << 16
	// maxImageFileBytes bounds one image file of an image folder and
	// maxImageBytes the image it decodes to (width × height × bytes per
	// pixel; 16 megapixels of 8-bit RGBA), checked from the image's header
	// before it is decoded.
	maxImageFileBytes = 64 << 20
	maxImageBytes     = 64 << 20
	// maxImageSourceSide and maxImageAspect bound an image's shape, also
	// from its header: no side longer than a JPEG's can be (65 535), the
	// longer side at most 1 000 times the shorter. A picture is far inside
	// both (a panorama is 1:10); a 1×67 000 000 "image" fits
	// maxImageBytes, yet its decoder's rows and its resize's filter
	// weights and column buffers grow with its longest side. With them,
	// resizeImage's intermediate image holds at most size×8192 pixels
	// (size × √(W·H)): 0.9 MiB at 28, 7 MiB at 224.
	maxImageSourceSide = 1<<16 - 1
	maxImageAspect     = 1000
	// maxJPEGDecodeBytes bounds what image/jpeg allocates to decode one
	// JPEG, counted from its frame header (jpegFrame.decodeBytes): a
	// progressive JPEG keeps every 8×8 block's coefficients as int32 (4
	// bytes per pixel and component, the image padded to whole MCUs)
	// beside the image: 5 bytes a pixel in grey, 15 in full-resolution
	// YCbCr (4:4:4), 24 in CMYK. 256 MiB takes any baseline JPEG within
	// maxImageBytes, and a progressive one of 16 megapixels in YCbCr, 53
	// in grey or 11 in CMYK.
	maxJPEGDecodeBytes = 256 << 20
	// maxImageSide bounds the side images are resized to.
	maxImageSide = 4096
	// maxNamesBytes bounds a text file of class names (CIFAR's
	// batches.meta.txt).
	maxNamesBytes = 1 << 20
	// maxClasses bounds integer labels, so that a stray large label is an
	// error rather than a huge class list.
	maxClasses = 1 << 16
)

// OpenRegular opens the regular file at path for reading and returns it with
// its size. A folder, a device such as /dev/zero, a pipe or a socket is
// refused before it is opened (opening a named pipe blocks until a writer
// comes; a stream's size cannot be checked before reading), and so is a
// file of more than limit bytes. The opened file must be the one checked:
// a file swapped in between is refused. Errors do not repeat the path:
// callers wrap them ("load %s: %w").
func OpenRegular(path string, limit int64) (*os.File, int64, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if err := checkRegular(before, limit); err != nil {
		return nil, 0, err
	}
	// Non-blocking, so that a pipe put in its place since the check opens
	// at once and is refused below instead of waiting for a writer (a
	// regular file reads as ever).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err == nil && !os.SameFile(before, st) {
		err = errors.New("was replaced while it was opened")
	}
	if err == nil {
		err = checkRegular(st, limit)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// StatRegular checks, without opening it, that path names a regular file
// (OpenRegular's first check), so that a spec's checks can name a pipe or
// a device where a file should be before anything reads it. Errors do not
// repeat the path.
func StatRegular(path string) error {
	st, err := os.Stat(path)
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	if err != nil {
		return err
	}
	return checkRegular(st, math.MaxInt64)
}

func checkRegular(st os.FileInfo, limit int64) error {
	switch {
	case st.IsDir():
		return errors.New("is a folder, not a file")
	case !st.Mode().IsRegular():
		return fmt.Errorf("is not a regular file (a %s): its size cannot be checked before reading", kindOf(st))
	case st.Size() > limit:
		return fmt.Errorf("holds %s, more than the %s a file of this kind may hold", bytesText(st.Size()), bytesText(limit))
	}
	return nil
}

// kindOf words what a file is: "folder", "device", "named pipe", ….
func kindOf(st os.FileInfo) string {
	switch m := st.Mode(); {
	case m.IsDir():
		return "folder"
	case m.IsRegular():
		return "regular file"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// ReadFileLimit reads the whole regular file at path, of at most limit
// bytes (OpenRegular's checks). It reads what the file held when opened and
// refuses a file that grew past it meanwhile.
func ReadFileLimit(path string, limit int64) ([]byte, error) {
	f, size, err := OpenRegular(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("reading %d bytes: %w", size, err)
	}
	if n, _ := f.Read(make([]byte, 1)); n > 0 {
		return nil, errors.New("file grew while it was read")
	}
	return b, nil
}

// content is a regular file's bytes as a stream, gunzipped when the file
// starts with the gzip magic, with the most bytes the stream can honestly
// hold: the file's size, or for gzip maxGzipRatio times it (at least
// minGzipCapacity).
type content struct {
	r        io.Reader
	capacity int64
	gzipped  bool
	close    func() error
}

// openContent opens a regular file of at most limit bytes as content.
func openContent(path string, limit int64) (*content, error) {
	f, size, err := OpenRegular(path, limit)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(f)
	magic, _ := br.Peek(2)
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return &content{r: br, capacity: size, close: f.Close}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("bad gzip stream: %w", err)
	}
	return &content{r: gzipErrors{zr}, capacity: max(size*maxGzipRatio, minGzipCapacity), gzipped: true, close: f.Close}, nil
}

// gzipErrors says "gzip" in the errors of a gzip stream other than its
// clean end: a stream cut short reads "gzip stream truncated".
type gzipErrors struct{ r io.Reader }

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = errors.New("gzip stream truncated")
	case err != nil && err != io.EOF:
		err = fmt.Errorf("corrupt gzip stream: %w", err)
	}
	return n, err
}

// atEOF checks that r holds nothing more (for gzip, reading to the end also
// checks the stream's CRC and length).
func atEOF(r io.Reader) error {
	n, err := r.Read(make([]byte, 1))
	if n == 0 && err == nil {
		n, err = io.ReadFull(r, make([]byte, 1))
	}
	switch {
	case n > 0:
		return errors.New("trailing data after the declared content")
	case err == io.EOF:
		return nil
	}
	return err // a corrupt stream, or a checksum that does not match
}

// limitedReader returns an error once more than n bytes have been read:
// a stream that goes past a limit is refused, not cut silently.
type limitedReader struct {
	r     io.Reader
	left  int64 // bytes still allowed
	limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return 0, fmt.Errorf("decompresses to more than %s", bytesText(l.limit))
	}
	return n, err
}

// lineLimitReader returns an error when a line grows past max bytes, so
// that a line-oriented parser never buffers an endless line.
type lineLimitReader struct {
	r    io.Reader
	max  int
	line int // bytes since the last newline
}

func (l *lineLimitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, c := range p[:n] {
		if c == '\n' {
			l.line = 0
			continue
		}
		l.line++
		if l.line > l.max {
			return 0, fmt.Errorf("a line longer than %s", bytesText(int64(l.max)))
		}
	}
	return n, err
}

// bytesText words a byte count: "16 MiB", "3 000 bytes".
func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
