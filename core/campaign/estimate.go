package campaign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"faithlab/core/attr"
	"faithlab/core/attr/methods"
	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine"
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

// Size is what a campaign does, counted before it runs, and roughly how
// long that takes on this machine and how much memory.
type Size struct {
	Tasks       int
	BaseModels  int     // models trained to be explained (none with a model file)
	Retrainings int     // models the protocols train
	MapSets     int     // maps computed: a method and post-processing on a split
	Images      float64 // training images (one per sample and epoch)
	MapPasses   float64 // input-gradient passes of the maps (a gradient, one IG step)
	PriorPasses float64 // samples through a diffusion prior's network, one per sampler step (GOAR's projections, FUD's in-painting)
	Work        protocol.Work
	Seconds     float64 // all of it at the measured speeds, at most: early stopping ends sooner
	// Memory is the campaign's memory plan (Campaign.Memory).
	Memory MemoryPlan
	// HalfWidths bound the 95 % intervals of each protocol's headline
	// score to expect from the test inputs it evaluates, before anything
	// runs: so that a user can choose how many before spending an hour.
	HalfWidths []HalfWidth
}

// Speeds are this machine's speeds at what a campaign does, per second:
// training images, input-gradient passes and forward passes of the
// campaign's classifier, images filled from a reference and by ROAD's
// imputation, image pairs compared for quality. A zero speed leaves its
// work untimed.
type Speeds struct {
	Train, Gradient, Forward float64
	Fill, Impute, Quality    float64
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

// Estimate counts the work of the campaign and estimates its time from
// this machine's speeds (MeasureSpeeds; zero ones leave their work
// untimed) and from the speed of each diffusion prior the protocols run,
// measured here on kernel (MeasurePriorSpeed). The datasets are opened to
// count their samples and the priors to find where GOAR's projections
// start. Base models are counted at their full epochs (early stopping
// usually ends them sooner).
func (c *Campaign) Estimate(ctx context.Context, sp Speeds, kernel gemm.Kernel) (Size, error) {
	s := c.Spec
	var z Size
	z.Tasks = len(c.Tasks(job.Shard{}))
	base, retrain := train.Config{Epochs: s.Model.Epochs}, train.Config{Epochs: s.Retrain.Epochs}
	for _, d := range s.Datasets {
		trainSet, testSet, err := c.samples(d)
		if err != nil {
			return z, err
		}
		if p, err := appliesTo(s, d, trainSet); err != nil || len(p) > 0 {
			return z, errors.Join(err, misfits(p)) // as Run would refuse it
		}
		trainN, testN := trainSet.Len(), testSet.Len()
		env := &protocol.Env{Train: trainSet, Test: testSet,
			Prior: func(_ context.Context, path string) (diffusion.Prior, string, error) {
				return job.OpenPrior(d.Ref, path, kernel)
			}}
		var seconds float64 // of the prior passes, per seed
		retrains := false   // some protocol trains models: maps of the training set too
		for _, p := range s.Protocols {
			pr, err := p.New()
			if err != nil {
				return z, err
			}
			if h, ok := halfWidth(pr, testN); ok {
				h.Dataset = d.Ref
				z.HalfWidths = append(z.HalfWidths, h)
			}
			shared := protocol.SharedRetrainingsOf(pr) // trained once for every method, on no maps
			each := protocol.RetrainingsOf(pr) - shared
			k := each*len(s.Methods)*len(s.Post) + shared
			z.Retrainings += k * len(s.Seeds)
			z.Images += float64(k*retrain.Images(trainN)) * float64(len(s.Seeds))
			retrains = retrains || each > 0
			z.Work = z.Work.Add(protocol.WorkOf(pr, trainN, testN, trainSet.Shape), float64(len(s.Methods)*len(s.Post)*len(s.Seeds)))
			r, ok := pr.(protocol.PriorRunner)
			if !ok {
				continue
			}
			prior, perMethod, once, err := r.PriorPasses(ctx, env)
			if err != nil {
				return z, fmt.Errorf("%s: %w", d.Ref, err)
			}
			n := perMethod*float64(len(s.Methods)*len(s.Post)) + once
			z.PriorPasses += n * float64(len(s.Seeds))
			if prior != nil && n > 0 && sp.Train > 0 {
				v, err := MeasurePriorSpeed(ctx, prior)
				if err != nil {
					return z, err
				}
				seconds += n / v
			}
		}
		for range s.Seeds {
			if s.Model.File == "" {
				z.BaseModels++
				z.Images += float64(base.Images(trainN))
			}
			for _, m := range s.Methods {
				meth, err := methods.New(m.Name, m.Params, attr.CheckSetup)
				if err != nil {
					return z, err
				}
				n := testN
				if retrains {
					n += trainN
				}
				z.MapSets += len(s.Post) * map[bool]int{false: 1, true: 2}[retrains]
				z.MapPasses += attr.PassesOf(meth) * float64(n)
			}
			if len(s.Methods) > 0 { // the predictions the maps explain, shared by every method
				z.Work.Forward += float64(testN)
				if retrains {
					z.Work.Forward += float64(trainN)
				}
			}
			z.Seconds += seconds
		}
	}
	w := z.Work
	for _, t := range []struct{ n, v float64 }{{z.Images, sp.Train}, {z.MapPasses, sp.Gradient}, {w.Forward, sp.Forward},
		{w.Filled - w.Imputed, sp.Fill}, {w.Imputed, sp.Impute}, {w.Quality, sp.Quality}} {
		if t.v > 0 {
			z.Seconds += t.n / t.v
		}
	}
	var err error
	z.Memory, err = c.Memory()
	return z, err
}

// Measure sizes the campaign on this machine: it measures its speeds
// (Campaign.Speeds) and estimates with them. A TorchScript or ONNX model's speeds
// are not measured here: Seconds is then 0.
func (c *Campaign) Measure(ctx context.Context, kernel gemm.Kernel) (Size, error) {
	sp, err := c.Speeds(ctx, kernel)
	if err != nil {
		return Size{}, err
	}
	return c.Estimate(ctx, sp, kernel)
}

// Speeds measures this machine's speeds (MeasureSpeeds) with the
// campaign's architecture (a model file's own) on its first dataset; a
// TorchScript or ONNX model's are zero. They depend only on SpeedsKey, so that a
// front end that estimates again after every edit of a campaign measures
// once per key.
func (c *Campaign) Speeds(ctx context.Context, kernel gemm.Kernel) (Speeds, error) {
	s := c.Spec
	arch := s.Model.Arch
	switch {
	case s.Model.File != "" && (model.IsTorchScript(s.Model.File) || model.IsONNX(s.Model.File)):
		return Speeds{}, nil
	case s.Model.File != "":
		m, err := model.Load(s.Model.File, kernel)
		if err != nil {
			return Speeds{}, err
		}
		arch = m.Arch
	}
	if len(s.Datasets) == 0 {
		return Speeds{}, fmt.Errorf("campaign %s: no dataset", s.Name)
	}
	tr, te, err := c.samples(s.Datasets[0])
	if err != nil {
		return Speeds{}, err
	}
	return MeasureSpeeds(ctx, arch, tr, te, kernel)
}

// SpeedsKey is what Campaign.Speeds depends on: the model (its file or
// architecture) and the first dataset with its sample caps.
func (c *Campaign) SpeedsKey() string {
	s := c.Spec
	if len(s.Datasets) == 0 {
		return ""
	}
	d := s.Datasets[0]
	return fmt.Sprintf("%s|%s|%s|%d|%d", s.Model.File, s.Model.Arch, d.Ref, d.TrainSamples, d.TestSamples)
}

// MeasureSpeeds measures this machine's Speeds with a fresh network of
// arch on train's and test's first inputs, about a second each.
func MeasureSpeeds(ctx context.Context, arch string, trainSet, testSet *data.Dataset, kernel gemm.Kernel) (Speeds, error) {
	var sp Speeds
	var err error
	if sp.Train, err = MeasureSpeed(ctx, arch, trainSet, kernel); err != nil {
		return sp, err
	}
	m, err := model.New(arch, trainSet, kernel, 1)
	if err != nil {
		return sp, err
	}
	probe := testSet.Head(min(testSet.Len(), 1024))
	n, dim := probe.Len(), probe.Dim()
	timed := func(f func() error) (float64, error) {
		t0 := time.Now()
		k := 0
		for k == 0 || time.Since(t0) < 500*time.Millisecond {
			if err := f(); err != nil {
				return 0, err
			}
			k++
		}
		return float64(k*n) / time.Since(t0).Seconds(), nil
	}
	if sp.Forward, err = timed(func() error { _, err := engine.Logits(ctx, m.Net, probe.X[:n*dim], n); return err }); err != nil {
		return sp, err
	}
	ones := func(first int, _, d []float32) {
		clear(d)
		for r := range len(d) / m.Net.Classes() {
			d[r*m.Net.Classes()] = 1
		}
	}
	if sp.Gradient, err = timed(func() error {
		_, err := engine.Differentiate(ctx, m.Net, probe.X[:n*dim], n, engine.InputGrad, ones)
		return err
	}); err != nil {
		return sp, err
	}
	sp.Fill, sp.Impute, sp.Quality, err = protocol.MeasureWorkSpeeds(ctx, testSet)
	return sp, err
}

// String words the size for a person about to launch the campaign.
func (z Size) String() string {
	prior := ""
	if z.PriorPasses > 0 {
		prior = fmt.Sprintf("; %.0f passes of a sample through the diffusion prior (one per sampler step)", z.PriorPasses)
	}
	out := fmt.Sprintf("%s; %s and %s to train; %s%s.", report.Count(z.Tasks, "task"), report.Count(z.BaseModels, "base model"), report.Count(z.Retrainings, "retraining"), report.Count(z.MapSets, "map set"), prior)
	if z.Seconds > 0 {
		out += fmt.Sprintf(" About %s here (training, maps, the protocols' passes and fills at this machine's measured speeds; early stopping ends training sooner).",
			(time.Duration(z.Seconds) * time.Second).Round(time.Second))
	}
	if z.Memory.Peak > 0 {
		out += " " + strings.ToUpper(z.Memory.String()[:1]) + z.Memory.String()[1:] + "."
	}
	if len(z.HalfWidths) > 0 {
		var parts []string
		for _, h := range z.HalfWidths {
			parts = append(parts, fmt.Sprintf("%s ±%.3f (%d inputs)", h.Protocol, h.Bound, h.Inputs))
		}
		out += " 95% intervals of the headline scores per seed, at most about: " + strings.Join(parts, ", ") +
			" (at the widest spread the score's range allows; real ones are narrower, unless the scores are skewed and the inputs few)."
	}
	return out
}

// halfWidth bounds the interval of the protocol's headline score on the
// test inputs it evaluates: its samples parameter's first n, or all testN.
func halfWidth(p protocol.Protocol, testN int) (HalfWidth, bool) {
	info := p.Info()
	h, ok := info.Headline()
	if !ok || len(h.Value.Range) != 2 {
		return HalfWidth{}, false
	}
	n := testN
	if k, ok := param.Values(p)["samples"].(int); ok && k > 0 && k < n {
		n = k
	}
	return HalfWidth{Protocol: info.Name, Metric: h.Name, Inputs: n, Bound: stats.HalfWidthBound(n, h.Value.Range[0], h.Value.Range[1])}, true
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
	return ref, opt, nil
}

// MeasurePriorSpeed runs the prior's network on a batch for about a
// second, after one call that sets up its buffers, and returns the samples
// per second (one sample at one sampler step each): what Estimate needs.
func MeasurePriorSpeed(ctx context.Context, p diffusion.Prior) (float64, error) {
	const batch = 32
	size := engine.Size(p.Shape())
	x, eps := make([]float32, batch*size), make([]float32, batch*size)
	if err := p.Eps(ctx, x, batch, p.Schedule().T/2, eps); err != nil {
		return 0, err
	}
	var seen int
	t0 := time.Now()
	for time.Since(t0) < time.Second {
		if err := p.Eps(ctx, x, batch, p.Schedule().T/2, eps); err != nil {
			return 0, err
		}
		seen += batch
	}
	return float64(seen) / time.Since(t0).Seconds(), nil
}

// MeasureSpeed trains a fresh model of arch on ds for about a second and
// returns the training images per second: what Estimate needs.
func MeasureSpeed(ctx context.Context, arch string, ds *data.Dataset, kernel gemm.Kernel) (float64, error) {
	m, err := model.New(arch, ds, kernel, 1)
	if err != nil {
		return 0, err
	}
	n := min(ds.Len(), 1024)
	probe := ds.Head(n)
	var seen int
	t0 := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bs := train.Config{}.Defaults().BatchSize
	_, err = train.Train(ctx, m.Net, probe, train.Config{Epochs: 1000, Patience: -1, ValFraction: -1}, func(p train.Progress) {
		if p.EpochDone {
			return
		}
		seen += min(bs, n-(p.Batch-1)*bs)
		if time.Since(t0) > time.Second {
			cancel()
		}
	})
	if err != nil && ctx.Err() == nil {
		return 0, err
	}
	if seen == 0 {
		return 0, fmt.Errorf("measuring %s: no batch finished", arch)
	}
	return float64(seen) / time.Since(t0).Seconds(), nil
}
