package reproduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"faithlab/core/campaign"
	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
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
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return out, err
	}
	path := filepath.Join(o.Out, specFile)
	if old, err := data.ReadFileLimit(path, 1<<20); err == nil && !bytes.Equal(old, text) {
		return out, fmt.Errorf("%s holds another campaign than %s at size %s: give this one its own folder", o.Out, r.Name, size)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return out, err
	}
	if err := data.WriteFileAtomic(path, text); err != nil {
		return out, err
	}
	// The shipped model, where the spec names it, beside the spec.
	if bytes.Contains(text, []byte(resources.ModelName)) {
		mp := filepath.Join(o.Out, resources.ModelName)
		if _, err := os.Stat(mp); errors.Is(err, fs.ErrNotExist) {
			if err := data.WriteFileAtomic(mp, resources.Model()); err != nil {
				return out, err
			}
		}
	}
	c, err := campaign.Load(path)
	if err != nil {
		return out, fmt.Errorf("reproduction %s (%s): %w", r.Name, size, err)
	}
	trust, err := campaign.UserTrust()
	if err != nil {
		return out, err
	}
	events := o.Events
	o.Events = nil // Run closes it
	ran, err := c.Run(ctx, campaign.Options{Kernel: o.Kernel, Events: events, Trust: trust})
	out.Elapsed, out.Failed = ran.Elapsed, ran.Failed
	if err != nil {
		return out, err
	}
	res, err := campaign.Open(ran.Dir)
	if err != nil {
		return out, err
	}
	st := res.Status()
	out.Verdicts = Evaluate(r.Claims, st.Done, res.Diagnostics())
	csv, err := res.CSV()
	if err != nil {
		return out, err
	}
	if err := data.WriteFileAtomic(filepath.Join(o.Out, "results.csv"), csv); err != nil {
		return out, err
	}
	if len(o.Figures) > 0 {
		if _, err := res.Figures(filepath.Join(o.Out, "figures"), o.Figures...); err != nil {
			return out, err
		}
	}
	info := RunInfo{Size: size, Data: o.Data, Dir: ran.Dir, ID: res.ID(), Done: len(st.Done), Failed: len(st.Failed), Missing: len(st.Missing),
		Manifest: res.State(), Seconds: ran.Elapsed.Seconds()}
	for _, rec := range st.Done {
		info.TaskSeconds += rec.Seconds
	}
	md := Markdown(r, info, out.Verdicts)
	return out, data.WriteFileAtomic(out.Report, []byte(md))
}
