package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"text/template"
	"time"

	"faithlab/core/data"
	"faithlab/core/job"
	"faithlab/core/model"
	"faithlab/core/report"
	"faithlab/core/spec"
	"faithlab/core/store"
)

// runCampaign is `faithlab-cli run SPEC [--shard I/N]`.
func runCampaign(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	shardFlag := fs.String("shard", "", "run shard I of N (I/N, 0-based); \"/N\" takes I from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX")
	quiet := fs.Bool("quiet", false, "print only task ends, not progress")
	specPath, err := parseWithArg(fs, args, "SPEC")
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	s, err := spec.Parse(specPath, raw)
	if err != nil {
		return err
	}
	shard, err := parseShard(*shardFlag)
	if err != nil {
		return err
	}
	dir := runDir(s, shard)
	if dir != s.Output {
		// The campaign's own folder holds the spec too, for status and merge.
		if _, err := store.Open(s.Output, raw); err != nil {
			return err
		}
	}
	run, err := store.Open(dir, raw)
	if err != nil {
		return err
	}
	if s.MemoryGB > 0 {
		debug.SetMemoryLimit(int64(s.MemoryGB * (1 << 30)))
	}
	cache := s.Cache
	if cache == "" {
		cache = filepath.Join(s.Output, "cache")
	}
	man, err := run.Manifest()
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	k := kernel()
	if man.Started.IsZero() {
		man.Started = time.Now().UTC()
	}
	if cache, err = filepath.Abs(cache); err != nil {
		return err
	}
	man.ID, man.Spec, man.Faithlab, man.Go, man.Kernel, man.Host, man.CPUs, man.Seeds, man.Shard, man.Cache, man.Ended =
		runID(raw), hash(raw), model.Version, runtime.Version(), k.Name(), host, runtime.NumCPU(), s.Seeds, shard.String(), cache, time.Time{}
	if err := run.SetManifest(man); err != nil {
		return err
	}
	events := make(chan job.Event)
	printed := make(chan struct{})
	go func() {
		printEvents(events, *quiet)
		close(printed)
	}()
	r := &job.Runner{Spec: s, Run: run, Cache: &store.Cache{Dir: cache}, Kernel: k, Shard: shard, Events: events}
	t0 := time.Now()
	failed, err := r.Execute(ctx)
	close(events)
	<-printed
	recs, rerr := run.Records()
	if rerr != nil {
		return rerr
	}
	if werr := writeRunCSV(run, s, raw, recs); werr != nil && err == nil {
		err = werr
	}
	if werr := writeDiagnostics(run, s, recs); werr != nil && err == nil {
		err = werr
	}
	man.Ended, man.Tasks, man.Failed = time.Now().UTC(), countShard(s, shard), failed
	if merr := run.SetManifest(man); merr != nil && err == nil {
		err = merr
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "stopped after %.0f s; finished tasks are in %s: run again to resume\n", time.Since(t0).Seconds(), run.ResultsPath())
		}
		return err
	}
	fmt.Fprintf(os.Stderr, "campaign %s: %.0f s; results in %s\n", s.Name, time.Since(t0).Seconds(), filepath.Join(dir, "results.csv"))
	if failed > 0 {
		return fmt.Errorf("%d task(s) failed: see faithlab-cli status %s", failed, dir)
	}
	return nil
}

// parseWithArg parses flags around one positional argument.
func parseWithArg(fs *flag.FlagSet, args []string, name string) (string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		args = fs.Args()
		if len(args) > 0 {
			pos = append(pos, args[0])
			args = args[1:]
		}
	}
	if len(pos) != 1 {
		return "", fmt.Errorf("want one %s argument, got %d", name, len(pos))
	}
	return pos[0], nil
}

// parseShard reads "I/N"; "/N" takes I from the cluster's array index.
func parseShard(v string) (job.Shard, error) {
	if v == "" {
		return job.Shard{}, nil
	}
	is, ns, ok := strings.Cut(v, "/")
	n, err := strconv.Atoi(ns)
	if !ok || err != nil || n < 1 {
		return job.Shard{}, fmt.Errorf("--shard %q: want I/N with N ≥ 1", v)
	}
	if is == "" {
		for _, env := range []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"} {
			if is = os.Getenv(env); is != "" {
				break
			}
		}
		if is == "" {
			return job.Shard{}, fmt.Errorf("--shard /%d: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set", n)
		}
	}
	i, err := strconv.Atoi(is)
	if err != nil || i < 0 || i >= n {
		return job.Shard{}, fmt.Errorf("shard index %q: want 0 … %d", is, n-1)
	}
	return job.Shard{I: i, Of: n}, nil
}

// runDir is the run folder of a campaign or of one of its shards.
func runDir(s *spec.Spec, sh job.Shard) string {
	if sh.Of <= 1 {
		return s.Output
	}
	return filepath.Join(s.Output, "shards", fmt.Sprintf("%d-of-%d", sh.I, sh.Of))
}

func countShard(s *spec.Spec, sh job.Shard) int {
	n := 0
	for _, t := range job.Plan(s) {
		if sh.Has(t) {
			n++
		}
	}
	return n
}

func hash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// runID names a campaign by its spec, so that a resumed, a sharded and an
// uninterrupted run of one spec carry the same id.
func runID(spec []byte) string { return hash(spec)[:12] }

// ordered returns each planned task's latest successful record, in plan
// order, and the failed and missing tasks.
func ordered(s *spec.Spec, recs []store.Record) (ok []store.Record, failed []store.Record, missing []job.Task) {
	latest := store.Latest(recs)
	for _, t := range job.Plan(s) {
		rec, found := latest[t.Key]
		switch {
		case !found:
			missing = append(missing, t)
		case rec.Error != "":
			failed = append(failed, rec)
		default:
			ok = append(ok, rec)
		}
	}
	return ok, failed, missing
}

// writeRunCSV writes RUN/results.csv from the run's records.
func writeRunCSV(run *store.Run, s *spec.Spec, raw []byte, recs []store.Record) error {
	ok, _, _ := ordered(s, recs)
	var buf bytes.Buffer
	if err := report.WriteCSV(&buf, runID(raw), ok); err != nil {
		return err
	}
	return data.WriteFileAtomic(filepath.Join(run.Dir, "results.csv"), buf.Bytes())
}

// writeDiagnostics writes RUN/diagnostics.json (mask-TV fits, ground-truth
// correlations) and prints its findings.
func writeDiagnostics(run *store.Run, s *spec.Spec, recs []store.Record) error {
	ok, _, _ := ordered(s, recs)
	d := report.Diagnose(ok)
	for _, line := range d.Summary() {
		fmt.Fprintln(os.Stderr, line)
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	return data.WriteFileAtomic(filepath.Join(run.Dir, "diagnostics.json"), append(b, '\n'))
}

// printEvents shows the runner's progress on stderr: one line per task
// end, and a rewritten status line while tasks run.
func printEvents(events <-chan job.Event, quiet bool) {
	var last time.Time
	for e := range events {
		switch e.Kind {
		case job.Finished, job.Failed:
			msg := ""
			if e.Kind == job.Failed {
				msg = ": FAILED: " + e.Err
			}
			eta := ""
			if e.ETA > 0 {
				eta = fmt.Sprintf("  (about %s left)", e.ETA.Round(time.Second))
			}
			fmt.Fprintf(os.Stderr, "\r\033[K[%d/%d] %s%s%s\n", e.Done, e.Total, e.Task, msg, eta)
		case job.Progress:
			if quiet || time.Since(last) < 500*time.Millisecond {
				continue
			}
			last = time.Now()
			step := ""
			if e.Steps > 0 {
				step = fmt.Sprintf(" %d/%d", e.Step, e.Steps)
			}
			line := fmt.Sprintf("[%d/%d] %s: %s%s", e.Done, e.Total, e.Task, e.Stage, step)
			if len(line) > 150 {
				line = line[:150]
			}
			fmt.Fprintf(os.Stderr, "\r\033[K%s", line)
		case job.Skipped:
			if !quiet {
				fmt.Fprintf(os.Stderr, "[%d/%d] %s: done before\n", e.Done, e.Total, e.Task)
			}
		}
	}
}

// openRuns opens a run folder and, when it has them, its shards' folders.
func openRuns(dir string) (*spec.Spec, []byte, []store.Record, error) {
	run, raw, err := store.OpenExisting(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := spec.Parse(filepath.Join(dir, "spec.yaml"), raw)
	if err != nil {
		return nil, nil, nil, err
	}
	recs, err := run.Records()
	if err != nil {
		return nil, nil, nil, err
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "shards", "*"))
	for _, sd := range shards {
		sr, sraw, err := store.OpenExisting(sd)
		if err != nil {
			continue
		}
		if !bytes.Equal(sraw, raw) {
			return nil, nil, nil, fmt.Errorf("shard %s ran another spec than %s", sd, dir)
		}
		more, err := sr.Records()
		if err != nil {
			return nil, nil, nil, err
		}
		recs = append(recs, more...)
	}
	return s, raw, recs, nil
}

// runCaches lists the caches a run folder's artefacts may be in: the one
// its manifest names, its shards' ones, and its own cache subfolder (the
// default).
func runCaches(dir string) []*store.Cache {
	var caches []*store.Cache
	seen := map[string]bool{}
	add := func(d string) {
		if d != "" && !seen[d] {
			seen[d] = true
			caches = append(caches, &store.Cache{Dir: d})
		}
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "shards", "*"))
	for _, d := range append([]string{dir}, shards...) {
		if run, _, err := store.OpenExisting(d); err == nil {
			if m, err := run.Manifest(); err == nil {
				add(m.Cache)
			}
		}
	}
	if d, err := filepath.Abs(filepath.Join(dir, "cache")); err == nil {
		add(d)
	}
	return caches
}

// runStatus is `faithlab-cli status RUN`.
func runStatus(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	dir, err := parseWithArg(fs, args, "RUN")
	if err != nil {
		return err
	}
	s, raw, recs, err := openRuns(dir)
	if err != nil {
		return err
	}
	ok, failed, missing := ordered(s, recs)
	run := &store.Run{Dir: dir}
	man, _ := run.Manifest()
	fmt.Printf("campaign %s (run %s) in %s\n", s.Name, runID(raw), dir)
	if !man.Started.IsZero() {
		state := "running or stopped"
		if !man.Ended.IsZero() {
			state = "ended " + man.Ended.Format(time.RFC3339)
		}
		fmt.Printf("started %s, %s; faithlab %s, %s, %s, %d CPUs\n", man.Started.Format(time.RFC3339), state, man.Faithlab, man.Go, man.Host, man.CPUs)
	}
	total := len(ok) + len(failed) + len(missing)
	fmt.Printf("%d of %d tasks done, %d failed, %d to run\n", len(ok), total, len(failed), len(missing))
	var secs float64
	for _, r := range ok {
		secs += r.Seconds
	}
	if len(ok) > 0 {
		fmt.Printf("task time so far %.0f s (mean %.1f s)\n", secs, secs/float64(len(ok)))
	}
	for _, r := range failed {
		fmt.Printf("FAILED %s: %s\n", r.Label, r.Error)
	}
	for i, t := range missing {
		if i == 10 {
			fmt.Printf("… and %d more to run\n", len(missing)-10)
			break
		}
		fmt.Printf("to run: %s\n", t.Label)
	}
	return nil
}

// runExportResults is `faithlab-cli export RUN --csv FILE --figures DIR`.
func runExportResults(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	out := fs.String("csv", "", "tidy CSV to write (\"-\": standard output; default RUN/results.csv)")
	figDir := fs.String("figures", "", "folder for the figures (PNG at 300 dpi, SVG and PDF)")
	formats := fs.String("formats", "png,svg,pdf", "figure formats")
	dir, err := parseWithArg(fs, args, "RUN")
	if err != nil {
		return err
	}
	s, raw, recs, err := openRuns(dir)
	if err != nil {
		return err
	}
	ok, failed, missing := ordered(s, recs)
	var buf bytes.Buffer
	if err := report.WriteCSV(&buf, runID(raw), ok); err != nil {
		return err
	}
	if len(failed)+len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "note: %d task(s) failed and %d not run are not in the CSV\n", len(failed), len(missing))
	}
	if *figDir != "" {
		figs, err := report.Figures(ok)
		if err != nil {
			return err
		}
		grids, missing, err := report.SampleFigures(ok, runCaches(dir)...)
		if err != nil {
			return err
		}
		if missing > 0 {
			fmt.Fprintf(os.Stderr, "note: %d perturbed sample(s) are in no cache this run names: left out of the figures\n", missing)
		}
		figs = append(figs, grids...)
		files, err := report.Save(*figDir, figs, strings.Split(*formats, ",")...)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%d figures, %d files in %s\n", len(figs), len(files), *figDir)
	}
	switch *out {
	case "-":
		_, err = os.Stdout.Write(buf.Bytes())
		return err
	case "":
		*out = filepath.Join(dir, "results.csv")
	}
	return data.WriteFileAtomic(*out, buf.Bytes())
}

// runMerge is `faithlab-cli merge --out DIR RUN…`: the shards' (or any
// runs' of one spec) records joined into one run folder.
func runMerge(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("out", "", "run folder to write (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dirs := fs.Args()
	if *out == "" || len(dirs) == 0 {
		return errors.New("usage: merge --out DIR RUN…")
	}
	var raw []byte
	var all []store.Record
	for _, d := range dirs {
		_, r, recs, err := openRuns(d)
		if err != nil {
			return err
		}
		if raw != nil && !bytes.Equal(r, raw) {
			return fmt.Errorf("%s ran another spec than %s: only runs of one spec merge", d, dirs[0])
		}
		raw = r
		all = append(all, recs...)
	}
	s, err := spec.Parse(filepath.Join(dirs[0], "spec.yaml"), raw)
	if err != nil {
		return err
	}
	run, err := store.Open(*out, raw)
	if err != nil {
		return err
	}
	if old, err := run.Records(); err != nil || len(old) > 0 {
		return fmt.Errorf("%s already holds results: merge into a new folder", *out)
	}
	ok, failed, missing := ordered(s, all)
	if err := store.AppendRecords(run.ResultsPath(), append(ok, failed...)...); err != nil {
		return err
	}
	// The perturbed samples come along into the merged run's own cache,
	// so that it stands alone when the shards' caches were node-local.
	var caches []*store.Cache
	for _, d := range dirs {
		caches = append(caches, runCaches(d)...)
	}
	cache, err := filepath.Abs(filepath.Join(*out, "cache"))
	if err != nil {
		return err
	}
	lost := 0
	for _, rec := range ok {
		for _, sm := range rec.Result.Samples {
			b, _, err := report.Fetch(sm.Key, ".npy", caches)
			if err != nil {
				return err
			}
			if b == nil {
				lost++
				continue
			}
			if err := (&store.Cache{Dir: cache}).Put(sm.Key, ".npy", b); err != nil {
				return err
			}
		}
	}
	if lost > 0 {
		fmt.Fprintf(os.Stderr, "note: %d perturbed sample(s) were in none of the runs' caches\n", lost)
	}
	if err := run.SetManifest(store.Manifest{ID: runID(raw), Spec: hash(raw), Faithlab: model.Version, Go: runtime.Version(),
		Seeds: s.Seeds, Cache: cache, Tasks: len(ok) + len(failed) + len(missing), Failed: len(failed), Ended: time.Now().UTC()}); err != nil {
		return err
	}
	if err := writeRunCSV(run, s, raw, append(ok, failed...)); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "merged %d runs into %s: %d tasks done, %d failed, %d not run\n", len(dirs), *out, len(ok), len(failed), len(missing))
	return nil
}

var sbatchScript = template.Must(template.New("sbatch").Parse(`#!/bin/bash
# Faithlab campaign {{.Name}}: {{.Tasks}} tasks in {{.Shards}} shards.
# Submit with:  sbatch {{.Script}}
# When every shard has ended, join them:
#   {{.CLI}} merge --out {{.Output}}/merged {{range .Dirs}}{{.}} {{end}}
#SBATCH --job-name=faithlab-{{.Name}}
#SBATCH --array=0-{{.Last}}
#SBATCH --cpus-per-task={{.CPUs}}
#SBATCH --mem={{.MemGB}}G
#SBATCH --time={{.Time}}
#SBATCH --output={{.Output}}/shards/slurm-%A_%a.out
set -euo pipefail
mkdir -p {{.Output}}/shards
exec {{.CLI}} run {{.Spec}} --shard /{{.Shards}} --quiet
`))

// runSlurm is `faithlab-cli slurm SPEC --shards N`: a ready sbatch array
// script whose task i runs shard i.
func runSlurm(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("slurm", flag.ContinueOnError)
	shards := fs.Int("shards", 0, "array size: shards of the campaign (required)")
	cpus := fs.Int("cpus", 8, "CPUs per shard")
	mem := fs.Int("mem", 16, "memory per shard, GB")
	limit := fs.String("time", "24:00:00", "time limit per shard")
	out := fs.String("out", "", "script to write (default: standard output)")
	specPath, err := parseWithArg(fs, args, "SPEC")
	if err != nil {
		return err
	}
	if *shards < 1 {
		return errors.New("--shards N is required")
	}
	s, err := spec.Load(specPath)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(specPath)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "faithlab-cli"
	}
	var dirs []string
	for i := range *shards {
		dirs = append(dirs, runDir(s, job.Shard{I: i, Of: *shards}))
	}
	script := *out
	if script == "" {
		script = "faithlab-" + s.Name + ".sbatch"
	}
	var buf bytes.Buffer
	err = sbatchScript.Execute(&buf, map[string]any{"Name": s.Name, "Tasks": len(job.Plan(s)), "Shards": *shards, "Last": *shards - 1,
		"CPUs": *cpus, "MemGB": *mem, "Time": *limit, "Output": s.Output, "CLI": exe, "Spec": abs, "Dirs": dirs, "Script": script})
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = os.Stdout.Write(buf.Bytes())
		return err
	}
	return os.WriteFile(*out, buf.Bytes(), 0o755)
}
