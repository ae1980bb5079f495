// Package store keeps a campaign's run folder and the artefact cache that
// campaigns share, with no server to install:
//
//	RUN/spec.yaml       the spec, as given
//	RUN/manifest.json   versions, machine, seeds, shard, start and end
//	RUN/results.jsonl   one Record per finished task, appended and synced
//	                    to disk before the next task starts
//	CACHE/ab/abcd….ext  artefacts (models, maps) under the SHA-256 of what
//	                    determines them, written whole or not at all, each
//	                    carrying the SHA-256 of its bytes (Cache)
//
// The results file is the results database. A campaign has hundreds of
// records, read whole and filtered in memory; an append-only JSON-lines
// file is crash-safe with one fsync per record (a record cut short by a
// kill is detected and dropped on the next open), merges by
// concatenation, diffs as text and needs no cgo or 10 MB dependency, which
// an SQL engine would bring for queries the campaign never asks.
package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"faithlab/core/data"
	"faithlab/core/protocol"
)

// Record is one finished task: a protocol's result for one method on one
// dataset, model and seed, or the error that stopped it.
type Record struct {
	Task     string           `json:"task"` // content address of the task
	Label    string           `json:"label"`
	Dataset  string           `json:"dataset"`
	Model    string           `json:"model"`
	Method   string           `json:"method"`
	Post     string           `json:"post"`
	Protocol string           `json:"protocol"`
	Seed     uint64           `json:"seed"`
	Result   *protocol.Result `json:"result,omitempty"`
	Error    string           `json:"error,omitempty"`
	Seconds  float64          `json:"seconds"`
	Finished time.Time        `json:"finished"`
	Faithlab string           `json:"faithlab_version"`
}

// Manifest describes a run: what made it, where and when.
type Manifest struct {
	ID       string    `json:"id"`
	Spec     string    `json:"spec"` // SHA-256 of the spec file
	Faithlab string    `json:"faithlab_version"`
	Go       string    `json:"go_version"`
	Kernel   string    `json:"kernel"`
	Engine   string    `json:"engine,omitempty"`        // where networks computed: native, torch, torch@ssh://HOST
	Torch    string    `json:"torch_version,omitempty"` // the torch engine's torch.__version__
	Device   string    `json:"device,omitempty"`        // e.g. "cpu (2 threads)", "cuda:0 (NVIDIA H100 80GB HBM3)"
	Host     string    `json:"host"`
	CPUs     int       `json:"cpus"`
	Seeds    []uint64  `json:"seeds"`
	Shard    string    `json:"shard,omitempty"` // "I/N" of a shard's run
	Cache    string    `json:"cache,omitempty"` // the artefact cache's folder, absolute
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended,omitzero"`
	Tasks    int       `json:"tasks"`
	Failed   int       `json:"failed"`
}

// maxSmallFile bounds what a run folder's spec and manifest may hold.
const maxSmallFile = 4 << 20

// Run is an open run folder.
type Run struct {
	Dir string
}

// Paths of a run folder's files.
func (r *Run) specPath() string     { return filepath.Join(r.Dir, "spec.yaml") }
func (r *Run) manifestPath() string { return filepath.Join(r.Dir, "manifest.json") }

// ResultsPath is the run's results file.
func (r *Run) ResultsPath() string { return filepath.Join(r.Dir, "results.jsonl") }

// Open opens the run folder dir for the spec, creating it; a folder that
// holds another spec is an error (a new campaign needs its own folder),
// the same spec resumes.
func Open(dir string, spec []byte) (*Run, error) {
	r := &Run{Dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	old, err := data.ReadFileLimit(r.specPath(), maxSmallFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := data.WriteFileAtomic(r.specPath(), spec); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("%s: %w", r.specPath(), err)
	case !bytes.Equal(old, spec):
		return nil, fmt.Errorf("run folder %s holds another campaign's spec (%s): give this one its own output folder", dir, r.specPath())
	}
	return r, nil
}

// OpenExisting opens a run folder that a campaign wrote.
func OpenExisting(dir string) (*Run, []byte, error) {
	r := &Run{Dir: dir}
	spec, err := data.ReadFileLimit(r.specPath(), maxSmallFile)
	if err != nil {
		return nil, nil, fmt.Errorf("%s is not a run folder: %w", dir, err)
	}
	return r, spec, nil
}

// Manifest reads the run's manifest (the zero Manifest before the first).
func (r *Run) Manifest() (Manifest, error) {
	var m Manifest
	b, err := data.ReadFileLimit(r.manifestPath(), maxSmallFile)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("%s: %w", r.manifestPath(), err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", r.manifestPath(), err)
	}
	return m, nil
}

// SetManifest replaces the manifest.
func (r *Run) SetManifest(m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return data.WriteFileAtomic(r.manifestPath(), append(b, '\n'))
}

// Records reads the results file. A last line cut short (the process was
// killed while writing it) is dropped from the file, so that the next
// append starts on a line of its own; a damaged line before the last is an
// error naming it.
func (r *Run) Records() ([]Record, error) {
	b, err := os.ReadFile(r.ResultsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if n := bytes.LastIndexByte(b, '\n'); n+1 < len(b) {
		if err := os.Truncate(r.ResultsPath(), int64(n+1)); err != nil {
			return nil, fmt.Errorf("%s: dropping a record cut short: %w", r.ResultsPath(), err)
		}
		b = b[:n+1]
	}
	var recs []Record
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 256<<20)
	for line := 1; sc.Scan(); line++ {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", r.ResultsPath(), line, err)
		}
		recs = append(recs, rec)
	}
	return recs, sc.Err()
}

// Append adds a record to the results file and syncs it to disk.
func (r *Run) Append(rec Record) error {
	return AppendRecords(r.ResultsPath(), rec)
}

// AppendRecords appends records, one JSON line each, and syncs the file.
func AppendRecords(path string, recs ...Record) error {
	var buf bytes.Buffer
	for _, rec := range recs {
		b, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("record %s: %w", rec.Label, err)
		}
		buf.Write(append(b, '\n'))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Latest keeps each task's last record: a task that failed and then
// succeeded on a resume counts as succeeded.
func Latest(recs []Record) map[string]Record {
	m := make(map[string]Record, len(recs))
	for _, rec := range recs {
		m[rec.Task] = rec
	}
	return m
}

// Cache holds artefacts under content addresses. An entry is the magic
// "FLCACHE1", the SHA-256 of the artefact's bytes, then the bytes; Get
// checks it, so that an entry damaged on disk (cut short, a flipped bit) is
// found, reported by path, moved aside and, by the runner, rebuilt, instead
// of failing every task that needs it for ever. Entries written before
// checksums (the bare artefact) are read as they are: the runner checks
// their content (job.Runner).
type Cache struct {
	Dir string
}

const (
	entryMagic = "FLCACHE1"
	entryHead  = len(entryMagic) + sha256.Size
	// MaxEntryBytes bounds what Get reads for one entry.
	MaxEntryBytes = 8 << 30
)

// DamagedError is a cache entry whose bytes are not what was stored. The
// entry has been moved aside to Moved (Path + ".damaged", kept for
// inspection), so that the cache now misses it and it can be rebuilt.
type DamagedError struct {
	Path  string
	Moved string // "" when moving it aside failed too
	Err   error  // what is wrong with it
}

func (e *DamagedError) Error() string {
	if e.Moved == "" {
		return fmt.Sprintf("cache entry %s is damaged (%v) and could not be moved aside", e.Path, e.Err)
	}
	return fmt.Sprintf("cache entry %s is damaged (%v); moved aside to %s", e.Path, e.Err, e.Moved)
}

func (e *DamagedError) Unwrap() error { return e.Err }

// Key is the content address of what a task's output depends on: the
// SHA-256 of the JSON of parts.
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

// Get returns the artefact's bytes, or ok false when it is not stored. An
// entry that fails its checksum is moved aside and reported as a
// *DamagedError (ok false): the caller may rebuild it.
func (c *Cache) Get(key, ext string) (b []byte, ok bool, err error) {
	p := c.Path(key, ext)
	b, err = data.ReadFileLimit(p, MaxEntryBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		if st, serr := os.Stat(p); serr == nil && !st.Mode().IsRegular() {
			return nil, false, c.MoveAside(key, ext, err) // a folder or a device where an entry should be
		}
		return nil, false, fmt.Errorf("cache entry %s: %w", p, err)
	}
	switch {
	case len(b) == 0:
		return nil, false, c.MoveAside(key, ext, errors.New("empty"))
	case !bytes.HasPrefix(b, []byte(entryMagic)):
		return b, true, nil // written before checksums
	case len(b) < entryHead:
		return nil, false, c.MoveAside(key, ext, fmt.Errorf("%d bytes, cut short in its header", len(b)))
	}
	body := b[entryHead:]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], b[len(entryMagic):entryHead]) {
		return nil, false, c.MoveAside(key, ext, fmt.Errorf("SHA-256 of its %d bytes does not match the one stored with it", len(body)))
	}
	return body, true, nil
}

// MoveAside moves a damaged entry out of the way (to its path with
// ".damaged" added, replacing an older one) and returns the error that
// reports it; cause says what is wrong. A caller that finds an entry's
// content unusable (one written before checksums, say) calls it itself.
func (c *Cache) MoveAside(key, ext string, cause error) *DamagedError {
	p := c.Path(key, ext)
	e := &DamagedError{Path: p, Moved: p + ".damaged", Err: cause}
	os.RemoveAll(e.Moved)
	if err := os.Rename(p, e.Moved); err != nil {
		e.Moved = ""
	}
	return e
}

// Put stores an artefact, with its checksum, whole or not at all.
func (c *Cache) Put(key, ext string, b []byte) error {
	p := c.Path(key, ext)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	return data.WriteFileAtomic(p, []byte(entryMagic), sum[:], b)
}
