package campaign

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"faithlab/core/data"
	"faithlab/core/job"
	"faithlab/core/model"
	"faithlab/core/report"
	"faithlab/core/spec"
	"faithlab/core/store"
)

// Results is a run folder opened for reading: its campaign, and the
// records of the folder and of its shards.
type Results struct {
	*Campaign
	Dir      string
	Manifest store.Manifest // the folder's own (zero when it has none yet)
	Records  []store.Record
	// Notes say what is wrong with the results files, a line each:
	// damaged records (left out) and records read without checksums.
	Notes []string
	// shards are the manifests of the folder's shards (RUN/shards/I-of-N).
	shards []store.Manifest
	// damaged counts the damaged lines of the results files (left out).
	damaged int
	// live says a process holds the folder's lock: runs it now.
	live bool

	diagOnce sync.Once
	diag     report.Diagnostics
}

// Diagnostics are the finished tasks' diagnostics, with the confidence of
// their verdicts and the report card (report.Diagnose), computed once.
func (r *Results) Diagnostics() report.Diagnostics {
	r.diagOnce.Do(func() { r.diag = report.Diagnose(r.Status().Done) })
	return r.diag
}

// Open reads the run folder dir and its shards' folders.
func Open(dir string) (*Results, error) {
	run, raw, err := store.OpenExisting(dir)
	if err != nil {
		return nil, err
	}
	// The spec's relative paths (a model file, a dataset) resolve where it
	// was run from, as they did in the run: the task keys hold the model
	// file's content.
	man, _ := run.Manifest()
	path := filepath.Join(dir, "spec.yaml")
	if f := man.SpecFile; f != "" {
		if st, err := os.Stat(filepath.Dir(f)); err == nil && st.IsDir() {
			path = f
		}
	}
	s, err := spec.Parse(path, raw)
	if err != nil {
		return nil, err
	}
	log, err := run.Read()
	if err != nil {
		return nil, err
	}
	recs, notes, damaged := log.Records, log.Notes(), log.DamagedLines()
	var shardMans []store.Manifest
	shards, _ := filepath.Glob(filepath.Join(dir, "shards", "*"))
	for _, sd := range shards {
		sr, sraw, err := store.OpenExisting(sd)
		if err != nil {
			continue
		}
		if !bytes.Equal(sraw, raw) {
			return nil, fmt.Errorf("shard %s ran another spec than %s", sd, dir)
		}
		more, err := sr.Read()
		if err != nil {
			return nil, err
		}
		recs, notes, damaged = append(recs, more.Records...), append(notes, more.Notes()...), damaged+more.DamagedLines()
		if sm, err := sr.Manifest(); err == nil && !sm.Started.IsZero() {
			shardMans = append(shardMans, sm)
		}
	}
	_, live := Running(dir)
	return &Results{Campaign: &Campaign{Spec: s, Raw: raw}, Dir: dir, Manifest: man, Records: recs, Notes: notes, shards: shardMans, damaged: damaged, live: live}, nil
}

// Ran says whether the run is one of spec s: whether its folder holds s as
// Save writes it. A run folder holds one spec's results; another spec's
// run there is refused.
func (r *Results) Ran(s *spec.Spec) bool {
	text, err := spec.Format(s)
	return err == nil && bytes.Equal(text, r.Raw)
}

// Status is where a run stands.
type Status struct {
	Done   []store.Record // the latest successful record of each task, in plan order
	Failed []store.Record
	// Missing are the tasks without a record, which a launch runs: those
	// never started and those cut short alike.
	Missing []job.Task
	// Why says, for a task of Missing cut short or under way, what
	// happened to it (job.StateCancelled, StateInterrupted, StateRunning);
	// a task of Missing it does not name is to run (job.StateToRun).
	Why map[string]job.State
}

// State is what happened to the task with the key, in the words every
// front end uses: done, failed, cancelled by you, interrupted, running or
// to run.
func (st Status) State(key string) job.State {
	for _, rec := range st.Done {
		if rec.Task == key {
			return job.StateDone
		}
	}
	for _, rec := range st.Failed {
		if rec.Task == key {
			return job.StateFailed
		}
	}
	if w, ok := st.Why[key]; ok {
		return w
	}
	return job.StateToRun
}

// Count is the number of tasks of Missing in the state (cancelled by
// you, interrupted, running or to run).
func (st Status) Count(state job.State) int {
	n := 0
	for _, t := range st.Missing {
		if w, ok := st.Why[t.Key]; ok && w == state || !ok && state == job.StateToRun {
			n++
		}
	}
	return n
}

// Words says how many tasks are in each state, the states with none left
// out: "4 of 6 tasks done, 1 cancelled by you, 1 to run" — the line the
// CLI's status and the workbench both show.
func (st Status) Words() string {
	total := len(st.Done) + len(st.Failed) + len(st.Missing)
	parts := []string{fmt.Sprintf("%d of %s done", len(st.Done), report.Count(total, "task"))}
	if n := len(st.Failed); n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", n, job.StateFailed))
	}
	if left := st.leftWords(); left != "" {
		parts = append(parts, left)
	}
	return strings.Join(parts, ", ")
}

// leftWords says how many tasks of Missing are in each state: "1
// cancelled by you, 1 to run".
func (st Status) leftWords() string {
	var parts []string
	for _, w := range []job.State{job.StateRunning, job.StateCancelled, job.StateInterrupted, job.StateToRun} {
		if n := st.Count(w); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, w))
		}
	}
	return strings.Join(parts, ", ")
}

// Status sorts the planned tasks into done, failed and still to run: a
// shard's own folder has only its shard's tasks to run, a campaign's
// folder every task no shard has done. A task without a record is said
// cancelled or interrupted as the manifest's last word on it says, and
// running while a live process holds the folder and runs it.
func (r *Results) Status() Status {
	sh, ok := job.ParseShard(r.Manifest.Shard)
	if !ok || filepath.Base(r.Dir) != fmt.Sprintf("%d-of-%d", sh.I, sh.Of) {
		sh = job.Shard{} // a campaign's folder, or a merged run: the whole plan
	}
	done, failed, missing := r.sort(r.Records, sh)
	st := Status{Done: done, Failed: failed, Missing: missing, Why: map[string]job.State{}}
	m := r.Manifest
	for _, t := range missing {
		switch {
		case slices.Contains(m.Running, t.Key) && r.live:
			st.Why[t.Key] = job.StateRunning
		case slices.Contains(m.Running, t.Key):
			st.Why[t.Key] = job.StateInterrupted // its launch never wrote its end
		case m.Stopped[t.Key] == store.StoppedByUser:
			st.Why[t.Key] = job.StateCancelled
		case m.Stopped[t.Key] == store.Interrupted:
			st.Why[t.Key] = job.StateInterrupted
		}
	}
	return st
}

// State words the manifest's state: when it started and whether it ended.
// A sharded campaign's folder, whose own manifest is empty, has its
// shards' state.
func (r *Results) State() string {
	m := r.Manifest
	if m.Started.IsZero() && len(r.shards) > 0 {
		return r.shardsState()
	}
	if m.Started.IsZero() {
		return "not started"
	}
	var left int
	if !m.Ended.IsZero() {
		left = len(r.Status().Missing)
	}
	if len(m.Merged) > 0 {
		state := fmt.Sprintf("merged %s from %s, the first started %s", m.Ended.Format(time.RFC3339), report.Count(len(m.Merged), "run"), m.Started.Format(time.RFC3339))
		if left > 0 {
			state += fmt.Sprintf(", with %s to run", report.Count(left, "task"))
		}
		return state + "; " + madeOn(m.Merged)
	}
	var state string
	switch {
	case r.live:
		state = "running now"
	case m.Ended.IsZero():
		state = "interrupted: its process ended before the run did"
	case left > 0:
		state = fmt.Sprintf("ended %s with %s left (%s)", m.Ended.Format(time.RFC3339), report.Count(left, "task"), r.Status().leftWords())
	default:
		state = "ended " + m.Ended.Format(time.RFC3339)
	}
	return fmt.Sprintf("started %s, %s; faithlab %s, %s, %s, %d CPUs", m.Started.Format(time.RFC3339), state, m.Faithlab, m.Go, m.Host, m.CPUs)
}

// madeOn words where merged runs ran: each distinct version, Go and host
// (with its CPUs), in the order met — "faithlab 0.9.0, go1.26.0; on
// node1 (8 CPUs), node2 (8 CPUs)".
func madeOn(runs []store.Manifest) string {
	var versions, hosts []string
	for _, r := range runs {
		if v := "faithlab " + r.Faithlab + ", " + r.Go; !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
		if h := fmt.Sprintf("%s (%s)", r.Host, report.Count(r.CPUs, "CPU")); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return strings.Join(versions, "; ") + "; on " + strings.Join(hosts, ", ")
}

// shardsState words the state of the folder's shards: how many of how
// many started, the first start, how many are not ended (or the last end),
// and the tasks left to run: "2 of 3 shards started T, ended by T'; 2 tasks
// to run".
func (r *Results) shardsState() string {
	started, ended, running := r.shards[0].Started, r.shards[0].Ended, 0
	shards := report.Count(len(r.shards), "shard")
	if sh, ok := job.ParseShard(r.shards[0].Shard); ok {
		shards = fmt.Sprintf("%d of %d shards", len(r.shards), sh.Of)
	}
	for _, m := range r.shards {
		if m.Started.Before(started) {
			started = m.Started
		}
		switch {
		case m.Ended.IsZero():
			running++
		case m.Ended.After(ended):
			ended = m.Ended
		}
	}
	state := fmt.Sprintf("%s started %s", shards, started.Format(time.RFC3339))
	if running > 0 {
		state += fmt.Sprintf(", %d running or stopped", running)
	} else {
		state += ", ended by " + ended.Format(time.RFC3339)
	}
	if left := len(r.Status().Missing); left > 0 {
		state += fmt.Sprintf("; %s to run", report.Count(left, "task"))
	}
	return state
}

// CSV is the tidy CSV of the finished tasks, in plan order.
func (r *Results) CSV() ([]byte, error) {
	var buf bytes.Buffer
	err := report.WriteCSV(&buf, r.ID(), r.Status().Done, r.Diagnostics().Confidence)
	return buf.Bytes(), err
}

// Caches lists the caches the run's artefacts may be in, for reading
// only (a reader of a run never moves an entry, even a damaged one): its
// own (ownCaches), then those its manifests name elsewhere.
func (r *Results) Caches() []*store.Cache {
	own, elsewhere := r.ownCaches()
	for _, d := range elsewhere {
		own = append(own, &store.Cache{Dir: d, ReadOnly: true})
	}
	return own
}

// ownCaches are the caches that belong to the run folder, read-only: its
// cache/ subfolder and, for a shard's folder (CAMPAIGN/shards/I-of-N),
// its campaign folder's, where a campaign keeps its cache unless its spec
// names one; and the folders its manifests (its own, its shards') name
// that lie inside those folders. elsewhere are the folders its manifests
// name outside them: a manifest is the run's word, not the user's, so a
// merge reads them only where the user names them too.
func (r *Results) ownCaches() (own []*store.Cache, elsewhere []string) {
	var roots []string
	seen := map[string]bool{}
	add := func(d string) {
		if d == "" || seen[d] {
			return
		}
		seen[d] = true
		own = append(own, &store.Cache{Dir: d, ReadOnly: true})
	}
	dir, err := filepath.Abs(r.Dir)
	if err != nil {
		return nil, nil
	}
	roots = append(roots, dir)
	add(filepath.Join(dir, "cache"))
	if sh, ok := job.ParseShard(r.Manifest.Shard); ok && filepath.Base(dir) == fmt.Sprintf("%d-of-%d", sh.I, sh.Of) && filepath.Base(filepath.Dir(dir)) == "shards" {
		campaign := filepath.Dir(filepath.Dir(dir))
		if _, raw, err := store.OpenExisting(campaign); err == nil && bytes.Equal(raw, r.Raw) {
			roots = append(roots, campaign)
			add(filepath.Join(campaign, "cache"))
		}
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "shards", "*"))
	for _, d := range append([]string{dir}, shards...) {
		run, _, err := store.OpenExisting(d)
		if err != nil {
			continue
		}
		m, err := run.Manifest()
		if err != nil || m.Cache == "" || seen[m.Cache] || slices.Contains(elsewhere, m.Cache) {
			continue
		}
		if ok, err := inside(m.Cache, roots); err == nil && ok {
			add(m.Cache)
		} else {
			elsewhere = append(elsewhere, m.Cache)
		}
	}
	return own, elsewhere
}

// Exported is what Figures wrote.
type Exported struct {
	Figures, Files int
	MissingSamples int // perturbed samples in none of the run's caches
}

// FigureList builds the run's figures (report.Figures and the sample
// grids); missing counts the perturbed samples in none of the run's caches.
func (r *Results) FigureList() (figs []report.Figure, missing int, err error) {
	ok := r.Status().Done
	conf := r.Diagnostics().Confidence
	if figs, err = report.Figures(ok, conf); err != nil {
		return nil, 0, err
	}
	evidence, lost, err := report.EvidenceFigures(ok, conf.Trust, r.Caches()...)
	if err != nil {
		return nil, 0, err
	}
	grids, missing, err := report.SampleFigures(ok, r.Caches()...)
	if err != nil {
		return nil, 0, err
	}
	return append(append(figs, evidence...), grids...), missing + lost, nil
}

// Figures draws the run's figures into root/dir (dir relative to root,
// "" for root itself; no write follows a link out of root) in the given
// formats (png, svg, pdf).
func (r *Results) Figures(root, dir string, formats ...string) (Exported, error) {
	figs, missing, err := r.FigureList()
	if err != nil {
		return Exported{}, err
	}
	files, err := report.Save(root, dir, figs, formats...)
	if err != nil {
		return Exported{}, err
	}
	return Exported{Figures: len(figs), Files: len(files), MissingSamples: missing}, nil
}

// Merged is what Merge did.
type Merged struct {
	Done, Failed, Missing int
	LostSamples           int // perturbed samples in none of the caches read
	// Shards says, when tasks were not run and the runs are shards of one
	// split, which shards they belong to: "shard 2/3 not given (2 tasks),
	// shard 0/3 incomplete (1 task not run)".
	Shards string
	// Notes say what the user should know of the runs merged, a line
	// each: damaged records (left out), records read without checksums
	// (merged, still marked unchecked), caches not read.
	Notes []string
}

// Merge joins run folders of one spec (a campaign's shards, or any runs of
// it) into the new run folder out: their latest records, and the perturbed
// samples they keep, copied into out's own cache so that it stands alone
// when the shards' caches were node-local. A folder given twice, or two
// folders of the same shard, are refused. Tasks missing from every run are
// counted (and their shards named) in the result, and the merged run's
// REPORT.md and state say they are missing.
//
// The runs are data: a record read without a checksum is merged with its
// mark (store.Record.Unchecked), never signed as checked; a damaged one is
// left out and named. Samples are read, never moved, from the runs' own
// caches (Results.ownCaches) and from caches, the folders the user names;
// a cache elsewhere that a run's manifest names is not read, and a note
// says so. out is written whole or not at all: the merge is made in a
// temporary folder beside it and renamed into place, so that a merge that
// fails leaves nothing that blocks the next.
func Merge(out string, caches []string, dirs ...string) (Merged, error) {
	var m Merged
	if len(dirs) == 0 {
		return m, fmt.Errorf("nothing to merge")
	}
	var runs []*Results
	var seen []os.FileInfo
	var all []store.Record
	var read []*store.Cache
	var started time.Time
	for _, d := range caches {
		read = append(read, &store.Cache{Dir: d, ReadOnly: true})
	}
	for i, d := range dirs {
		r, err := Open(d)
		if err != nil {
			return m, err
		}
		st, err := os.Stat(d)
		if err != nil {
			return m, err
		}
		for j, o := range seen {
			if os.SameFile(o, st) {
				return m, fmt.Errorf("%s is given twice (as %s and %s): give each run once", d, dirs[j], d)
			}
			if sh := r.Manifest.Shard; sh != "" && sh == runs[j].Manifest.Shard {
				return m, fmt.Errorf("%s and %s are both shard %s: give each shard once — the folder that ran it furthest (faithlab-cli status says), after resuming it there if it stopped short", dirs[j], d, sh)
			}
		}
		if i > 0 && !bytes.Equal(r.Raw, runs[0].Raw) {
			return m, fmt.Errorf("%s ran another spec than %s: only runs of one spec merge", d, dirs[0])
		}
		if s := r.Manifest.Started; !s.IsZero() && (started.IsZero() || s.Before(started)) {
			started = s
		}
		runs, seen = append(runs, r), append(seen, st)
		all = append(all, r.Records...)
		own, elsewhere := r.ownCaches()
		read = append(read, own...)
		for _, e := range elsewhere {
			if !slices.ContainsFunc(read, func(c *store.Cache) bool { return sameDir(c.Dir, e) }) {
				m.Notes = append(m.Notes, fmt.Sprintf("%s's manifest names the cache %s, outside the runs given: not read (give it with --cache to copy its samples)", d, e))
			}
		}
		m.Notes = append(m.Notes, r.Notes...)
	}
	first := runs[0]
	abs, err := filepath.Abs(out)
	if err != nil {
		return m, err
	}
	if err := newFolder(abs); err != nil {
		return m, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return m, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".merging-")
	if err != nil {
		return m, err
	}
	defer os.RemoveAll(tmp) // gone after the rename; what a failure left otherwise
	run, err := store.Open(tmp, first.Raw)
	if err != nil {
		return m, err
	}
	ok, failed, missing := first.sort(all, job.Shard{})
	m.Done, m.Failed, m.Missing = len(ok), len(failed), len(missing)
	m.Shards = missingShards(runs, missing)
	if err := store.AppendRecords(run.ResultsPath(), append(ok, failed...)...); err != nil {
		return m, err
	}
	cache := &store.Cache{Dir: filepath.Join(tmp, "cache")}
	for _, rec := range ok {
		for _, sm := range rec.Result.Samples {
			b := fetch(sm.Key, ".npy", read)
			if b == nil {
				m.LostSamples++
				continue
			}
			if err := cache.Put(sm.Key, ".npy", b); err != nil {
				return m, err
			}
		}
	}
	var from []store.Manifest // flat: a merged run given stands for the runs it merged
	for _, r := range runs {
		if len(r.Manifest.Merged) > 0 {
			from = append(from, r.Manifest.Merged...)
		} else {
			from = append(from, r.Manifest)
		}
	}
	if err := run.SetManifest(store.Manifest{ID: first.ID(), Spec: hash(first.Raw), Faithlab: model.Version, Go: runtime.Version(),
		Seeds: first.Spec.Seeds, Cache: filepath.Join(abs, "cache"), Tasks: len(ok) + len(failed) + len(missing), Failed: len(failed), Started: started, Ended: time.Now().UTC(),
		Merged: from}); err != nil {
		return m, err
	}
	var o Outcome
	if err := first.writeResults(tmp, ok, report.Left{Failed: len(failed), NotRun: len(missing)}, &o); err != nil {
		return m, err
	}
	if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) { // an empty folder (newFolder)
		return m, err
	}
	return m, os.Rename(tmp, abs)
}

// newFolder refuses dir unless it does not exist or is an empty folder
// (not a link to one): where a merge may put a new run.
func newFolder(dir string) error {
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s exists and is not a folder: merge into a new folder", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s already holds files (%s): merge into a new folder", dir, entries[0].Name())
	}
	return nil
}

// fetch is the artefact under key from the first cache that holds it
// whole (nil: none does); a damaged entry counts as absent.
func fetch(key, ext string, caches []*store.Cache) []byte {
	for _, c := range caches {
		if b, ok, err := c.Get(key, ext); err == nil && ok {
			return b
		}
	}
	return nil
}

// sameDir reports whether a and b name one folder.
func sameDir(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// missingShards words which shards the missing tasks belong to when runs
// are shards of one split (I/N of the same N), "" otherwise: a shard not
// among the runs, or one that stopped short.
func missingShards(runs []*Results, missing []job.Task) string {
	given := map[int]bool{}
	of := 0
	for _, r := range runs {
		sh, ok := job.ParseShard(r.Manifest.Shard)
		if !ok || (of != 0 && sh.Of != of) {
			return ""
		}
		of, given[sh.I] = sh.Of, true
	}
	left := make([]int, of)
	for _, t := range missing {
		left[t.Index%of]++
	}
	damaged := map[int]int{}
	for _, r := range runs {
		sh, _ := job.ParseShard(r.Manifest.Shard)
		damaged[sh.I] += r.damaged
	}
	var parts []string
	for i, n := range left {
		switch {
		case n == 0:
		case !given[i]:
			parts = append(parts, fmt.Sprintf("shard %d/%d not given (%s)", i, of, report.Count(n, "task")))
		case damaged[i] > 0:
			parts = append(parts, fmt.Sprintf("shard %d/%d damaged (%s of its results damaged and left out, %s not run: run the shard again to redo them)", i, of, report.Count(damaged[i], "line"), report.Count(n, "task")))
		default:
			parts = append(parts, fmt.Sprintf("shard %d/%d incomplete (%s not run)", i, of, report.Count(n, "task")))
		}
	}
	return strings.Join(parts, ", ")
}

// WriteCSV writes the run's CSV to path ("": DIR/results.csv) and its
// REPORT.md beside it, neither through a link.
func (r *Results) WriteCSV(path string) error {
	b, err := r.CSV()
	if err != nil {
		return err
	}
	if path == "" {
		path = filepath.Join(r.Dir, "results.csv")
	}
	dir := filepath.Dir(path)
	if err := data.CheckWritableIn(dir, filepath.Base(path), "REPORT.md"); err != nil {
		return err
	}
	md := filepath.Join(dir, "REPORT.md")
	if old, err := data.ReadFileLimit(md, 64<<20); err == nil && !bytes.HasPrefix(old, []byte("# Campaign ")) {
		return fmt.Errorf("%s exists and is not a Faithlab report: nothing written (export into another folder)", md)
	}
	if err := data.WriteFileIn(dir, filepath.Base(path), b); err != nil {
		return err
	}
	return data.WriteFileIn(dir, "REPORT.md", []byte(r.Report()))
}

// Report is the run's REPORT.md (report.Markdown).
func (r *Results) Report() string {
	st := r.Status()
	return report.Markdown(r.title(), st.Done, r.Diagnostics(), report.Left{Failed: len(st.Failed), NotRun: len(st.Missing)})
}
