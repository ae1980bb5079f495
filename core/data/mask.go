package data

import (
	"errors"
	"fmt"
	"image"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaskFolder is the folder, inside an image folder's dataset folder, that
// holds a ground-truth mask for each image: the mask of <class>/<file>
// is .masks/<class>/<file> (.masks/train/<class>/<file> and
// .masks/test/<class>/<file> for a set with train/ and test/), a PNG or
// JPEG of the image's own width and height whose pixels are in the mask
// where they are not black. A folder whose name begins with a dot is no
// class, so the masks are never taken for one. Masks are all or none: a
// dataset folder with .masks needs a mask for every image.
const MaskFolder = ".masks"

// maskRoot is where the masks of the images under root lie, when the
// dataset folder within (root or a folder above it; resolved: inside)
// holds a MaskFolder, which may be a link leading inside it; "" when it
// holds none.
func maskRoot(root, within, inside string) (string, error) {
	dir := filepath.Join(within, MaskFolder)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	real, err := resolveInside(inside, within, dir)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder: the masks of an image folder are a folder of images (or remove it)", dir)
	}
	rel, err := filepath.Rel(within, root)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, rel), nil
}

// loadMask reads the mask at path (a link leading inside the folder
// within, resolved: inside) of the image of bounds img at imgPath, as
// size×size values, resized as its image (rs). It is read under an
// image's limits (loadImage).
func loadMask(inside, within, path, imgPath string, img image.Rectangle, size int, rs Resize) ([]float32, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load %s: no mask: want one at %s (a dataset folder with %s holds a mask for every image)", imgPath, path, MaskFolder)
	}
	real, err := resolveInside(inside, within, path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	f, n, err := OpenRegular(real, maxImageFileBytes)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	m, b, err := decodeMask(io.NewSectionReader(f, 0, n), size, rs)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if b.Dx() != img.Dx() || b.Dy() != img.Dy() {
		return nil, fmt.Errorf("load %s: a mask of %d×%d pixels for %s, an image of %d×%d: want the image's own size", path, b.Dx(), b.Dy(), imgPath, img.Dx(), img.Dy())
	}
	return m, nil
}

// decodeMask decodes a PNG or JPEG mask under decodeImage's checks and
// returns it resized to size×size by nearest neighbour (each value is
// the source pixel under the centre of its cell, the cell of the squashed
// image or of the centre crop, as rs makes its image), 1 where that pixel is
// not black (any colour channel above 0, alpha-premultiplied: a
// transparent pixel is 0) and 0 where it is, with the decoded image's
// bounds. JPEG's ringing leaves faint non-black pixels beside edges:
// masks are best saved as PNG.
func decodeMask(r io.ReadSeeker, size int, rs Resize) ([]float32, image.Rectangle, error) {
	img, err := decodeImage(r)
	if err != nil {
		return nil, image.Rectangle{}, err
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	// Cell i of size lies at source pixel (2(o+i)+1)·n/(2·out) of an axis of
	// n pixels resized to out, the crop starting at o.
	ow, oh, left, top := size, size, 0, 0
	if rs.Mode == ResizeShortSideCrop {
		ow, oh, left, top = cropFrame(w, h, size, rs.ShortSide(size))
	}
	m := make([]float32, size*size)
	for i := range size {
		y := b.Min.Y + min((2*(top+i)+1)*h/(2*oh), h-1)
		for j := range size {
			x := b.Min.X + min((2*(left+j)+1)*w/(2*ow), w-1)
			if r, g, bl, _ := img.At(x, y).RGBA(); r|g|bl != 0 {
				m[i*size+j] = 1
			}
		}
	}
	return m, b, nil
}
