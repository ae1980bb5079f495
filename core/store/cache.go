package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"faithlab/core/data"
)

// Cache holds artefacts under content addresses. An entry is
//
//	"FLCACHE2"  magic
//	32 bytes    the key it answers (Key's SHA-256)
//	32 bytes    SHA-256 of the key, the extension and the artefact
//	…           the artefact's bytes
//
// Get checks both, so that an entry damaged on disk (cut short, a flipped
// bit) and an entry under another's name (swapped, copied or placed there
// by hand: its own checksum still holds, but it answers another request)
// are found, reported by path and moved aside for the runner to rebuild,
// instead of failing every task that needs them, or serving one method's
// maps for another's. Entries of older Faithlabs, which do not record
// their key, are moved aside and rebuilt the same way.
type Cache struct {
	Dir string
	// ReadOnly makes Get and GetNPY leave a damaged entry where it is
	// (reported, not moved aside): for a cache that a reader of a run
	// (export, merge) reads but does not own.
	ReadOnly bool
}

const (
	entryMagic = "FLCACHE2"
	entryHead  = len(entryMagic) + 2*sha256.Size
	// MaxEntryBytes bounds what Get reads for one entry.
	MaxEntryBytes = 8 << 30
)

// DamagedError is a cache entry whose bytes are not what was stored. The
// entry has been moved aside to Moved (Path + ".damaged", kept for
// inspection), so that the cache now misses it and it can be rebuilt.
type DamagedError struct {
	Path     string
	Moved    string // "" when moving it aside failed too, or was not tried
	Err      error  // what is wrong with it
	ReadOnly bool   // left where it is: the cache is read, not owned (Cache.ReadOnly)
}

func (e *DamagedError) Error() string {
	if e.ReadOnly {
		return fmt.Sprintf("cache entry %s is damaged (%v); left as it is", e.Path, e.Err)
	}
	if e.Moved == "" {
		return fmt.Sprintf("cache entry %s is damaged (%v) and could not be moved aside", e.Path, e.Err)
	}
	return fmt.Sprintf("cache entry %s is damaged (%v); moved aside to %s", e.Path, e.Err, e.Moved)
}

func (e *DamagedError) Unwrap() error { return e.Err }

// Key is the content address of what a task's output depends on: the
// SHA-256 of the JSON of parts, in hex.
func Key(parts ...any) string {
	b, err := json.Marshal(parts)
	if err != nil {
		panic(fmt.Sprintf("store.Key: %v", err)) // parts are plain values; a failure is a bug
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Path is where the artefact with key and extension (".npy", ".flm") lives.
func (c *Cache) Path(key, ext string) string {
	return filepath.Join(c.Dir, key[:2], key+ext)
}

// entrySum is the checksum an entry carries.
func entrySum(key []byte, ext string, body []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write(key)
	h.Write([]byte(ext))
	h.Write(body)
	var s [sha256.Size]byte
	h.Sum(s[:0])
	return s
}

// Get returns the artefact's bytes, or ok false when it is not stored. An
// entry that fails its checks is moved aside and reported as a
// *DamagedError (ok false): the caller may rebuild it.
func (c *Cache) Get(key, ext string) (b []byte, ok bool, err error) {
	raw, err := hex.DecodeString(key)
	if err != nil || len(raw) != sha256.Size {
		return nil, false, fmt.Errorf("cache key %q: want the 64 hex digits of a SHA-256", key)
	}
	p := c.Path(key, ext)
	b, err = readEntry(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	var bad *badEntry
	if errors.As(err, &bad) {
		return nil, false, c.MoveAside(key, ext, bad.err)
	}
	if err != nil {
		if st, serr := os.Stat(p); serr == nil && !st.Mode().IsRegular() {
			return nil, false, c.MoveAside(key, ext, err) // a folder or a device where an entry should be
		}
		return nil, false, fmt.Errorf("cache entry %s: %w", p, err)
	}
	stored, body := b[len(entryMagic):len(entryMagic)+sha256.Size], b[entryHead:]
	if sum := entrySum(stored, ext, body); !bytes.Equal(sum[:], b[len(entryMagic)+sha256.Size:entryHead]) {
		return nil, false, c.MoveAside(key, ext, fmt.Errorf("SHA-256 of its %d bytes does not match the one stored with it", len(body)))
	}
	if !bytes.Equal(stored, raw) {
		return nil, false, c.MoveAside(key, ext, fmt.Errorf("it answers another request (key %s…): swapped or misplaced", hex.EncodeToString(stored)[:12]))
	}
	return body, true, nil
}

// badEntry is a cache file that is not the entry asked for.
type badEntry struct{ err error }

func (b *badEntry) Error() string { return b.err.Error() }

// readEntry reads the entry at p: its header first, so that a file that
// is no entry is refused before its body is read (a large file of
// something else is never held in memory).
func readEntry(p string) ([]byte, error) {
	f, size, err := data.OpenRegular(p, MaxEntryBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, min(size, int64(entryHead)))
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	switch {
	case len(b) == 0:
		return nil, &badEntry{errors.New("empty")}
	case !bytes.HasPrefix(b, []byte(entryMagic)):
		return nil, &badEntry{errors.New("written by an older Faithlab without the key it answers")}
	case len(b) < entryHead:
		return nil, &badEntry{fmt.Errorf("%d bytes, cut short in its header", len(b))}
	}
	all := make([]byte, size)
	copy(all, b)
	if _, err := io.ReadFull(f, all[entryHead:]); err != nil {
		return nil, fmt.Errorf("reading %d bytes: %w", size, err)
	}
	return all, nil
}

// MoveAside moves a damaged entry out of the way (to its path with
// ".damaged" added, replacing an older one), inside the cache's folder
// (no link out of it is followed), and returns the error that reports
// it; cause says what is wrong. A caller that finds an entry's content
// unusable calls it itself. A read-only cache's entry stays where it is.
func (c *Cache) MoveAside(key, ext string, cause error) *DamagedError {
	p := c.Path(key, ext)
	if c.ReadOnly {
		return &DamagedError{Path: p, Err: cause, ReadOnly: true}
	}
	e := &DamagedError{Path: p, Moved: p + ".damaged", Err: cause}
	rel := filepath.Join(key[:2], key+ext)
	r, err := os.OpenRoot(c.Dir)
	if err != nil {
		e.Moved = ""
		return e
	}
	defer r.Close()
	if st, err := r.Lstat(key[:2]); err != nil || !st.IsDir() {
		e.Moved = "" // a link or a file where the entries' folder should be
		return e
	}
	r.RemoveAll(rel + ".damaged")
	if err := r.Rename(rel, rel+".damaged"); err != nil {
		e.Moved = ""
	}
	return e
}

// Put stores an artefact, with its key and checksum, whole or not at all.
func (c *Cache) Put(key, ext string, b []byte) error {
	raw, err := hex.DecodeString(key)
	if err != nil || len(raw) != sha256.Size {
		return fmt.Errorf("cache key %q: want the 64 hex digits of a SHA-256", key)
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	sum := entrySum(raw, ext, b)
	return data.WriteFileIn(c.Dir, filepath.Join(key[:2], key+ext), []byte(entryMagic), raw, sum[:], b)
}

// GetNPY reads the .npy artefact under key into an array as it streams
// from disk, checking the entry's key and SHA-256 on the way, so that a
// large artefact (a training set's maps) is never held twice in memory.
// ok is false when it is not stored; a damaged entry is moved aside and
// reported as a *DamagedError, as Get does.
func (c *Cache) GetNPY(key string) (a *data.Array, ok bool, err error) {
	raw, err := hex.DecodeString(key)
	if err != nil || len(raw) != sha256.Size {
		return nil, false, fmt.Errorf("cache key %q: want the 64 hex digits of a SHA-256", key)
	}
	const ext = ".npy"
	p := c.Path(key, ext)
	f, size, err := data.OpenRegular(p, MaxEntryBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		if st, serr := os.Stat(p); serr == nil && !st.Mode().IsRegular() {
			return nil, false, c.MoveAside(key, ext, err)
		}
		return nil, false, fmt.Errorf("cache entry %s: %w", p, err)
	}
	defer f.Close()
	head := make([]byte, entryHead)
	if n, err := io.ReadFull(f, head); err != nil {
		f.Close()
		switch {
		case n == 0:
			return nil, false, c.MoveAside(key, ext, errors.New("empty"))
		case !bytes.HasPrefix(head[:n], []byte(entryMagic)[:min(n, len(entryMagic))]):
			return nil, false, c.MoveAside(key, ext, errors.New("written by an older Faithlab without the key it answers"))
		}
		return nil, false, c.MoveAside(key, ext, fmt.Errorf("%d bytes, cut short in its header", n))
	}
	switch {
	case !bytes.HasPrefix(head, []byte(entryMagic)):
		f.Close()
		return nil, false, c.MoveAside(key, ext, errors.New("written by an older Faithlab without the key it answers"))
	case !bytes.Equal(head[len(entryMagic):len(entryMagic)+sha256.Size], raw):
		f.Close()
		return nil, false, c.MoveAside(key, ext, fmt.Errorf("it answers another request (key %s…): swapped or misplaced", hex.EncodeToString(head[len(entryMagic):len(entryMagic)+12])))
	}
	h := sha256.New()
	h.Write(raw)
	h.Write([]byte(ext))
	a, perr := data.ReadNPY(io.TeeReader(f, h), size-int64(entryHead))
	if _, err := io.Copy(h, f); err != nil && perr == nil { // whatever the parse left: trailing bytes are damage too
		perr = err
	}
	if !bytes.Equal(h.Sum(nil), head[len(entryMagic)+sha256.Size:]) {
		f.Close()
		return nil, false, c.MoveAside(key, ext, fmt.Errorf("SHA-256 of its %d bytes does not match the one stored with it", size-int64(entryHead)))
	}
	if perr != nil {
		f.Close()
		return nil, false, c.MoveAside(key, ext, perr)
	}
	return a, true, nil
}

// PutNPY stores an array as a .npy artefact, as Put does, streaming it
// into the entry: the array is never encoded into memory beside itself.
func (c *Cache) PutNPY(key string, shape []int, values []float32) error {
	raw, err := hex.DecodeString(key)
	if err != nil || len(raw) != sha256.Size {
		return fmt.Errorf("cache key %q: want the 64 hex digits of a SHA-256", key)
	}
	const ext = ".npy"
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	return data.WriteIn(c.Dir, filepath.Join(key[:2], key+ext), func(f *os.File) error {
		h := sha256.New()
		h.Write(raw)
		h.Write([]byte(ext))
		w := bufio.NewWriterSize(f, 1<<20)
		w.Write([]byte(entryMagic))
		w.Write(raw)
		w.Write(make([]byte, sha256.Size)) // the sum, written once known
		if err := data.EncodeNPY(io.MultiWriter(w, h), shape, values); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		_, err := f.WriteAt(h.Sum(nil), int64(len(entryMagic)+sha256.Size))
		return err
	})
}
