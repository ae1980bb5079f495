package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"faithlab/core/campaign"
	"faithlab/core/job"
	"faithlab/core/report"
)

// runCampaign is `faithlab-cli run SPEC [--shard I/N]`.
func runCampaign(ctx context.Context, args []string) error {
	r, err := parseRun(args)
	if err != nil {
		return err
	}
	stopProfiles, err := profiles(r.cpuProfile, r.memProfile)
	if err != nil {
		return err
	}
	defer stopProfiles()
	if r.estimate {
		z, err := speedBook().Estimate(ctx, r.c, kernel())
		if err != nil {
			return err
		}
		fmt.Println(z)
		return nil
	}
	return runLoaded(ctx, r.c, r.shard, r.quiet, r.engine, r.trust, r.accept)
}

// runRequest is what `run`'s arguments ask for: the loaded campaign, put
// where the user chose, and what the user allows it.
type runRequest struct {
	c                      *campaign.Campaign
	trust                  campaign.Trust
	engine                 string
	shard                  job.Shard
	quiet, estimate        bool
	accept                 bool // --accept-unchecked
	cpuProfile, memProfile string
}

// parseRun reads `run`'s arguments and loads the campaign; it runs and
// writes nothing.
func parseRun(args []string) (runRequest, error) {
	fs := newFlags("run", "SPEC", "run (or resume) the campaign SPEC describes")
	shardFlag := fs.String("shard", "", "run shard I of N (I/N, 0-based); \"/N\" takes I from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX")
	quiet := fs.Bool("quiet", false, "print only task ends, not progress")
	engineSetting := fs.String("engine", "", "run on this engine instead of the spec's, of the same kind (e.g. torch@ssh://gpu1 for a spec's torch): "+engineUsage)
	allowEngine := fs.Bool("allow-engine", false, "allow the spec's engine to run the program or reach the host it names (a spec from elsewhere may not, unless you allow it here or in your configuration file)")
	allowScript := fs.Bool("allow-torchscript", false, "allow the spec's TorchScript model to load: loading one runs code from its file (a spec from elsewhere may not, unless you allow it here or in your configuration file)")
	var allowFolders multiFlag
	fs.Var(&allowFolders, "allow-folder", "a folder outside the spec's own that the spec may read datasets and maps files from and write in (repeatable)")
	accept := fs.Bool("accept-unchecked", false, "make the run folder's records read without a checksum your own: written again with checksums and no longer marked unchecked (only if you trust them)")
	outDir := fs.String("out", "", "run folder to write, instead of the spec's output (which must lie in the spec's folder unless you choose it here)")
	cacheDir := fs.String("cache", "", "artefact cache to use, instead of the spec's cache (which must lie in the spec's folder unless you choose it here)")
	estimate := fs.Bool("estimate", false, "print what the campaign does and about how long it takes on this machine (its speeds measured for a few seconds), and run nothing")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof, with each stage labelled: go tool pprof -tags) to this file")
	memProfile := fs.String("memprofile", "", "write a heap profile (pprof) at the end of the run to this file")
	specPath, err := parseWithArg(fs, args)
	if err != nil {
		return runRequest{}, err
	}
	c, err := campaign.Load(specPath)
	if err != nil {
		return runRequest{}, err
	}
	trust, err := campaign.UserTrust()
	if err != nil {
		return runRequest{}, err
	}
	if *allowEngine {
		trust = trust.With([]string{c.Spec.Engine}, nil)
	}
	if *allowScript && c.Spec.Model.File != "" {
		abs, err := filepath.Abs(c.Spec.Model.File)
		if err != nil {
			return runRequest{}, err
		}
		trust = trust.WithScripts(abs)
	}
	for _, d := range allowFolders {
		abs, err := filepath.Abs(d)
		if err != nil {
			return runRequest{}, err
		}
		trust = trust.With(nil, []string{abs})
	}
	if trust, err = c.Relocate(trust, *outDir, *cacheDir); err != nil {
		return runRequest{}, err
	}
	var shard job.Shard
	if !*estimate {
		if shard, err = parseShard(*shardFlag); err != nil {
			return runRequest{}, err
		}
	}
	return runRequest{c: c, trust: trust, engine: *engineSetting, shard: shard, quiet: *quiet, estimate: *estimate, accept: *accept,
		cpuProfile: *cpuProfile, memProfile: *memProfile}, nil
}

// runLoaded runs a loaded campaign with progress on stderr, on engine
// ("": the spec's), with what the user allows it; accept makes the
// records read unchecked the user's own.
func runLoaded(ctx context.Context, c *campaign.Campaign, shard job.Shard, quiet bool, engine string, trust campaign.Trust, accept bool) error {
	estimate := launchEstimate(ctx, c, shard, engine, trust, quiet)
	events := make(chan job.Event)
	printed := make(chan struct{})
	go func() {
		newProgress(os.Stderr, quiet).show(events)
		close(printed)
	}()
	out, err := c.Run(ctx, campaign.Options{Shard: shard, Kernel: kernel(), Events: events, Engine: engine, Trust: trust, AcceptUnchecked: accept, Estimate: estimate})
	<-printed
	stopped := err != nil && ctx.Err() != nil
	if out.Summary != "" {
		if stopped {
			fmt.Fprintln(os.Stderr, "the results so far, of the tasks finished before the stop:")
		}
		fmt.Fprintln(os.Stderr, out.Summary)
	}
	for _, line := range out.Diagnostics.Summary() {
		fmt.Fprintln(os.Stderr, line)
	}
	for _, a := range out.Diagnostics.Confidence.Trust { // REPORT.md's first section, in a line
		fmt.Fprintf(os.Stderr, "which method to trust on %s: %s (REPORT.md says why)\n", a.Dataset, a.Short)
	}
	if stopped {
		fmt.Fprintf(os.Stderr, "stopped after %.0f s; finished tasks are kept in %s: run the same command again to resume\n", out.Elapsed.Seconds(), out.Dir)
		return errStopped
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "campaign %s: %.0f s (%s); results in %s\n", c.Spec.Name, out.Elapsed.Seconds(), stageLine(out), filepath.Join(out.Dir, "results.csv"))
	if out.Failed > 0 {
		return fmt.Errorf("%s failed: see faithlab-cli status %s", report.Count(out.Failed, "task"), out.Dir)
	}
	return nil
}

// launchEstimate is the seconds `run --estimate` gives the launch, which
// the run keeps beside its wall time (status prints both), from the
// speeds the CLI and the workbench keep (campaign.UserSpeedBook: measured
// here, a few seconds, where none stand). None for a shard (the estimate
// is the whole campaign's) or another engine than the spec's, none for a
// campaign the user has not allowed what it asks for or that does not
// apply to its data (the launch refuses it), none for a launch with
// nothing to run (no speeds measured for it), nor where it cannot be
// made — the run goes on, saying why unless quiet.
func launchEstimate(ctx context.Context, c *campaign.Campaign, shard job.Shard, engine string, trust campaign.Trust, quiet bool) float64 {
	if shard != (job.Shard{}) || engine != "" || c.Check(trust, engine) != nil || c.Applies() != nil {
		return 0
	}
	z, err := speedBook().Time(ctx, c, kernel())
	switch {
	case err != nil:
		if !quiet && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "no estimate for this launch: %v\n", err)
		}
		return 0
	case z.Tasks > 0 && z.Seconds > 0 && !quiet:
		fmt.Fprintf(os.Stderr, "estimated: %s to run, about %s here\n", report.Count(z.Tasks, "task"), (time.Duration(z.Seconds) * time.Second).Round(time.Second))
	}
	return z.Seconds
}

// measureSpeedsCommand is the hidden command a child process of the CLI
// measures a campaign's speeds with (campaign.ServeSpeeds: the spec on
// standard input, the speeds as JSON on standard output).
const measureSpeedsCommand = "measure-speeds"

// speedBook is the speeds the CLI estimates from: the user's
// (campaign.UserSpeedBook, shared with the workbench), measured where
// missing in a child process, as the workbench measures them — so that
// the memory the measuring takes (a copy of the model trained for a
// second) never adds to a run's own.
func speedBook() *campaign.SpeedBook {
	b := campaign.UserSpeedBook()
	if self, err := os.Executable(); err == nil {
		b.Measure = func(ctx context.Context, c *campaign.Campaign) (campaign.Measured, error) {
			return campaign.MeasureIn(ctx, exec.Command(self, measureSpeedsCommand), c)
		}
	}
	return b
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

// runStatus is `faithlab-cli status RUN`.
func runStatus(_ context.Context, args []string) error {
	fs := newFlags("status", "RUN", "what a campaign's run folder RUN holds: tasks done, failed and to run")
	dir, err := parseWithArg(fs, args)
	if err != nil {
		return err
	}
	r, err := openRun(dir)
	if err != nil {
		return err
	}
	st := r.Status()
	fmt.Printf("campaign %s (run %s) in %s\n%s\n", r.Spec.Name, r.ID(), dir, r.State())
	fmt.Println(st.Words())
	for i, l := range r.Manifest.Launches {
		line := fmt.Sprintf("launch %d: %s run in %s", i+1, report.Count(l.Tasks, "task"), time.Duration(l.Wall*float64(time.Second)).Round(time.Second))
		if l.Estimate > 0 {
			line += fmt.Sprintf(", estimated %s (estimate/wall %.2f)", time.Duration(l.Estimate*float64(time.Second)).Round(time.Second), l.Ratio())
		}
		fmt.Println(line)
	}
	var secs float64
	for _, rec := range st.Done {
		secs += rec.Seconds
	}
	if len(st.Done) > 0 {
		fmt.Printf("task time so far %.0f s (mean %.1f s)\n", secs, secs/float64(len(st.Done)))
	}
	for _, rec := range st.Failed {
		fmt.Printf("FAILED %s: %s\n", rec.Label, rec.Error)
	}
	for i, t := range st.Missing {
		if i == 10 {
			fmt.Printf("… and %d more without a result\n", len(st.Missing)-10)
			break
		}
		fmt.Printf("%s: %s\n", st.State(t.Key), t.Label)
	}
	return nil
}

// runExportResults is `faithlab-cli export RUN --csv FILE --figures DIR`.
func runExportResults(_ context.Context, args []string) error {
	fs := newFlags("export", "RUN", "write a run's tidy CSV and, with --figures, its figures; --units its per-input values, --maps its maps")
	out := fs.String("csv", "", "tidy CSV to write (\"-\": standard output; default RUN/results.csv)")
	units := fs.String("units", "", "CSV of every input's value of every score that keeps them (columns: "+strings.Join(campaign.UnitsHeader, ", ")+")")
	mapsDir := fs.String("maps", "", "folder for the maps the run evaluated, as .npy in dataset order, listed in maps.csv (what the file method reads)")
	figDir := fs.String("figures", "", "folder for the figures (PNG at 300 dpi, SVG and PDF)")
	formats := fs.String("formats", "png,svg,pdf", "figure formats: png, svg, pdf")
	dir, err := parseWithArg(fs, args)
	if err != nil {
		return err
	}
	if err := report.CheckFormats(strings.Split(*formats, ",")...); err != nil {
		return fmt.Errorf("--formats: %w", err)
	}
	r, err := openRun(dir)
	if err != nil {
		return err
	}
	if st := r.Status(); len(st.Failed)+len(st.Missing) > 0 {
		fmt.Fprintf(os.Stderr, "note: %s failed and %d not run are not in the CSV\n", report.Count(len(st.Failed), "task"), len(st.Missing))
	}
	if m := r.Diagnostics().Confidence.Missing; len(m) > 0 {
		fmt.Fprintf(os.Stderr, "note: %s keep no per-input values (a run from before Faithlab kept them): their scores have no intervals until the campaign runs again\n", report.Count(len(m), "protocol setting"))
	}
	if *figDir != "" {
		ex, err := r.Figures(*figDir, "", strings.Split(*formats, ",")...)
		if err != nil {
			return err
		}
		if ex.MissingSamples > 0 {
			fmt.Fprintf(os.Stderr, "note: %s in no cache this run names: left out of the figures\n", report.Count(ex.MissingSamples, "perturbed sample"))
		}
		fmt.Fprintf(os.Stderr, "%d figures, %d files in %s\n", ex.Figures, ex.Files, *figDir)
	}
	if *units != "" {
		if err := r.WriteUnits(*units); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "per-input values → %s\n", *units)
	}
	if *mapsDir != "" {
		n, missing, err := r.WriteMaps(*mapsDir)
		if err != nil {
			return err
		}
		if missing > 0 {
			fmt.Fprintf(os.Stderr, "note: %s in no cache this run names: left out\n", report.Count(missing, "map set"))
		}
		fmt.Fprintf(os.Stderr, "%s → %s (listed in maps.csv)\n", report.Count(n, "map set"), *mapsDir)
	}
	if *out == "-" {
		b, err := r.CSV()
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(b)
		return err
	}
	return r.WriteCSV(*out)
}

// openRun opens a run folder for reading and prints what is wrong with
// its records (damaged ones are left out).
func openRun(dir string) (*campaign.Results, error) {
	r, err := campaign.Open(dir)
	if err != nil {
		return nil, err
	}
	for _, n := range r.Notes {
		fmt.Fprintln(os.Stderr, "warning:", n)
	}
	return r, nil
}

// runMerge is `faithlab-cli merge --out DIR RUN…`.
func runMerge(_ context.Context, args []string) error {
	fs := newFlags("merge", "RUN…", "join the run folders of a campaign's shards (or any runs of one spec) into one")
	out := fs.String("out", "", "run folder to write (required; new)")
	var caches multiFlag
	fs.Var(&caches, "cache", "a cache to copy perturbed samples from besides the runs' own (a spec's shared cache; repeatable): a cache a run's manifest names elsewhere is read only when given here")
	var dirs []string
	for rest := args; len(rest) > 0; {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if rest = fs.Args(); len(rest) > 0 {
			dirs, rest = append(dirs, rest[0]), rest[1:]
		}
	}
	if *out == "" || len(dirs) == 0 {
		return usageError(fs, "merge needs --out DIR and at least one RUN")
	}
	m, err := campaign.Merge(*out, caches, dirs...)
	for _, n := range m.Notes {
		fmt.Fprintln(os.Stderr, "warning:", n)
	}
	if err != nil {
		return err
	}
	if m.LostSamples > 0 {
		fmt.Fprintf(os.Stderr, "note: %s in none of the runs' caches\n", report.Count(m.LostSamples, "perturbed sample"))
	}
	fmt.Fprintf(os.Stderr, "merged %d runs into %s: %d tasks done, %d failed, %d not run\n", len(dirs), *out, m.Done, m.Failed, m.Missing)
	if m.Missing > 0 {
		where := "not in any of the runs given"
		if m.Shards != "" {
			where = m.Shards
		}
		fmt.Fprintf(os.Stderr, "warning: %d of %s are not run: %s; the merged REPORT.md ranks the methods on the %d done and says so\n",
			m.Missing, report.Count(m.Done+m.Failed+m.Missing, "task"), where, m.Done)
	}
	return nil
}

// runSlurm is `faithlab-cli slurm SPEC --shards N`.
func runSlurm(_ context.Context, args []string) error {
	fs := newFlags("slurm", "SPEC", "write a bash script that submits the campaign SPEC to Slurm: an array job whose task i runs shard i, "+
		"and the merge as a job that starts when every shard has succeeded; `bash SCRIPT I` submits shard I again")
	shards := fs.Int("shards", 0, "array size: shards of the campaign (required)")
	cpus := fs.Int("cpus", 8, "CPUs per shard")
	mem := fs.Int("mem", 16, "memory per shard, GiB (Slurm's G)")
	limit := fs.String("time", "24:00:00", "time limit per shard")
	out := fs.String("out", "", "script to write (default: standard output)")
	return writeCluster(fs, args, shards, out, func(c *campaign.Campaign, o campaign.ClusterOptions) ([]byte, error) {
		exe, err := os.Executable()
		if err != nil {
			exe = "faithlab-cli"
		}
		o.CPUs, o.MemGB, o.Time, o.CLI = *cpus, *mem, *limit, exe
		o.Script = *out
		if o.Script == "" {
			o.Script = "faithlab-" + c.Spec.Name + ".sbatch"
		}
		return c.Slurm(o)
	})
}

// runK8s is `faithlab-cli k8s SPEC --shards N --image IMAGE --claim PVC`.
func runK8s(_ context.Context, args []string) error {
	fs := newFlags("k8s", "SPEC", "write a Kubernetes indexed Job (batch/v1) whose pod i runs shard i of the campaign SPEC, "+
		"its index from JOB_COMPLETION_INDEX; the pods mount a PersistentVolumeClaim holding the spec's folder where it is here")
	shards := fs.Int("shards", 0, "completions: shards of the campaign (required)")
	cpus := fs.Int("cpus", 8, "CPUs each pod requests")
	mem := fs.Int("mem", 16, "memory each pod requests and is limited to, GiB")
	image := fs.String("image", "", "container image with faithlab-cli (required)")
	cli := fs.String("cli", "faithlab-cli", "faithlab-cli in the image: a name on its PATH or a path")
	claim := fs.String("claim", "", "PersistentVolumeClaim holding the spec's folder (required)")
	out := fs.String("out", "", "manifest to write (default: standard output)")
	return writeCluster(fs, args, shards, out, func(c *campaign.Campaign, o campaign.ClusterOptions) ([]byte, error) {
		if *image == "" || *claim == "" {
			return nil, usageError(fs, "--image and --claim are required")
		}
		o.CPUs, o.MemGB, o.CLI, o.Image, o.Claim, o.Script = *cpus, *mem, *cli, *image, *claim, *out
		if o.Script == "" {
			o.Script = "faithlab-" + c.Spec.Name + ".yaml"
		}
		return c.K8s(o)
	})
}

// writeCluster parses a cluster command's SPEC and writes what write makes
// of it to out ("": standard output).
func writeCluster(fs *flag.FlagSet, args []string, shards *int, out *string, write func(*campaign.Campaign, campaign.ClusterOptions) ([]byte, error)) error {
	specPath, err := parseWithArg(fs, args)
	if err != nil {
		return err
	}
	if *shards < 1 {
		return usageError(fs, "--shards N is required")
	}
	abs, err := filepath.Abs(specPath)
	if err != nil {
		return err
	}
	c, err := campaign.Load(abs) // so that the spec's paths are absolute
	if err != nil {
		return err
	}
	b, err := write(c, campaign.ClusterOptions{Shards: *shards, Spec: abs})
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(*out, b, 0o755)
}

// helpWanted is set when the command line asks for help: usage then goes
// to standard output (and exits 0); flag mistakes go to standard error.
var helpWanted bool

// newFlags makes a command's flag set whose -h/--help prints the usage line with its positional arguments, what it does and
// every flag.
func newFlags(name, args, what string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if helpWanted {
		fs.SetOutput(os.Stdout)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: faithlab-cli %s [flags] %s\n\n%s\n\nflags:\n", name, args, what)
		fs.PrintDefaults()
	}
	return fs
}

// usageError prints the command's usage on stderr and returns msg.
func usageError(fs *flag.FlagSet, msg string) error {
	fs.SetOutput(os.Stderr)
	fs.Usage()
	return errors.New(msg)
}

// parseWithArg parses flags around one positional argument.
func parseWithArg(fs *flag.FlagSet, args []string) (string, error) {
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
		return "", usageError(fs, fmt.Sprintf("want one argument, got %d", len(pos)))
	}
	return pos[0], nil
}

// profiles starts a CPU profile into cpu and returns what stops it and
// writes a heap profile into mem ("" for neither).
func profiles(cpu, mem string) (func(), error) {
	var cf *os.File
	if cpu != "" {
		var err error
		if cf, err = os.Create(cpu); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(cf); err != nil {
			cf.Close()
			return nil, err
		}
	}
	return func() {
		if cf != nil {
			pprof.StopCPUProfile()
			cf.Close()
		}
		if mem != "" {
			if f, err := os.Create(mem); err == nil {
				runtime.GC()
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}
	}, nil
}

// stageLine words a run's time by stage: "maps 40 s, retraining 310 s, …".
func stageLine(out campaign.Outcome) string {
	var parts []string
	rest := out.Elapsed.Seconds()
	for _, st := range out.Stages {
		parts = append(parts, fmt.Sprintf("%s %.0f s", st.Stage, st.Seconds))
		rest -= st.Seconds
	}
	if len(parts) == 0 {
		return "nothing run"
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(", other %.0f s", max(0, rest))
}
