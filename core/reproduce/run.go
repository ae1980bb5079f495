package reproduce

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"faithlab/core/campaign"
	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/report"
	"faithlab/core/store"
	"faithlab/resources"
)

// Options say how Run runs a reproduction.
type Options struct {
	Size   string           // smoke, quick or paper ("": quick)
	Out    string           // the report folder (created; a folder of the same reproduction and size resumes)
	Kernel gemm.Kernel      // the engine's GEMM kernel
	Events chan<- job.Event // the runner's events, closed when Run returns; nil: none
	// Figures, when set, draws the run's figures into OUT/figures in
	// these formats (png, svg, pdf).
	Figures []string
	// Data are the paper's datasets the user supplies, by name (one of
	// the reproduction's Alternatives) → path, read in place of those
	// they stand for; Prior is a diffusion prior trained on them, where
	// the reproduction's GOAR or FUD needs one (Reproduction.SpecFor).
	Data  map[string]string
	Prior string
}

// Ran is what Run did.
type Ran struct {
	Dir      string // the report folder
	Report   string // OUT/REPORT.md
	Verdicts []Verdict
	Elapsed  time.Duration // the campaign's wall time in this call
	Failed   int           // tasks that failed
}

// specFile is the size's spec in the report folder; its run folder is
// OUT/run (the spec's output).
const specFile = "campaign.yaml"

// Run runs (or resumes) the reproduction r at o.Size in o.Out and writes
// OUT/REPORT.md, OUT/results.csv and, when asked, OUT/figures.
func Run(ctx context.Context, r *Reproduction, o Options) (Ran, error) {
	if o.Events != nil {
		defer func() {
			if o.Events != nil {
				close(o.Events)
			}
		}()
	}
	size := o.Size
	if size == "" {
		size = "quick"
	}
	text, err := r.SpecFor(size, o.Data, o.Prior)
	if err != nil {
		return Ran{}, err
	}
	out := Ran{Dir: o.Out, Report: filepath.Join(o.Out, "REPORT.md")}
	if o.Out == "" {
		return out, errors.New("a reproduction needs a folder to write (--out)")
	}
	if err := checkFolder(o.Out, text); err != nil {
		return out, fmt.Errorf("reproduction %s (%s): %w", r.Name, size, err)
	}
	made, err := campaign.Made(o.Out, specFile, resources.ModelName)
	if err != nil {
		return out, err
	}
	// A refusal before the run begins (a --data that does not load, say)
	// leaves the folder as it was, so that the corrected command starts
	// afresh.
	runDir := filepath.Join(o.Out, "run")
	refused := func(err error) (Ran, error) {
		campaign.Undo(made, runDir)
		return out, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return out, err
	}
	path := filepath.Join(o.Out, specFile)
	if err := data.WriteFileIn(o.Out, specFile, text); err != nil {
		return refused(err)
	}
	// The shipped model, where the spec names it, beside the spec.
	if bytes.Contains(text, []byte(resources.ModelName)) {
		if err := data.WriteFileIn(o.Out, resources.ModelName, resources.Model()); err != nil {
			return refused(err)
		}
	}
	c, err := campaign.Load(path)
	if err != nil {
		return refused(fmt.Errorf("reproduction %s (%s): %w", r.Name, size, err))
	}
	trust, err := campaign.UserTrust()
	if err != nil {
		return refused(err)
	}
	var given []string // the datasets the user named (--data) are the user's to read
	for _, p := range o.Data {
		given = append(given, p)
	}
	trust = trust.With(nil, given)
	events := o.Events
	o.Events = nil // Run closes it
	ran, err := c.Run(ctx, campaign.Options{Kernel: o.Kernel, Events: events, Trust: trust})
	out.Elapsed, out.Failed = ran.Elapsed, ran.Failed
	if err != nil {
		if ctx.Err() == nil {
			return refused(err)
		}
		return out, err
	}
	// The folder with the diagnosis the run made of these very tasks: the
	// verdicts, the CSV and the figures all read it, none makes it again.
	res, err := ran.Results()
	if err != nil {
		return out, err
	}
	st := res.Status()
	out.Verdicts = Evaluate(r.Claims, st.Done, res.Diagnostics())
	csv, err := res.CSV()
	if err != nil {
		return out, err
	}
	if err := data.WriteFileIn(o.Out, "results.csv", csv); err != nil {
		return out, err
	}
	if len(o.Figures) > 0 {
		if _, err := res.Figures(o.Out, "figures", o.Figures...); err != nil {
			return out, err
		}
	}
	info := RunInfo{Size: size, Data: o.Data, Dir: ran.Dir, ID: res.ID(), Done: len(st.Done), Failed: len(st.Failed), Missing: len(st.Missing),
		Manifest: res.State(), Seconds: ran.Elapsed.Seconds()}
	for _, rec := range st.Done {
		info.TaskSeconds += rec.Seconds
	}
	md := Markdown(r, info, out.Verdicts)
	return out, data.WriteFileIn(o.Out, "REPORT.md", []byte(md))
}

// checkFolder makes, writing nothing, the checks that may refuse the
// report folder dir for the size's spec: the run-folder rules every
// command follows (store.Claim: new, empty, or this very reproduction's
// folder; no symbolic link where it writes), then, in a folder of this
// reproduction, that what it would write over is its own: the shipped model (checked against the bytes
// Faithlab embeds, so that a model changed under its name is never
// reported as the shipped one), and the report and CSV it wrote.
func checkFolder(dir string, spec []byte) error {
	if err := store.Claim(dir, specFile, spec); err != nil {
		return err
	}
	for _, name := range []string{specFile, resources.ModelName, "run", "figures", "results.csv", "REPORT.md"} {
		if st, err := os.Lstat(filepath.Join(dir, name)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: nothing under %s is written through a link (remove it if the folder is yours)", filepath.Join(dir, name), dir)
		}
	}
	if bytes.Contains(spec, []byte(resources.ModelName)) {
		mp := filepath.Join(dir, resources.ModelName)
		if st, err := os.Lstat(mp); err == nil {
			b, err := data.ReadFileLimit(mp, int64(len(resources.Model())))
			if st.Mode()&fs.ModeSymlink != 0 || err != nil || sha256.Sum256(b) != sha256.Sum256(resources.Model()) {
				return fmt.Errorf("%s is not the model Faithlab ships (SHA-256 %s): a reproduction runs the shipped model and its report says so; remove the file, or reproduce into another folder", mp, digest(mp))
			}
		}
	}
	for _, f := range []struct{ name, head string }{{"REPORT.md", "# Reproduction "}, {"results.csv", strings.Join(report.CSVHeader[:10], ",") + ","}} { // an earlier version's CSV, with fewer columns after value, too
		p := filepath.Join(dir, f.name)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if b, err := data.ReadFileLimit(p, 64<<20); err != nil || !bytes.HasPrefix(b, []byte(f.head)) {
			return fmt.Errorf("%s is not one a reproduction wrote: it is left alone; reproduce into another folder", p)
		}
	}
	return nil
}

// digest words the SHA-256 of the file at path, or why there is none.
func digest(path string) string {
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return "none: it is a symbolic link"
	}
	b, err := data.ReadFileLimit(path, 1<<30)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return fmt.Sprintf("%x, the shipped one's %x", sha256.Sum256(b), sha256.Sum256(resources.Model()))
}
