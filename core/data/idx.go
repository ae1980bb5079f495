package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
)

const (
	// maxFileBytes bounds what a loader will read or allocate for one file.
	maxFileBytes = 4 << 30
	// maxClasses bounds integer labels, so that a stray large label is an
	// error rather than a huge class list.
	maxClasses = 1 << 16
)

// readFile reads a file, gunzipping it when it starts with the gzip magic.
func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: bad gzip stream: %w", path, err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, maxFileBytes+1))
		if err != nil {
			return nil, fmt.Errorf("%s: truncated or corrupt gzip stream: %w", path, err)
		}
		if len(out) > maxFileBytes {
			return nil, fmt.Errorf("%s: decompresses to more than %d bytes", path, maxFileBytes)
		}
		return out, nil
	}
	return b, nil
}

// ParseIDX decodes an IDX file of unsigned bytes (type 0x08), the format of
// MNIST and Fashion-MNIST. It returns the dimensions and the payload.
func ParseIDX(b []byte) ([]int, []byte, error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("IDX: %d bytes, too short for a header", len(b))
	}
	if b[0] != 0 || b[1] != 0 {
		return nil, nil, fmt.Errorf("IDX: bad magic %x", b[:4])
	}
	if b[2] != 0x08 {
		return nil, nil, fmt.Errorf("IDX: element type 0x%02x, only unsigned bytes (0x08) are supported", b[2])
	}
	nd := int(b[3])
	if nd == 0 || nd > 4 {
		return nil, nil, fmt.Errorf("IDX: %d dimensions, want 1 to 4", nd)
	}
	if len(b) < 4+4*nd {
		return nil, nil, fmt.Errorf("IDX: truncated header (%d bytes for %d dimensions)", len(b), nd)
	}
	dims := make([]int, nd)
	total := 1
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(b[4+4*i:]))
		if dims[i] == 0 {
			return nil, nil, fmt.Errorf("IDX: dimension %d is zero: empty set", i)
		}
		total *= dims[i]
		if total > maxFileBytes {
			return nil, nil, fmt.Errorf("IDX: dimensions %v exceed %d elements", dims[:i+1], maxFileBytes)
		}
	}
	payload := b[4+4*nd:]
	if len(payload) != total {
		return nil, nil, fmt.Errorf("IDX: dimensions %v need %d bytes, file holds %d (truncated?)", dims, total, len(payload))
	}
	return dims, payload, nil
}

// LoadIDX reads an image file and a label file in IDX format into a dataset
// of 1×H×W images scaled to [0, 1].
func LoadIDX(name, images, labels string, classes []string) (*Dataset, error) {
	ib, err := readFile(images)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", images, err)
	}
	idims, ipix, err := ParseIDX(ib)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", images, err)
	}
	if len(idims) != 3 {
		return nil, fmt.Errorf("load %s: image file has shape %v, want n×H×W", images, idims)
	}
	lb, err := readFile(labels)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", labels, err)
	}
	ldims, lab, err := ParseIDX(lb)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", labels, err)
	}
	if len(ldims) != 1 || ldims[0] != idims[0] {
		return nil, fmt.Errorf("load %s: %v labels for %d images in %s", labels, ldims, idims[0], images)
	}
	d := &Dataset{Name: name, Shape: []int{1, idims[1], idims[2]}, X: make([]float32, len(ipix)), Y: make([]int, len(lab)), Classes: classes}
	for i, p := range ipix {
		d.X[i] = float32(p) / 255
	}
	if d.Classes == nil {
		k := 0
		for _, l := range lab {
			k = max(k, int(l)+1)
		}
		d.Classes = numbered(k)
	}
	for i, l := range lab {
		d.Y[i] = int(l)
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
