package data

import (
	"fmt"
	"image"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LoadImageFolder reads root/<class>/<image> files (PNG or JPEG), resized to
// size×size with Lanczos filtering, as channels (1: grey, 3: RGB) in [0, 1].
// Classes are the sub-folder names in lexical order. Symbolic links are
// followed, for class folders and image files alike, as long as they lead
// to a place inside root; one that leads outside it, or nowhere, is refused
// by name. Each image is a regular file of at most 64 MiB
// (maxImageFileBytes) whose header is checked before it is decoded
// (decodeImage): at most 64 MiB of pixels (maxImageBytes: 16 megapixels of
// 8-bit RGBA), sides of at most 65 535 pixels (maxImageSourceSide), the
// longer at most 1 000 times the shorter (maxImageAspect), and a JPEG's
// decoder buffers at most 256 MiB (maxJPEGDecodeBytes); size is at most
// 4096. A sub-folder whose name begins with a dot (hidden: .masks,
// .ipynb_checkpoints) is no class. When root holds a MaskFolder, every
// image's mask is read from it, under the same limits and link rules, into
// Masks. Open reads a folder for a model (Options.Classes, Resize,
// Unlabelled) as folderRead says.
func LoadImageFolder(root string, size, channels int) (*Dataset, error) {
	return loadImageFolder(root, root, folderRead{size: size, channels: channels})
}

// folderRead is how an image folder is read: at what side, with how many
// channels, resized how; its class folders matched to a model's classes
// (classes, matchClasses: labels are indices into the model's list, which
// becomes the set's Classes); and whether a folder of images without class
// folders is taken, unlabelled (Dataset.Unlabelled).
type folderRead struct {
	size, channels int
	resize         Resize
	classes        *ClassList
	unlabelled     bool
	conv           *Conversion // counts the files read (Dataset.Conversion); one for all a folder's parts
}

// loadImageFolder is LoadImageFolder, with links allowed to lead anywhere
// inside the folder within (root or a folder above it: a dataset's folder
// for its train/ and test/ parts), read as rd says.
func loadImageFolder(root, within string, rd folderRead) (*Dataset, error) {
	size, channels := rd.size, rd.channels
	if size <= 0 || size > maxImageSide || (channels != 1 && channels != 3) {
		return nil, fmt.Errorf("load %s: size %d and %d channels: want a size in [1, %d] and 1 or 3 channels", root, size, channels, maxImageSide)
	}
	if err := rd.resize.Check(size); err != nil {
		return nil, fmt.Errorf("load %s: %w", root, err)
	}
	inside, err := filepath.EvalSymlinks(within)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", root, err)
	}
	dir, err := filepath.EvalSymlinks(root)
	if err == nil && !isInside(inside, dir) {
		err = linkOutside(root, dir, within)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", root, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", root, err)
	}
	masks, err := maskRoot(root, within, inside)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", root, err)
	}
	if rd.conv == nil {
		rd.conv = newConversion(rd)
	}
	d := &Dataset{Name: filepath.Base(root), Shape: []int{channels, size, size}, Conversion: rd.conv}
	classDirs := map[string]string{}
	loose := 0 // images beside the class folders
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue // hidden: the masks, or a tool's own folder
		}
		p, real, isDir := filepath.Join(root, e.Name()), filepath.Join(dir, e.Name()), e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			st, err := os.Stat(real)
			if err != nil {
				return nil, fmt.Errorf("load %s: %s is a symbolic link that cannot be followed: %w", root, p, err)
			}
			if !st.IsDir() {
				loose += isImageName(e.Name())
				continue // a file beside the classes, not read, as any other
			}
			if real, err = resolveInside(inside, within, p); err != nil {
				return nil, fmt.Errorf("load %s: %w", root, err)
			}
			isDir = true
		}
		if isDir {
			d.Classes = append(d.Classes, e.Name())
			classDirs[e.Name()] = real
		} else {
			loose += isImageName(e.Name())
		}
	}
	slices.Sort(d.Classes)
	folders, labels := d.Classes, make([]int, len(d.Classes))
	for i := range labels {
		labels[i] = i
	}
	switch {
	case len(folders) == 0 && loose > 0 && !rd.unlabelled:
		return nil, fmt.Errorf("load %s: %d images and no class folders: this command needs labels; put each class's images in a folder named by the class (one the model lists), or explain the predicted class (attribute --target predicted, or a campaign of a model file), which takes a folder of images as it is", root, loose)
	case len(folders) == 0 && loose > 0 && rd.classes == nil:
		return nil, fmt.Errorf("load %s: %d images and no class folders: a folder of images without labels is read only for a model, whose classes they are explained at", root, loose)
	case len(folders) == 0 && loose > 0:
		folders, labels, classDirs = []string{""}, []int{0}, map[string]string{"": dir}
		d.Unlabelled, d.Classes = true, rd.classes.Names
	case rd.classes != nil && len(folders) > 0:
		if err := CheckNames("class folder", folders); err != nil {
			return nil, fmt.Errorf("load %s: %w", root, err)
		}
		matched := false
		if labels, matched, err = matchClasses(folders, rd.classes); err != nil {
			return nil, fmt.Errorf("load %s: %w", root, err)
		}
		if matched || !Numbered(rd.classes.Names) {
			d.Classes = rd.classes.Names
		} // else the folders name the classes a model only numbers (an ONNX model without a description)
	}
	per := channels * size * size
	for ci, c := range folders {
		files, err := os.ReadDir(classDirs[c])
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", root, err)
		}
		for _, f := range files {
			if f.IsDir() || isImageName(f.Name()) == 0 {
				continue
			}
			p := filepath.Join(root, c, f.Name()) // as the user knows it
			q := filepath.Join(classDirs[c], f.Name())
			if f.Type()&fs.ModeSymlink != 0 {
				if q, err = resolveInside(inside, within, p); err != nil {
					return nil, fmt.Errorf("load %s: %w", root, err)
				}
			}
			img, err := loadImage(q)
			if err != nil {
				return nil, fmt.Errorf("load %s: %w", p, err)
			}
			rd.conv.add(img)
			if masks != "" {
				m, err := loadMask(inside, within, filepath.Join(masks, c, f.Name()), p, img.Bounds(), size, rd.resize)
				if err != nil {
					return nil, err
				}
				d.Masks = append(d.Masks, m...)
			}
			var sized *image.NRGBA
			if rd.resize.Mode == ResizeShortSideCrop {
				sized = shortSideCrop(img, size, rd.resize.ShortSide(size))
			} else {
				sized = resizeImage(img, size)
			}
			d.X = append(d.X, imageToCHW(sized, channels)[:per]...)
			d.Y = append(d.Y, labels[ci])
		}
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("load %s: %w", root, err)
	}
	return d, nil
}

// isImageName is 1 for a file name an image folder reads (.png, .jpg,
// .jpeg), 0 for any other.
func isImageName(name string) int {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png", ".jpg", ".jpeg":
		return 1
	}
	return 0
}

// resolveInside resolves the symbolic links of path, which must lead
// inside the folder within (resolved: inside).
func resolveInside(inside, within, path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a symbolic link that cannot be followed: %w", path, err)
	}
	if !isInside(inside, real) {
		return "", linkOutside(path, real, within)
	}
	return real, nil
}

// isInside reports whether the resolved path real is the folder inside
// (resolved) or below it.
func isInside(inside, real string) bool {
	rel, err := filepath.Rel(inside, real)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

func linkOutside(path, real, within string) error {
	return fmt.Errorf("%s leads to %s, outside %s: an image folder is read only inside itself (copy what the link leads to into it)", path, real, within)
}

// loadImage decodes a PNG or JPEG file of at most maxImageFileBytes.
func loadImage(path string) (image.Image, error) {
	f, size, err := OpenRegular(path, maxImageFileBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeImage(io.NewSectionReader(f, 0, size))
}
