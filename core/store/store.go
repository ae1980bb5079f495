// Package store keeps a campaign's run folder and the artefact cache that
// campaigns share, with no server to install:
//
//	RUN/spec.yaml       the spec, as given
//	RUN/manifest.json   versions, machine, seeds, shard, start and end (a merge:
//	                    each merged run's manifest); the launches, each with the
//	                    estimate it was launched on beside its wall time; the
//	                    tasks under way, and why a task cut short has no record
//	RUN/results.jsonl   one Record per finished task, each line carrying
//	                    its own SHA-256, appended and synced to disk before
//	                    the next task starts
//	RUN/lock            held (flock) by the process running the campaign
//	CACHE/ab/abcd….ext  artefacts (models, maps) under the SHA-256 of what
//	                    determines them, written whole or not at all, each
//	                    carrying the key it answers and the SHA-256 of its
//	                    bytes (Cache)
//
// The results file is the results database. A campaign has hundreds of
// records, read whole and filtered in memory; an append-only JSON-lines
// file is crash-safe with one fsync per record (a record cut short by a
// kill is detected and set aside on the next run), merges by
// concatenation, diffs as text and needs no cgo or 10 MB dependency, which
// an SQL engine would bring for queries the campaign never asks.
//
// A run folder may come from someone else, so nothing in it is trusted
// beyond its bytes: nothing in it is followed (a symbolic link where a
// file of the run should be is refused) and nothing outside it is written
// through it (a file written in place — the lock, the results — must be
// the folder's own: a regular file with one name); every other file is
// written through a temporary file and a rename inside the folder; Open
// makes every check that can refuse a folder before its first write, and
// writes only into a folder that is empty or already a run of the same
// spec. A damaged record (its checksum does not match) is reported by line
// and its task runs again, as a record cut short by a kill does; the
// results file is read as a stream, a line at most maxLineBytes held, so
// that a damaged tail of gigabytes (a sparse file) costs neither memory
// nor a copy. A record without a checksum is read unchecked and stays
// marked so (Record.Unchecked) in every copy, until its user accepts it
// (Log.Accept). No write under the folder follows a link out of it
// (data.WriteFileIn).
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"faithlab/core/data"
	"faithlab/core/protocol"
)

// Record is one finished task: a protocol's result for one method on one
// dataset, model and seed, or the error that stopped it.
type Record struct {
	Task     string `json:"task"` // content address of the task
	Label    string `json:"label"`
	Dataset  string `json:"dataset"`
	Model    string `json:"model"`
	Method   string `json:"method"`
	Post     string `json:"post"`
	Protocol string `json:"protocol"`
	Seed     uint64 `json:"seed"`
	// Maps are the cache keys of the maps the task evaluated, by split
	// ("test", "train"): what `export --maps` writes out.
	Maps     map[string]string `json:"maps,omitempty"`
	Result   *protocol.Result  `json:"result,omitempty"`
	Error    string            `json:"error,omitempty"`
	Seconds  float64           `json:"seconds"`
	Finished time.Time         `json:"finished"`
	Faithlab string            `json:"faithlab_version"`
	// Unchecked says where the record was read without a checksum ("" for
	// a checked one): "RUN/results.jsonl line 3", a line from before
	// checksums or with its checksum removed. The mark stays with the
	// record through every copy (a resumed run, a merge), under the
	// copy's own checksum, so that a record nobody could check is never
	// passed off as checked; only the user's word drops it (Log.Accept).
	Unchecked string `json:"unchecked,omitempty"`
}

// Manifest describes a run: what made it, where and when.
type Manifest struct {
	ID       string    `json:"id"`
	Spec     string    `json:"spec"`                // SHA-256 of the spec file
	SpecFile string    `json:"spec_file,omitempty"` // where it was run from: its relative paths resolve there
	Faithlab string    `json:"faithlab_version"`
	Go       string    `json:"go_version"`
	Kernel   string    `json:"kernel"`
	Engine   string    `json:"engine,omitempty"`        // where networks computed: native, torch, torch@ssh://HOST
	Torch    string    `json:"torch_version,omitempty"` // the torch engine's torch.__version__
	Device   string    `json:"device,omitempty"`        // e.g. "cpu (2 threads)", "cuda:0 (NVIDIA H100 80GB HBM3)"
	Model    string    `json:"model_sha256,omitempty"`  // SHA-256 of the model file explained (a TorchScript file runs code)
	Host     string    `json:"host"`
	CPUs     int       `json:"cpus"`
	Seeds    []uint64  `json:"seeds"`
	Shard    string    `json:"shard,omitempty"` // "I/N" of a shard's run
	Cache    string    `json:"cache,omitempty"` // the artefact cache's folder, absolute
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended,omitzero"`
	Tasks    int       `json:"tasks"`
	Failed   int       `json:"failed"`
	// Merged holds, for a run merge made, the manifests of the runs it
	// joined: which host, CPUs, version, kernel and engine made each
	// shard's records (Host and CPUs above are then empty).
	Merged []Manifest `json:"merged_from,omitempty"`
	// Running are the keys of the tasks under way, written as each
	// starts and ends: a launch that never wrote its end (its process
	// killed) interrupted them.
	Running []string `json:"running,omitempty"`
	// Stopped are the tasks launches cut short, left without a record,
	// by key: StoppedByUser (the user cancelled the task or the
	// campaign) or Interrupted (the campaign ended otherwise: a signal,
	// its front end gone). A task's record, when it has one, says more.
	Stopped map[string]string `json:"stopped,omitempty"`
	// Launches are the launches that ran tasks here, oldest first: the
	// estimate each was launched on beside the wall time it took.
	Launches []Launch `json:"launches,omitempty"`
}

// Why a task was left without a record (Manifest.Stopped).
const (
	StoppedByUser = "cancelled by you"
	Interrupted   = "interrupted"
)

// Launch is one launch of a campaign on its folder that ran tasks.
type Launch struct {
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Tasks   int       `json:"tasks"` // tasks it finished or failed
	// Estimate is the time the estimate shown before the launch gave, in
	// seconds (0: none was made); Wall the launch's wall time, from the
	// command's start to its end.
	Estimate float64 `json:"estimate_s,omitempty"`
	Wall     float64 `json:"wall_s"`
}

// Ratio is the launch's estimate over its wall time (0: no estimate).
func (l Launch) Ratio() float64 {
	if l.Estimate <= 0 || l.Wall <= 0 {
		return 0
	}
	return l.Estimate / l.Wall
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

// runFiles are the names a run folder's own files have: each must be
// absent or what the run writes there — never a symbolic link, and a file
// written in place (inPlace) never a file with another name elsewhere.
var runFiles = []struct {
	name    string
	folder  bool
	inPlace bool
}{
	{"spec.yaml", false, false}, {"manifest.json", false, false}, {"results.jsonl", false, true},
	{"results.jsonl.damaged", false, true}, {"lock", false, true}, {"results.csv", false, false},
	{"diagnostics.json", false, false}, {"cache", true, false}, {"shards", true, false},
}

// Open opens the run folder dir for the spec, creating it. It writes only
// into a folder that does not exist, is empty (but for the spec file
// itself), or is a run of the same spec (which then resumes), and only after every check that can refuse
// the folder: a folder holding another spec, other files, a damaged
// manifest, or a link or foreign file where a run file should be is
// refused with nothing written.
func Open(dir string, spec []byte) (*Run, error) {
	r := &Run{Dir: dir}
	fresh, err := r.check(spec)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if fresh {
		if err := data.WriteFileIn(dir, "spec.yaml", spec); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// check makes every check Open makes before writing; fresh reports that
// the folder holds no spec yet.
func (r *Run) check(spec []byte) (fresh bool, err error) {
	st, err := os.Stat(r.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, nil
	case err != nil:
		return false, err
	case !st.IsDir():
		return false, fmt.Errorf("run folder %s is not a folder", r.Dir)
	}
	if err := r.checkFiles(); err != nil {
		return false, err
	}
	old, err := readOwn(r.specPath(), maxSmallFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		entries, err := os.ReadDir(r.Dir)
		if err != nil {
			return false, err
		}
		for _, e := range entries {
			// The cluster scripts make shards/ for their logs before any
			// shard has run (checkFiles has seen it is a real folder).
			if e.Name() == "shards" && e.IsDir() {
				continue
			}
			// The spec file itself may live there (evaluate's campaign.yaml).
			if b, err := readOwn(filepath.Join(r.Dir, e.Name()), int64(len(spec))); err != nil || !bytes.Equal(b, spec) {
				return false, fmt.Errorf("%s is not empty and holds no Faithlab run (no spec.yaml): a run is written only into an empty folder or a run of the same spec", r.Dir)
			}
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("%s: %w", r.specPath(), err)
	case !bytes.Equal(old, spec):
		return false, fmt.Errorf("run folder %s holds another campaign's spec (%s): give this one its own output folder", r.Dir, r.specPath())
	}
	if _, err := r.Manifest(); err != nil {
		return false, fmt.Errorf("run folder %s: %w", r.Dir, err)
	}
	return false, nil
}

// Claim checks, writing nothing, that dir may become the folder of a
// campaign whose spec file there, name, holds spec: dir does not exist,
// is empty (but for the shards/ folder a cluster script makes), or
// already holds that very file (a folder of this campaign, which then
// resumes). It is the check a front end makes before it writes a spec
// file into a folder it was given (evaluate's campaign.yaml, a
// reproduction's), so that nothing is written into a folder of the
// user's that another check would refuse.
func Claim(dir, name string, spec []byte) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	p := filepath.Join(dir, name)
	b, err := readOwn(p, maxSmallFile)
	switch {
	case err == nil && bytes.Equal(b, spec):
		return nil
	case err == nil:
		return fmt.Errorf("%s holds another campaign (%s): give this one its own folder", dir, p)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == "shards" && e.IsDir() {
			continue
		}
		return fmt.Errorf("%s is not empty (it holds %s) and holds no campaign of its own (no %s): a campaign is written only into a new or empty folder, or one of the same campaign", dir, e.Name(), name)
	}
	return nil
}

// checkFiles refuses a link, a foreign file or a file of the wrong kind
// where one of the run's files should be.
func (r *Run) checkFiles() error {
	for _, f := range runFiles {
		p := filepath.Join(r.Dir, f.name)
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return err
		case st.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: a run folder's files are never followed (remove it if the folder is yours)", p)
		case f.folder && !st.IsDir():
			return fmt.Errorf("%s is not a folder", p)
		case !f.folder && !st.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file", p)
		case f.inPlace && links(st) > 1:
			return fmt.Errorf("%s has %d names: a file the run writes in place must be the folder's own", p, links(st))
		}
	}
	return nil
}

// OpenExisting opens a run folder that a campaign wrote, for reading.
func OpenExisting(dir string) (*Run, []byte, error) {
	r := &Run{Dir: dir}
	spec, err := readOwn(r.specPath(), maxSmallFile)
	if err != nil {
		return nil, nil, fmt.Errorf("%s is not a run folder: %w", dir, err)
	}
	return r, spec, nil
}

// Manifest reads the run's manifest (the zero Manifest before the first).
func (r *Run) Manifest() (Manifest, error) {
	var m Manifest
	b, err := readOwn(r.manifestPath(), maxSmallFile)
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
	return data.WriteFileIn(r.Dir, "manifest.json", append(b, '\n'))
}

// openOwn opens one of the folder's own files without following a link,
// and checks that it is a regular file with no other name.
func openOwn(path string, flag int) (*os.File, error) {
	f, err := openNoFollow(path, flag)
	if err != nil {
		return nil, err
	}
	if err := ownFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openNoFollow opens path, refusing a symbolic link with a message that
// says so, and anything else but a regular file before it is opened
// (opening a named pipe blocks until a writer comes). A file swapped in
// between is refused too.
func openNoFollow(path string, flag int) (*os.File, error) {
	before, err := os.Lstat(path)
	switch {
	case err == nil && before.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s is a symbolic link: a run folder's files are never followed", path)
	case err == nil && !before.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.OpenFile(path, flag|noFollow|syscall.O_NONBLOCK, 0o644) // a pipe swapped in opens at once, and is refused below
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a symbolic link: a run folder's files are never followed", path)
		}
		return nil, err
	}
	if before != nil {
		if st, err := f.Stat(); err != nil || !os.SameFile(before, st) {
			f.Close()
			return nil, fmt.Errorf("%s was replaced while it was opened", path)
		}
	}
	return f, nil
}

// regular checks that the open file is a regular file.
func regular(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	return nil
}

// ownFile checks that the open file is a regular file with one name.
func ownFile(f *os.File, path string) error {
	st, err := f.Stat()
	switch {
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case links(st) > 1:
		return fmt.Errorf("%s has %d names: a file the run writes in place must be the folder's own", path, links(st))
	}
	return nil
}

// readOwn reads a regular file of the folder, not through a link, of at
// most limit bytes.
func readOwn(path string, limit int64) ([]byte, error) {
	f, err := openNoFollow(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d it may", path, st.Size(), limit)
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: reading %d bytes: %w", path, len(b), err)
	}
	return b, nil
}
