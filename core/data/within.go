package data

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A folder someone sent (a run folder, a reproduction's report folder) may
// hold symbolic links where the files and folders Faithlab writes should
// be: OUT/figures leading to another folder, OUT/cache/ab to another
// cache. WriteIn and WriteFileIn are the one way Faithlab writes under
// such a folder: every write goes through an os.Root opened at the folder,
// so that neither the file, nor a folder on its way, nor the temporary
// file and the rename that make the write atomic can land outside it, and
// a symbolic link on the way is refused by name, with nothing written.

// WriteFileIn writes the parts, one after another, to the file name (a
// path relative to root, such as "figures/a.png") inside the folder root,
// as WriteFileAtomic does, without following a symbolic link below root.
// Missing folders on name's way are made. root itself is the caller's to
// choose (the user's --out, say), and is followed if it is a link.
func WriteFileIn(root, name string, parts ...[]byte) error {
	return WriteIn(root, name, func(f *os.File) error {
		for _, b := range parts {
			if _, err := f.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteIn is WriteFileIn for content that write produces into the
// temporary file (which it may also WriteAt).
func WriteIn(root, name string, write func(f *os.File) error) error {
	path := filepath.Join(root, name)
	r, name, err := openRootFor(root, name)
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	defer r.Close()
	if err := mkdirIn(r, root, filepath.Dir(name)); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := replaceable(r, root, name); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	tmp, f, err := createTempIn(r, name)
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	defer r.Remove(tmp) // gone after the rename; what a failure left otherwise
	if err := fillAndKeep(f, write, func() error { return r.Rename(tmp, name) }); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

// CheckWritableIn says, before anything is written, whether WriteIn could
// write each of names inside root: no symbolic link on the way to it or in
// its place, no folder or device where the file should be. A command that
// writes several files checks them all first, so that a refusal leaves the
// folder as it found it.
func CheckWritableIn(root string, names ...string) error {
	for _, name := range names {
		path := filepath.Join(root, name)
		r, name, err := openRootFor(root, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // WriteIn's caller makes root
		}
		if err != nil {
			return fmt.Errorf("save %s: %w", path, err)
		}
		err = replaceable(r, root, name)
		for d := filepath.Dir(name); err == nil && d != "."; d = filepath.Dir(d) {
			err = folderOrNothing(r, root, d)
		}
		r.Close()
		if err != nil {
			return fmt.Errorf("save %s: %w", path, err)
		}
	}
	return nil
}

// replaceable says whether name (inside r) is missing or a regular file.
func replaceable(r *os.Root, root, name string) error {
	switch st, err := r.Lstat(name); {
	case err == nil && st.Mode()&fs.ModeSymlink != 0:
		return linkError(filepath.Join(root, name), root)
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("there is a %s there, not a regular file to replace", kindOf(st))
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return err
	}
	return nil
}

// folderOrNothing says whether dir (inside r) is missing or a folder.
func folderOrNothing(r *os.Root, root, dir string) error {
	switch st, err := r.Lstat(dir); {
	case err == nil && st.Mode()&fs.ModeSymlink != 0:
		return linkError(filepath.Join(root, dir), root)
	case err == nil && !st.IsDir():
		return fmt.Errorf("%s is not a folder", filepath.Join(root, dir))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return nil
}

// MkdirIn makes the folder name (relative) inside root, as WriteIn makes
// the folders on a file's way: a symbolic link on the way is refused.
func MkdirIn(root, name string) error {
	r, name, err := openRootFor(root, name)
	if err != nil {
		return fmt.Errorf("make folder %s: %w", filepath.Join(root, name), err)
	}
	defer r.Close()
	if err := mkdirIn(r, root, name); err != nil {
		return fmt.Errorf("make folder %s: %w", filepath.Join(root, name), err)
	}
	return nil
}

// openRootFor opens root for writing name, which must be a local path
// below it; it returns name cleaned.
func openRootFor(root, name string) (*os.Root, string, error) {
	name = filepath.Clean(name)
	if !filepath.IsLocal(name) {
		return nil, "", fmt.Errorf("%q is not a path inside %s", name, root)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, "", err
	}
	return r, name, nil
}

// mkdirIn makes each folder of dir (relative to r, "." for r itself) that
// is missing, and refuses a symbolic link or a file on the way.
func mkdirIn(r *os.Root, root, dir string) error {
	if dir == "." {
		return nil
	}
	parts := strings.Split(dir, string(filepath.Separator))
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		st, err := r.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			if err = r.Mkdir(p, 0o755); errors.Is(err, fs.ErrExist) {
				st, err = r.Lstat(p) // made meanwhile: check what it is
			} else if err == nil {
				continue
			}
		}
		switch {
		case err != nil:
			return err
		case st.Mode()&fs.ModeSymlink != 0:
			return linkError(filepath.Join(root, p), root)
		case !st.IsDir():
			return fmt.Errorf("%s is not a folder", filepath.Join(root, p))
		}
	}
	return nil
}

// linkError refuses the symbolic link at path, below root.
func linkError(path, root string) error {
	return fmt.Errorf("%s is a symbolic link: nothing under %s is written through a link (remove it if the folder is yours)", path, root)
}

// createTempIn creates a new temporary file beside name, inside r.
func createTempIn(r *os.Root, name string) (string, *os.File, error) {
	dir, base := filepath.Dir(name), filepath.Base(name)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := r.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return tmp, f, err
	}
	return "", nil, errors.New("no free temporary name beside it")
}
