package campaign

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"faithlab/core/attr"
	"faithlab/core/attr/methods"
	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/model"
	"faithlab/core/param"
	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/spec"
	"faithlab/core/stats"
	"faithlab/core/train"
)

// Size is what a launch of a campaign does, counted before it runs, and
// roughly how long that takes on this machine and how much memory.
type Size struct {
	Tasks       int           // to run
	Skipped     int           // done by an earlier run: a launch resumes and skips them
	BaseModels  int           // models trained to be explained (none with a model file)
	Retrainings int           // models the protocols train
	MapSets     int           // maps computed: a method and post-processing on a split
	Images      float64       // training images (one per sample and epoch)
	MapPasses   float64       // input-gradient passes of the maps (a gradient, one IG step)
	PriorPasses float64       // samples through a diffusion prior's network, one per sampler step (GOAR's projections, FUD's in-painting)
	Work        protocol.Work // the protocols' own and that of the answer's checks (job.Checked)
	Compared    float64       // resampled inputs the report's comparisons of methods draw (report.ComparisonUnits)
	Seconds     float64       // all of it at the measured speeds, at most: early stopping ends sooner
	// Memory is the campaign's memory plan (Campaign.Memory).
	Memory MemoryPlan
	// HalfWidths bound the 95 % intervals of each protocol's headline
	// score to expect from the test inputs it evaluates, before anything
	// runs: so that a user can choose how many before spending an hour
	// (NaN: a score with no fixed range, which nothing bounds before).
	HalfWidths []HalfWidth
	// Untimed names the work the estimate has no speed for, which Seconds
	// leaves out; UntimedWhy says why, where the speeds say (Speeds.Untimed).
	Untimed    []string
	UntimedWhy string
	// Measured is how the speeds Seconds rests on were measured: when,
	// where, and how busy the machine was meanwhile (zero: speeds given).
	Measured Measured
}

// HalfWidth is about the widest a 95 % interval of a protocol's headline
// score gets for one seed's run on Inputs test inputs, as the report
// computes its intervals (stats.HalfWidthBound): the studentized
// interval's at the largest spread the score's range allows, above
// Agresti–Coull's for an accuracy of 0/1 inputs. Real intervals are
// narrower wherever the inputs' values are not split between the range's
// ends — unless they are skewed and few, when the report flags them —;
// several seeds narrow them further unless the retraining noise between
// seeds is large.
type HalfWidth struct {
	Dataset, Protocol string
	Metric            string
	Inputs            int
	Bound             float64
}

// Estimate counts the work a launch of the campaign does and estimates its
// time from this machine's speeds (MeasureSpeeds; zero ones leave their
// work untimed) and from the speed of each diffusion prior the protocols
// run, measured here on kernel (MeasurePriorSpeed). A launch resumes: the
// tasks its run folder holds done are skipped (Size.Skipped), and so is
// what they made — the base model, maps, models every method shares —
// which the cache keeps. The datasets are opened to count their samples
// and the priors to find where GOAR's projections start. Base models are
// counted at their full epochs (early stopping usually ends them sooner).
func (c *Campaign) Estimate(ctx context.Context, sp Speeds, kernel gemm.Kernel) (Size, error) {
	return c.estimate(ctx, sp, kernel, true, func(ctx context.Context, _ string, p diffusion.Prior) (float64, error) {
		return MeasurePriorSpeed(ctx, p)
	})
}

// estimate is Estimate with the speed of a prior (named by the dataset and
// the path the protocol asked for) from priorSpeed, and the memory plan
// only where plan is set.
func (c *Campaign) estimate(ctx context.Context, sp Speeds, kernel gemm.Kernel, plan bool, priorSpeed func(ctx context.Context, key string, p diffusion.Prior) (float64, error)) (Size, error) {
	s := c.Spec
	var z Size
	var baseImages float64 // of z.Images, the base models'
	done := c.finished()
	tasks := c.Tasks(job.Shard{})
	base, retrain := train.Config{Epochs: s.Model.Epochs}, train.Config{Epochs: s.Retrain.Epochs}
	// What one protocol setting costs a task, and once a seed for all methods.
	type cost struct {
		each, shared    int // retrainings: of a task, and once for every method (on no maps)
		work            protocol.Work
		checks          protocol.Work // the answer's checks of a task (job.Checked)
		checkInputs     int           // the inputs each check explains afresh
		perMethod, once float64       // prior passes
		speed           float64       // the prior's samples per second (0: untimed)
	}
	for di, d := range s.Datasets {
		trainSet, testSet, err := c.samples(d)
		if err != nil {
			return z, err
		}
		if p, err := appliesTo(s, d, trainSet); err != nil || len(p) > 0 {
			return z, errors.Join(err, misfits(p)) // as Run would refuse it
		}
		trainN, testN := trainSet.Len(), testSet.Len()
		var priorKey string
		env := &protocol.Env{Train: trainSet, Test: testSet,
			Prior: func(_ context.Context, path string) (diffusion.Prior, string, error) {
				priorKey = d.Ref + "|" + path
				return job.OpenPrior(d.Ref, path, kernel)
			}}
		costs := make([]cost, len(s.Protocols))
		for q, p := range s.Protocols {
			pr, err := p.New()
			if err != nil {
				return z, err
			}
			h, bounded := halfWidth(pr, testN)
			if bounded {
				h.Dataset = d.Ref
				z.HalfWidths = append(z.HalfWidths, h)
			}
			if _, ranked := pr.Info().Headline(); ranked {
				// The report's ranking of the setting: every pair of its
				// methods compared on its inputs, a seed each.
				z.Compared += report.ComparisonUnits(len(s.Methods)*len(s.Post), inputsOf(pr, testN), len(s.Seeds))
			}
			k := &costs[q]
			k.shared = protocol.SharedRetrainingsOf(pr)
			k.each = protocol.RetrainingsOf(pr) - k.shared
			k.work = protocol.WorkOf(pr, trainN, testN, trainSet.Shape)
			if job.Checked(pr) {
				// Each check: the inputs' classes under another model,
				// their maps afresh, the protocol on them.
				k.checkInputs = min(testN, job.CheckInputs)
				once := protocol.WorkOf(pr, trainN, k.checkInputs, trainSet.Shape)
				once.Forward += float64(k.checkInputs)
				k.checks = protocol.Work{Forward: float64(k.checkInputs)}.Add(once, float64(len(job.CheckKinds)))
			}
			r, ok := pr.(protocol.PriorRunner)
			if !ok {
				continue
			}
			priorKey = ""
			prior, perMethod, once, err := r.PriorPasses(ctx, env)
			if err != nil {
				return z, fmt.Errorf("%s: %w", d.Ref, err)
			}
			k.perMethod, k.once = perMethod, once
			if prior != nil && perMethod*float64(len(s.Methods)*len(s.Post))+once > 0 && sp.Train > 0 {
				if k.speed, err = priorSpeed(ctx, priorKey, prior); err != nil {
					return z, err
				}
			}
		}
		retrains := slices.ContainsFunc(costs, func(k cost) bool { return k.each > 0 }) // maps of the training set too
		passes := make([]float64, len(s.Methods))
		for m, sm := range s.Methods {
			meth, err := methods.New(sm.Name, sm.Params, attr.CheckSetup)
			if err != nil {
				return z, err
			}
			passes[m] = attr.PassesOf(meth)
		}
		// What the finished tasks made, the cache keeps: a piece is made
		// by the launch when a task to run needs it and no finished one
		// made it. Keys: a seed; a seed's protocol; a seed's method (its
		// test and its training maps); a seed's method and post-processing.
		type piece struct {
			seed uint64
			kind string
			a, b int
		}
		made, needed := map[piece]bool{}, map[piece]bool{}
		pieces := func(t job.Task) []piece {
			ps := []piece{{t.Seed, "base", 0, 0}, {t.Seed, "shared", t.Protocol, 0}, {t.Seed, "test maps", t.Method, 0}, {t.Seed, "test set", t.Method, t.Post}}
			if retrains && costs[t.Protocol].each > 0 {
				ps = append(ps, piece{t.Seed, "train maps", t.Method, 0}, piece{t.Seed, "train set", t.Method, t.Post})
			}
			return ps
		}
		for _, t := range tasks {
			if t.Dataset != di || !done[t.Key] {
				continue
			}
			z.Skipped++
			for _, p := range pieces(t) {
				made[p] = true
			}
		}
		var seconds float64 // of the prior passes
		for _, t := range tasks {
			if t.Dataset != di || done[t.Key] {
				continue
			}
			k := costs[t.Protocol]
			z.Tasks++
			z.Retrainings += k.each
			z.Images += float64(k.each * retrain.Images(trainN))
			z.Work = z.Work.Add(k.work, 1).Add(k.checks, 1)
			z.MapPasses += passes[t.Method] * float64(k.checkInputs*len(job.CheckKinds))
			z.PriorPasses += k.perMethod
			if k.speed > 0 {
				seconds += k.perMethod / k.speed
			}
			for _, p := range pieces(t) {
				if made[p] || needed[p] {
					continue
				}
				needed[p] = true
				switch p.kind {
				case "base":
					if s.Model.File == "" {
						z.BaseModels++
						z.Images += float64(base.Images(trainN))
						baseImages += float64(base.Images(trainN))
					}
				case "shared":
					z.Retrainings += k.shared
					z.Images += float64(k.shared * retrain.Images(trainN))
					z.PriorPasses += k.once
					if k.speed > 0 {
						seconds += k.once / k.speed
					}
				case "test maps":
					z.MapPasses += passes[p.a] * float64(testN)
				case "train maps":
					z.MapPasses += passes[p.a] * float64(trainN)
				case "test set", "train set":
					z.MapSets++
				}
			}
		}
		// The predictions the maps explain, once a seed for every method,
		// where maps of that split are made.
		forward := map[piece]bool{}
		for p := range needed {
			switch f := (piece{seed: p.seed, kind: p.kind}); p.kind {
			case "test maps":
				if !forward[f] {
					forward[f] = true
					z.Work.Forward += float64(testN)
				}
			case "train maps":
				if !forward[f] {
					forward[f] = true
					z.Work.Forward += float64(trainN)
				}
			}
		}
		z.Seconds += seconds
	}
	if z.Tasks > 0 { // a launch with nothing to run opens no dataset and writes no report
		z.Seconds += sp.Open * float64(len(s.Datasets)*(2+len(s.Seeds)))
	} else {
		z.Compared = 0
	}
	w := z.Work
	measured := sp != (Speeds{}) // the zero Speeds count without timing
	for _, t := range []struct {
		n, v float64
		what string
	}{{baseImages, cmp.Or(sp.Base, sp.Train), "training"}, {z.Images - baseImages, sp.Train, "training"},
		{z.MapPasses, sp.Gradient, "maps"}, {w.Forward, sp.Forward, "forward passes"},
		{w.Filled - w.Imputed, sp.Fill, "fills"}, {w.Imputed, sp.Impute, "imputations"}, {w.Quality, sp.Quality, "image quality"},
		{z.Compared, sp.Compare, "the report's tests"}} {
		switch {
		case t.v > 0:
			z.Seconds += t.n / t.v
		case t.n > 0 && measured && !slices.Contains(z.Untimed, t.what):
			z.Untimed = append(z.Untimed, t.what)
		}
	}
	z.UntimedWhy = sp.Untimed
	if !plan {
		return z, nil
	}
	var err error
	z.Memory, err = c.Memory()
	return z, err
}

// finished is the keys of the tasks the campaign's run folder holds done;
// none when the folder does not exist or holds another spec's results
// (which a launch refuses).
func (c *Campaign) finished() map[string]bool {
	done := map[string]bool{}
	r, err := Open(c.Spec.Output)
	if err != nil || !bytes.Equal(r.Raw, c.Raw) && !r.Ran(c.Spec) {
		return done
	}
	for _, rec := range r.Status().Done {
		done[rec.Task] = true
	}
	return done
}

// String words the size for a person about to launch the campaign.
func (z Size) String() string {
	prior := ""
	if z.PriorPasses > 0 {
		prior = fmt.Sprintf("; %.0f passes of a sample through the diffusion prior (one per sampler step)", z.PriorPasses)
	}
	tasks := report.Count(z.Tasks, "task")
	switch {
	case z.Tasks == 0 && z.Skipped > 0:
		tasks = fmt.Sprintf("no task to run (%s done already)", report.Count(z.Skipped, "task"))
	case z.Skipped > 0:
		tasks = fmt.Sprintf("%s to run (%d done already, which a resume skips)", tasks, z.Skipped)
	}
	out := fmt.Sprintf("%s; %s and %s to train; %s%s.", tasks, report.Count(z.BaseModels, "base model"), report.Count(z.Retrainings, "retraining"), report.Count(z.MapSets, "map set"), prior)
	if z.Seconds > 0 {
		out += fmt.Sprintf(" About %s here (reading the data, training, maps, the protocols' passes and fills at this machine's measured speeds; early stopping ends training sooner).",
			(time.Duration(z.Seconds) * time.Second).Round(time.Second))
		if z.Measured.Loaded() {
			out += fmt.Sprintf(" Other work took %.0f%% of this machine while its speeds were measured: about this long while that work goes on, less once it ends (measured again in a minute).", 100*z.Measured.Busy)
		}
	}
	if z.Tasks > 0 && (len(z.Untimed) > 0 || z.UntimedWhy != "") {
		why := z.UntimedWhy
		if why == "" {
			why = "no speed for it is measured here (a model from a file is not trained here)"
		}
		if z.Seconds > 0 {
			out += fmt.Sprintf(" Not counted in that time: %s — %s.", strings.Join(z.Untimed, ", "), why)
		} else {
			out += fmt.Sprintf(" No time here: %s.", why)
		}
	}
	if z.Memory.Peak > 0 {
		out += " " + strings.ToUpper(z.Memory.String()[:1]) + z.Memory.String()[1:] + "."
	}
	if len(z.HalfWidths) > 0 {
		var parts []string
		for _, h := range z.HalfWidths {
			if math.IsNaN(h.Bound) {
				parts = append(parts, fmt.Sprintf("%s not bounded before the run (%d inputs; its score has no fixed range)", h.Protocol, h.Inputs))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s ±%.3f (%d inputs)", h.Protocol, h.Bound, h.Inputs))
		}
		out += " 95% intervals of the headline scores per seed, at most about: " + strings.Join(parts, ", ") +
			" (at the widest spread the score's range allows; real ones are narrower, unless the scores are skewed and the inputs few)."
	}
	return out
}

// halfWidth bounds the interval of the protocol's headline score on the
// test inputs it evaluates: its samples parameter's first n, or all testN;
// a NaN bound where the score has no fixed range (IROF's ratio), false
// where the protocol ranks nothing.
func halfWidth(p protocol.Protocol, testN int) (HalfWidth, bool) {
	info := p.Info()
	h, ok := info.Headline()
	if !ok {
		return HalfWidth{}, false
	}
	n := inputsOf(p, testN)
	if len(h.Value.Range) != 2 {
		return HalfWidth{Protocol: info.Name, Metric: h.Name, Inputs: n, Bound: math.NaN()}, true
	}
	return HalfWidth{Protocol: info.Name, Metric: h.Name, Inputs: n, Bound: stats.HalfWidthBound(n, h.Value.Range[0], h.Value.Range[1])}, true
}

// inputsOf is how many of testN test inputs the protocol evaluates: its
// samples parameter caps them.
func inputsOf(p protocol.Protocol, testN int) int {
	if k, ok := param.Values(p)["samples"].(int); ok && k > 0 && k < testN {
		return k
	}
	return testN
}

// samples opens a dataset's training and test sets as the campaign's
// tasks see them (dataOptions), with the spec's caps applied.
func (c *Campaign) samples(d spec.Dataset) (train, test *data.Dataset, err error) {
	ref, opt, err := c.dataOptions(d)
	if err != nil {
		return nil, nil, err
	}
	return data.Open(ref, opt)
}

// dataOptions are the dataset and options the campaign's tasks open d with:
// with a model file, its own dataset for an empty ref and an image folder
// decoded as the model takes its inputs (model.Header.DataOptions: a size
// or channel count the spec asks for that the model does not take is an
// error naming both).
func (c *Campaign) dataOptions(d spec.Dataset) (string, data.Options, error) {
	opt := d.OpenOptions()
	f := c.Spec.Model.File
	if f == "" {
		return d.Ref, opt, nil
	}
	h, err := model.HeaderOf(f)
	if err != nil {
		return "", opt, err
	}
	ref := d.Ref
	if ref == "" && h.Source != nil {
		ref = h.Source.Ref
	}
	if opt, err = h.DataOptions(opt); err != nil {
		return "", opt, fmt.Errorf("dataset %s for model %s: %w", cmp.Or(ref, "(the model's own)"), f, err)
	}
	opt.Unlabelled = true // a folder of images alone: protocols that need labels are refused (Applies)
	return ref, opt, nil
}
