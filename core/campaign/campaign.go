// Package campaign is what a front end (the CLI, the workbench) does with a
// campaign: create one from a spec, run or resume it with progress events,
// read its status, export its CSV, figures and diagnostics, merge its
// shards, and write the cluster script that runs them. Each is one call;
// front ends only parse flags or read forms.
//
// A campaign's run folder holds (store describes each file):
//
//	OUT/spec.yaml              the spec, as given
//	OUT/manifest.json          versions, machine, seeds, shard, start and end
//	OUT/results.jsonl          one record per finished task, synced before the next
//	OUT/results.csv            the tidy results, rewritten at the end of every run
//	OUT/diagnostics.json       mask-TV fits, ground-truth correlations, post-processing counts,
//	                           the verdicts' confidence (intervals, paired tests, agreement) and the report card
//	OUT/REPORT.md              what to believe: rankings with intervals, the report card, the diagnostics
//	OUT/lock                   held (flock) by the process running the campaign
//	OUT/cache/                 the artefact cache, unless the spec names a shared one
//	OUT/shards/I-of-N/         a shard's own run folder (the same files), from --shard I/N
//
// Only one process runs a run folder at a time: Run takes OUT/lock (an
// advisory lock the kernel drops when the process dies, kill -9 included)
// and a second process is refused with the holder's pid and host.
package campaign

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/spec"
	"faithlab/core/store"
)

// Campaign is a checked spec and the bytes it was read from.
type Campaign struct {
	Spec *spec.Spec
	Raw  []byte // the spec file as written: its hash is the run id
	// Path is the spec file, absolute ("" for a campaign built in
	// memory): its folder is where the spec may write (Check).
	Path string
	made []string // what Save made: the file, and its folder if new
}

// Load reads and checks the spec file at path.
func Load(path string) (*Campaign, error) {
	raw, err := spec.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := spec.Parse(path, raw)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return &Campaign{Spec: s, Raw: raw, Path: abs}, nil
}

// Save writes s as dir/campaign.yaml (through spec.Format, so that the CLI
// and the GUI write the same file) and loads it back. dir must be new,
// empty or hold this very campaign.yaml (store.Claim): a folder that
// holds another campaign's spec, or other files, is refused with nothing
// written.
func Save(dir string, s *spec.Spec) (*Campaign, string, error) {
	text, err := spec.Format(s)
	if err != nil {
		return nil, "", err
	}
	if err := store.Claim(dir, "campaign.yaml", text); err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, "campaign.yaml")
	made, err := Made(dir, "campaign.yaml")
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	if err := data.WriteFileIn(dir, "campaign.yaml", text); err != nil {
		Undo(made, "")
		return nil, "", err
	}
	c, err := Load(path)
	if err != nil {
		Undo(made, "")
		return nil, "", err
	}
	c.made = made
	return c, path, nil
}

// Made lists, of dir and the files names inside it, those that do not
// exist yet, in the order they will be made: what Undo removes again when
// a command that makes them is refused.
func Made(dir string, names ...string) ([]string, error) {
	var made []string
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		made = append(made, dir)
	} else if err != nil {
		return nil, err
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			made = append(made, p)
		} else if err != nil {
			return nil, err
		}
	}
	return made, nil
}

// Undo removes what a command made (Made) once it was refused, last made
// first, so that it leaves the folder as it found it — unless runDir
// ("" for none) became a run folder meanwhile (its spec.yaml written:
// the run has begun, and a resume needs what was made). A folder is
// removed only if it is empty again.
func Undo(made []string, runDir string) {
	if runDir != "" {
		if _, err := os.Lstat(filepath.Join(runDir, "spec.yaml")); err == nil {
			return
		}
	}
	for i := len(made) - 1; i >= 0; i-- {
		os.Remove(made[i])
	}
}

// Forget undoes Save for a campaign refused before its run began (Undo).
func (c *Campaign) Forget() { Undo(c.made, c.Spec.Output) }

// ID names the campaign by its spec, so that a resumed, a sharded and an
// uninterrupted run of one spec carry the same id.
func (c *Campaign) ID() string { return hash(c.Raw)[:12] }

func hash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Dir is the run folder of the campaign or of one of its shards.
func (c *Campaign) Dir(sh job.Shard) string {
	if sh.Of <= 1 {
		return c.Spec.Output
	}
	return filepath.Join(c.Spec.Output, "shards", fmt.Sprintf("%d-of-%d", sh.I, sh.Of))
}

// Tasks lists the shard's tasks, in plan order.
func (c *Campaign) Tasks(sh job.Shard) []job.Task {
	var out []job.Task
	for _, t := range job.Plan(c.Spec) {
		if sh.Has(t) {
			out = append(out, t)
		}
	}
	return out
}

// CacheDir is the artefact cache the campaign uses, absolute.
func (c *Campaign) CacheDir() (string, error) {
	cache := c.Spec.Cache
	if cache == "" {
		cache = filepath.Join(c.Spec.Output, "cache")
	}
	return filepath.Abs(cache)
}

// Outcome is what a run did.
type Outcome struct {
	Dir     string // the run folder
	Failed  int    // tasks that failed
	Elapsed time.Duration
	// Diagnostics is report.Diagnose of the finished tasks — the folder's
	// Results.Status().Done, which results.csv and REPORT.md are written
	// from — whenever Run returns no error.
	Diagnostics report.Diagnostics
	Summary     string // each protocol's headline score per method, as a text table
	// Stages is the run's wall time by stage (base model, maps,
	// retraining, masks, evaluation, …), each without the stages nested
	// in it; Elapsed less their sum is the runner's own time.
	Stages []protocol.StageTime
}

// Results opens the run folder the run wrote (Open) with the run's own
// diagnosis (Diagnostics) in place, so that what is read from it — the
// CSV, figures, report — is not diagnosed a second time (minutes for a
// TRACE run). For an Outcome whose Run returned no error.
func (o Outcome) Results() (*Results, error) {
	r, err := Open(o.Dir)
	if err != nil {
		return nil, err
	}
	r.diagOnce.Do(func() { r.diag = o.Diagnostics })
	return r, nil
}

// Options say how Run runs a campaign.
type Options struct {
	Shard  job.Shard        // the part to run (zero: all)
	Kernel gemm.Kernel      // the engine's GEMM kernel
	Events chan<- job.Event // the runner's events, closed when Run returns; nil: none
	Tasks  *job.TaskControl // lets the caller stop single tasks; nil: none
	// Engine, when set, runs the campaign on this engine setting instead of
	// the spec's (see model.Engine): another host of the same kind, e.g.
	// torch@ssh://gpu1 for a spec's torch. Results are filed under the
	// engine's kind, so a setting of another kind is refused. It is the
	// user's own choice, so it needs no Trust.
	Engine string
	// Trust is what the user allows the campaign's file to ask for
	// (Check): a campaign asking for more is refused before any work.
	Trust Trust
	// AcceptUnchecked makes the run folder's records read without a
	// checksum the user's own (store.Log.Accept): they are written again
	// with checksums and without their marks. Only the user's explicit
	// word sets it (run --accept-unchecked).
	AcceptUnchecked bool
	// Estimate is the time in seconds the estimate shown before the
	// launch said (Size.Seconds; 0: none was made), kept in the manifest
	// beside the launch's wall time (store.Launch).
	Estimate float64
}

// Run runs (or resumes) a shard of the campaign. It holds the run folder's
// lock, sets the spec's memory cap, keeps the manifest, and at the end —
// also after a cancel — writes results.csv and diagnostics.json from every
// record so far.
func (c *Campaign) Run(ctx context.Context, o Options) (Outcome, error) {
	launched := time.Now()
	if o.Events != nil {
		defer close(o.Events)
	}
	sh, kernel := o.Shard, o.Kernel
	s := c.Spec
	dir := c.Dir(sh)
	out := Outcome{Dir: dir}
	if err := c.Check(o.Trust, o.Engine); err != nil {
		return out, err
	}
	if err := c.Applies(); err != nil {
		return out, err
	}
	if dir != s.Output {
		// The campaign's own folder holds the spec too, for status and
		// merge; the shard's folder is made inside it, through no link.
		if _, err := store.Open(s.Output, c.Raw); err != nil {
			return out, err
		}
		rel, err := filepath.Rel(s.Output, dir)
		if err == nil {
			err = data.MkdirIn(s.Output, rel)
		}
		if err != nil {
			return out, err
		}
	}
	run, err := store.Open(dir, c.Raw)
	if err != nil {
		return out, err
	}
	unlock, err := run.Lock()
	if err != nil {
		return out, err
	}
	defer unlock()
	notes, err := c.prepare(run, o.AcceptUnchecked)
	if err != nil {
		return out, err
	}
	for _, n := range notes {
		if o.Events != nil {
			o.Events <- job.Event{Time: time.Now(), Kind: n.kind, Err: n.text}
		}
	}
	if done, err := c.finishedAlready(ctx, run, sh, o, &out); done || err != nil {
		return out, err
	}
	plan, err := c.Memory()
	if err != nil {
		return out, err
	}
	limit := max(plan.Live, 256<<20)
	if s.MemoryGB > 0 {
		cap := int64(s.MemoryGB * (1 << 30))
		if plan.Live > cap {
			return out, fmt.Errorf("the campaign needs about %s at once and memory_gb caps it at %s: raise the cap, run fewer tasks at once (workers), or evaluate fewer samples", gib(plan.Live), gib(cap))
		}
		limit = cap
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	cache, err := c.CacheDir()
	if err != nil {
		return out, err
	}
	man, err := run.Manifest()
	if err != nil {
		return out, err
	}
	host, _ := os.Hostname()
	if man.Started.IsZero() {
		man.Started = time.Now().UTC()
	}
	eng, err := c.openEngine(ctx, o.Engine, kernel)
	if err != nil {
		return out, err
	}
	defer eng.Close()
	info, err := eng.Info(ctx)
	if err != nil {
		return out, err
	}
	if info.PID > 0 {
		if plan.Worker, err = c.workerPeak(ctx, eng, info.PID); err != nil {
			return out, err
		}
	}
	if o.Events != nil {
		o.Events <- job.Event{Time: time.Now(), Kind: job.Note, Err: fmt.Sprintf("planned %s; the collector holds it near %s", plan, gib(limit))}
	}
	man.ID, man.Spec, man.Faithlab, man.Go, man.Kernel, man.Host, man.CPUs, man.Seeds, man.Shard, man.Cache, man.Ended =
		c.ID(), hash(c.Raw), model.Version, runtime.Version(), kernel.Name(), host, runtime.NumCPU(), s.Seeds, sh.String(), cache, time.Time{}
	man.Engine, man.Torch, man.Device = info.Engine, info.Torch, info.Device
	man.Model, man.SpecFile = c.modelDigest(), c.Path
	// Tasks a launch left under way without writing its end (its process
	// killed) were interrupted.
	for _, k := range man.Running {
		if man.Stopped == nil {
			man.Stopped = map[string]string{}
		}
		man.Stopped[k] = store.Interrupted
	}
	man.Running = nil
	if err := run.SetManifest(man); err != nil {
		return out, err
	}
	events := make(chan job.Event)
	tracked := make(chan int)
	go func() { tracked <- trackTasks(run, &man, events, o.Events) }()
	r := &job.Runner{Spec: s, Run: run, Cache: &store.Cache{Dir: cache}, Kernel: kernel, Engine: eng, Shard: sh, Events: events, Tasks: o.Tasks,
		Stages: &protocol.Stages{}}
	t0 := time.Now()
	out.Failed, err = r.Execute(ctx)
	out.Elapsed = time.Since(t0)
	close(events)
	ran := <-tracked
	out.Stages = r.Stages.Times()
	log, rerr := run.Read()
	if rerr != nil {
		return out, rerr
	}
	ok, failed, missing := c.sort(log.Records, sh)
	if werr := c.writeResults(dir, ok, report.Left{Failed: len(failed), NotRun: len(missing)}, &out); werr != nil && err == nil {
		err = werr
	}
	man.Ended, man.Tasks, man.Failed = time.Now().UTC(), len(c.Tasks(sh)), out.Failed
	if ran > 0 {
		man.Launches = append(man.Launches, store.Launch{Started: launched.UTC(), Ended: man.Ended, Tasks: ran,
			Estimate: o.Estimate, Wall: man.Ended.Sub(launched).Seconds()})
	}
	if merr := run.SetManifest(man); merr != nil && err == nil {
		err = merr
	}
	return out, err
}

// finishedAlready handles a launch of a shard whose every task is done:
// it runs nothing and changes no file of the folder — not the manifest's
// end, nor the results files, written only where one is missing — and
// tells the events' reader each task was done before (job.Skipped).
func (c *Campaign) finishedAlready(ctx context.Context, run *store.Run, sh job.Shard, o Options, out *Outcome) (bool, error) {
	log, err := run.Read()
	if err != nil {
		return false, err
	}
	ok, failed, missing := c.sort(log.Records, sh)
	if len(failed)+len(missing) > 0 {
		return false, nil
	}
	cache, err := c.CacheDir()
	if err != nil {
		return true, err
	}
	r := &job.Runner{Spec: c.Spec, Run: run, Cache: &store.Cache{Dir: cache}, Kernel: o.Kernel, Shard: sh, Events: o.Events}
	if _, err := r.Execute(ctx); err != nil {
		return true, err
	}
	for _, name := range []string{"results.csv", "diagnostics.json", "REPORT.md"} {
		if _, err := os.Lstat(filepath.Join(out.Dir, name)); err != nil {
			return true, c.writeResults(out.Dir, ok, report.Left{}, out)
		}
	}
	out.Diagnostics = report.Diagnose(ok)
	out.Summary = report.Summary(ok, out.Diagnostics)
	return true, nil
}

// trackTasks forwards the runner's events to to (nil: none) and keeps the
// manifest's Running and Stopped as tasks start and end, writing it at
// each change (the manifest is the goroutine's until events closes); it
// returns the tasks that finished or failed.
func trackTasks(run *store.Run, man *store.Manifest, events <-chan job.Event, to chan<- job.Event) (ran int) {
	for e := range events {
		changed := true
		switch e.Kind {
		case job.Started:
			man.Running = append(man.Running, e.Key)
		case job.Finished, job.Failed:
			ran++
			man.Running = slices.DeleteFunc(man.Running, func(k string) bool { return k == e.Key })
			delete(man.Stopped, e.Key)
		case job.Cancelled, job.Interrupted:
			man.Running = slices.DeleteFunc(man.Running, func(k string) bool { return k == e.Key })
			if man.Stopped == nil {
				man.Stopped = map[string]string{}
			}
			man.Stopped[e.Key] = store.Interrupted
			if e.Kind == job.Cancelled {
				man.Stopped[e.Key] = store.StoppedByUser
			}
		default:
			changed = false
		}
		if changed {
			run.SetManifest(*man) // the record of the task is what counts; this says why one is missing
		}
		if to != nil {
			to <- e
		}
	}
	return ran
}

// note is something Run tells its user before the tasks start.
type note struct {
	kind job.Kind
	text string
}

// prepare readies the locked run folder and says what the user should
// know: damaged records set aside (their tasks run again), records read
// unchecked (kept marked so, unless accept: then made the user's own),
// model files without checksums, a TorchScript model, which runs code
// from its file, and how images reach a model from a file where its
// description leaves that to defaults (model.InputNotice).
func (c *Campaign) prepare(run *store.Run, accept bool) ([]note, error) {
	log, err := run.Read()
	if err != nil {
		return nil, err
	}
	var notes []note
	for _, n := range log.DamageNotes(fmt.Sprintf("set aside in %s.damaged, its task runs again", log.Path)) {
		notes = append(notes, note{job.Repaired, n})
	}
	switch n := log.Unchecked; {
	case n > 0 && accept:
		log.Accept()
		notes = append(notes, note{job.Warning, fmt.Sprintf("%s: %s read without a checksum accepted as yours (--accept-unchecked): written again with checksums", log.Path, report.Count(n, "record"))})
	case n > 0:
		notes = append(notes, note{job.Warning, log.UncheckedNote()})
	}
	if err := run.Repair(log); err != nil {
		return nil, err
	}
	for _, n := range c.fileNotices() {
		notes = append(notes, note{job.Warning, n})
	}
	if n := model.InputNotice(c.Spec.Model.File); n != "" {
		notes = append(notes, note{job.Note, n})
	}
	return notes, nil
}

// fileNotices are what the user should know of the spec's model and
// prior files (model.FileNotice), a line each.
func (c *Campaign) fileNotices() []string {
	files := []string{c.Spec.Model.File}
	for _, p := range c.Spec.Protocols {
		if f, ok := p.Params["prior"].(string); ok && f != "auto" && f != "mixture" && f != "empirical" {
			files = append(files, f)
		}
	}
	var notes []string
	for _, f := range files {
		if n := model.FileNotice(f); f != "" && n != "" && !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	return notes
}

// modelDigest is the SHA-256 of the spec's model file ("" for a recipe).
func (c *Campaign) modelDigest() string {
	f := c.Spec.Model.File
	if f == "" {
		return ""
	}
	if model.IsTorchScript(f) {
		h, _ := model.ScriptDigest(f)
		return h
	}
	if model.IsONNX(f) {
		h, _ := model.ONNXDigest(f)
		return h
	}
	b, err := model.ReadFile(f)
	if err != nil {
		return ""
	}
	return hash(b)
}

// openEngine opens the spec's engine, or setting when given, which must
// be of the spec's kind.
func (c *Campaign) openEngine(ctx context.Context, setting string, kern gemm.Kernel) (*model.Engine, error) {
	want, err := model.EngineKind(c.Spec.Engine)
	if err != nil {
		return nil, err
	}
	if setting == "" {
		setting = c.Spec.Engine
	} else if got, err := model.EngineKind(setting); err != nil {
		return nil, err
	} else if got != want {
		return nil, fmt.Errorf("engine %s: the campaign's spec runs on the %s engine, and results are filed by engine: write engine: %s in a spec of its own", setting, want, setting)
	}
	return model.OpenEngine(ctx, setting, kern)
}

// writeResults writes DIR/results.csv, DIR/diagnostics.json and
// DIR/REPORT.md (which says what is left) from the finished records and
// fills the outcome's diagnostics and summary.
func (c *Campaign) writeResults(dir string, ok []store.Record, left report.Left, out *Outcome) error {
	if err := data.CheckWritableIn(dir, "results.csv", "diagnostics.json", "REPORT.md"); err != nil {
		return err
	}
	out.Diagnostics = report.Diagnose(ok)
	out.Summary = report.Summary(ok, out.Diagnostics)
	var buf bytes.Buffer
	if err := report.WriteCSV(&buf, c.ID(), ok, out.Diagnostics.Confidence); err != nil {
		return err
	}
	if err := data.WriteFileIn(dir, "results.csv", buf.Bytes()); err != nil {
		return err
	}
	b, err := json.MarshalIndent(out.Diagnostics, "", "  ")
	if err != nil {
		return err
	}
	if err := data.WriteFileIn(dir, "diagnostics.json", append(b, '\n')); err != nil {
		return err
	}
	return data.WriteFileIn(dir, "REPORT.md", []byte(report.Markdown(c.title(), ok, out.Diagnostics, left)))
}

// title names the campaign's report.
func (c *Campaign) title() string { return fmt.Sprintf("Campaign %s (run %s)", c.Spec.Name, c.ID()) }

// sort returns each planned task's latest successful record, in plan
// order, the failed tasks, and the missing ones of shard sh (the zero
// Shard: of the whole plan).
func (c *Campaign) sort(recs []store.Record, sh job.Shard) (ok []store.Record, failed []store.Record, missing []job.Task) {
	latest := store.Latest(recs)
	for _, t := range job.Plan(c.Spec) {
		rec, found := latest[t.Key]
		switch {
		case !found:
			if sh.Has(t) {
				missing = append(missing, t)
			}
		case rec.Error != "":
			failed = append(failed, rec)
		default:
			ok = append(ok, rec)
		}
	}
	return ok, failed, missing
}
