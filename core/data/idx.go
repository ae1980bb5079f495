package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxIDXFileBytes bounds an IDX file on disk, raw or gzipped: the largest
// header (4 dimensions) and maxIDXValues bytes.
const maxIDXFileBytes = maxIDXValues + 4 + 4*4

// readIDXHeader reads the header of an IDX file of unsigned bytes (type
// 0x08) from r: its dimensions, each positive, and the number of values
// they hold, at most maxIDXValues.
func readIDXHeader(r io.Reader) ([]int, int64, error) {
	var magic [4]byte
	if n, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, 0, fmt.Errorf("IDX: %d bytes, too short for a header%s", n, cause(err))
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, 0, fmt.Errorf("IDX: bad magic %x", magic)
	}
	if magic[2] != 0x08 {
		return nil, 0, fmt.Errorf("IDX: element type 0x%02x, only unsigned bytes (0x08) are supported", magic[2])
	}
	nd := int(magic[3])
	if nd == 0 || nd > 4 {
		return nil, 0, fmt.Errorf("IDX: %d dimensions, want 1 to 4", nd)
	}
	raw := make([]byte, 4*nd)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, 0, fmt.Errorf("IDX: truncated header (%d dimensions announced)%s", nd, cause(err))
	}
	dims := make([]int, nd)
	total := int64(1)
	for i := range dims {
		d := binary.BigEndian.Uint32(raw[4*i:])
		if d == 0 {
			return nil, 0, fmt.Errorf("IDX: dimension %d is zero: empty set", i)
		}
		dims[i] = int(d)
		total *= int64(d)
		if total > maxIDXValues {
			return nil, 0, fmt.Errorf("IDX: dimensions %v exceed the limit of %d values per file", dims[:i+1], maxIDXValues)
		}
	}
	return dims, total, nil
}

// cause words a read error after a message, unless it only says the
// input ended (which the message says already).
func cause(err error) string {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ""
	}
	return ": " + err.Error()
}

// idxHeaderBytes is the length of the header of an nd-dimensional file.
func idxHeaderBytes(nd int) int64 { return 4 + 4*int64(nd) }

// ParseIDX decodes an IDX file of unsigned bytes (type 0x08), the format of
// MNIST and Fashion-MNIST, held in memory. It returns the dimensions and the
// payload (a view of b).
func ParseIDX(b []byte) ([]int, []byte, error) {
	r := bytes.NewReader(b)
	dims, total, err := readIDXHeader(r)
	if err != nil {
		return nil, nil, err
	}
	payload := b[len(b)-r.Len():]
	if int64(len(payload)) != total {
		return nil, nil, fmt.Errorf("IDX: dimensions %v need %d bytes, file holds %d (truncated?)", dims, total, len(payload))
	}
	return dims, payload, nil
}

// idxFile is an open IDX file whose header has been read and checked
// against what the file can hold.
type idxFile struct {
	*content
	path  string
	dims  []int
	total int64
}

// openIDX opens a raw or gzipped IDX file and reads its header. A raw
// file's payload must be exactly what the header claims; a gzipped one may
// claim no more than its capacity (see openContent) and must decompress to
// exactly its claim: a header claiming more than the file holds is refused
// before anything is allocated.
func openIDX(path string) (*idxFile, error) {
	c, err := openContent(path, maxIDXFileBytes)
	if err != nil {
		return nil, err
	}
	dims, total, err := readIDXHeader(c.r)
	if err != nil {
		c.close()
		return nil, err
	}
	f := &idxFile{content: c, path: path, dims: dims, total: total}
	switch held := c.capacity - idxHeaderBytes(len(dims)); {
	case !c.gzipped && total != held:
		err = fmt.Errorf("IDX: dimensions %v need %d bytes, the file holds %d after its header (truncated or trailing data)", dims, total, held)
	case c.gzipped && total > c.capacity:
		err = fmt.Errorf("IDX: dimensions %v need %d bytes, more than a gzip file of this size can honestly hold (%d: %d× its size; a decompression bomb? if not, gunzip it: raw files have no such limit)", dims, total, c.capacity, maxGzipRatio)
	}
	if err != nil {
		c.close()
		return nil, err
	}
	if !c.gzipped {
		return f, nil
	}
	// A gzip stream's length is known only by decompressing it: a counting
	// pass first, so that a stream cut short of its header's claim (or
	// running past it) is refused before its dataset is allocated, then
	// the file again from the start for the payload.
	err = f.read(int(total), func(int, []byte) {})
	c.close()
	if err != nil {
		return nil, err
	}
	if c, err = openContent(path, maxIDXFileBytes); err != nil {
		return nil, err
	}
	if _, _, err = readIDXHeader(c.r); err != nil {
		c.close()
		return nil, err
	}
	f.content = c
	return f, nil
}

// read streams n payload bytes through a 64 KiB buffer, handing each piece
// to use with its offset, and checks that nothing follows when n is the
// whole payload (a prefix is read only from a file openIDX has checked
// whole: its size, or its gzip stream in a counting pass).
func (f *idxFile) read(n int, use func(off int, piece []byte)) error {
	buf := make([]byte, min(n, 64<<10))
	for done := 0; done < n; {
		k, err := io.ReadFull(f.r, buf[:min(len(buf), n-done)])
		use(done, buf[:k])
		done += k
		if err != nil {
			return fmt.Errorf("IDX: dimensions %v need %d bytes, the file holds %d (truncated?)%s", f.dims, n, done, cause(err))
		}
	}
	if int64(n) < f.total {
		return nil
	}
	if err := atEOF(f.r); err != nil {
		return fmt.Errorf("IDX: %w", err)
	}
	return nil
}

// LoadIDX reads an image file (n×H×W) and a label file (n) in IDX format,
// raw or gzipped, into a dataset of 1×H×W images scaled to [0, 1].
//
// Both headers are read first and checked against each other and against
// the limits before any payload is read: at most 256 Mi values per file
// (maxIDXValues), a raw file exactly as long as its header says, a gzipped
// one claiming at most 64 times its size (16 MiB for small files) and
// decompressing to exactly that (a first pass counts it). The images are
// then decompressed through a 64 KiB buffer straight into the dataset's
// storage, so memory is the dataset itself, spent only on a whole file.
func LoadIDX(name, images, labels string, classes []string) (*Dataset, error) {
	return loadIDX(name, images, labels, classes, 0)
}

// loadIDX is LoadIDX reading only the first head samples when 0 < head <
// the file's count: memory is then those samples alone.
func loadIDX(name, images, labels string, classes []string, head int) (*Dataset, error) {
	im, err := openIDX(images)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", images, err)
	}
	defer im.close()
	if len(im.dims) != 3 {
		return nil, fmt.Errorf("load %s: image file has shape %v, want n×H×W", images, im.dims)
	}
	lb, err := openIDX(labels)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", labels, err)
	}
	defer lb.close()
	if len(lb.dims) != 1 || lb.dims[0] != im.dims[0] {
		return nil, fmt.Errorf("load %s: %v labels for %d images in %s", labels, lb.dims, im.dims[0], images)
	}
	n := im.dims[0]
	if head > 0 && head < n {
		n = head
	}
	d := &Dataset{Name: name, Shape: []int{1, im.dims[1], im.dims[2]}, Y: make([]int, n), Classes: classes}
	k := 0 // classes, from every label even when only the head is kept
	err = lb.read(int(lb.total), func(off int, piece []byte) {
		for i, b := range piece {
			if off+i < n {
				d.Y[off+i] = int(b)
			}
			k = max(k, int(b)+1)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", labels, err)
	}
	if d.Classes == nil {
		d.Classes = numbered(k)
	}
	if k > len(d.Classes) {
		return nil, fmt.Errorf("load %s: label %d, but %s has %d classes", labels, k-1, name, len(d.Classes))
	}
	d.X = make([]float32, n*im.dims[1]*im.dims[2])
	err = im.read(len(d.X), func(off int, piece []byte) {
		x := d.X[off : off+len(piece)]
		for i, b := range piece {
			x[i] = float32(b) / 255
		}
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", images, err)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("load %s: %w", labels, err)
	}
	return d, nil
}

func numbered(k int) []string {
	s := make([]string, k)
	for i := range s {
		s[i] = fmt.Sprint(i)
	}
	return s
}

// FashionMNISTClasses are Fashion-MNIST's class names (Xiao et al. 2017).
func FashionMNISTClasses() []string {
	return strings.Split("T-shirt/top,Trouser,Pullover,Dress,Coat,Sandal,Shirt,Sneaker,Bag,Ankle boot", ",")
}
