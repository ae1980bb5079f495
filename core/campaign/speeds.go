package campaign

// This machine's speeds at what a campaign does, as the estimate needs
// them: measured here (MeasureHere, or in a child process: speedbook.go)
// on the campaign's own model and data.

import (
	"context"
	"fmt"
	"os"
	"time"

	"faithlab/core/data"
	"faithlab/core/diffusion"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/train"
)

// Measured is a campaign's speeds as measured on this machine — its
// own and those of the diffusion priors its protocols run, by the
// dataset and file they read (Estimate's keys) — with when, in which
// process, and how much of the machine's CPU time other work took
// meanwhile.
type Measured struct {
	Speeds Speeds
	Priors map[string]float64 `json:",omitempty"`
	At     time.Time
	PID    int // the process that measured them
	// Busy is the share of the machine's CPU time other processes took
	// while the speeds were measured (0 … 1; negative: not known here).
	// A measurement beside other work measures the contention: its
	// estimate is too long, and the speeds are measured again soon.
	Busy float64
}

// Speeds measured while other work took more than busyLimit of the
// machine are measured again after busyLast, quiet ones after speedsLast:
// this VM's speed moves by half within a day (README, Speed).
const (
	busyLimit  = 0.3
	busyLast   = time.Minute
	speedsLast = 10 * time.Minute
)

// Loaded says whether other work took so much of the machine while the
// speeds were measured that they measured the contention.
func (m Measured) Loaded() bool { return m.Busy > busyLimit }

// Fresh says whether the speeds still stand at now: measured within
// speedsLast on a quiet machine, busyLast on a loaded one.
func (m Measured) Fresh(now time.Time) bool {
	last := speedsLast
	if m.Loaded() {
		last = busyLast
	}
	return !m.At.IsZero() && now.Sub(m.At) < last
}

// Speeds are this machine's speeds at what a campaign does, per second:
// training images, input-gradient passes and forward passes of the
// campaign's classifier, images filled from a reference and by ROAD's
// imputation, image pairs compared for quality, inputs compared between
// two methods by the report (report.MeasureComparisons); and Open, the
// seconds an opening of the first dataset takes as the tasks open it (a
// launch reads each dataset to check the campaign applies, for its memory
// plan and once a seed for its tasks: seconds of a short campaign). A zero
// speed leaves its work untimed.
type Speeds struct {
	Train, Gradient, Forward float64
	// Base is the training images per second of the base model, at the
	// batch its recipe sets (spec.Model.Batch) where that is not the
	// default retrainings train at (0: Train's): a batch of 32 trains
	// several times slower an image than one of 256.
	Base                  float64 `json:",omitempty"`
	Fill, Impute, Quality float64
	Compare               float64
	Open                  float64
	// Untimed says why no speed could be measured for the campaign's
	// model (a TorchScript model's: none is), for the estimate to say.
	Untimed string `json:",omitempty"`
}

// Measure sizes the campaign on this machine: it measures its speeds
// (Campaign.Speeds) and estimates with them (Estimate: a launch resumes,
// so a run's finished tasks are not counted). A TorchScript model's
// speeds are not measured here: Seconds is then 0 and the size says why. It is
// SpeedBook.Estimate with an empty book: what `run --estimate` prints and
// the workbench shows, from speeds measured in a process of their own.
func (c *Campaign) Measure(ctx context.Context, kernel gemm.Kernel) (Size, error) {
	return new(SpeedBook).Estimate(ctx, c, kernel)
}

// MeasureHere measures the campaign's speeds in this process: its own
// (Campaign.Speeds) and those of every diffusion prior its protocols run,
// with how busy the machine was meanwhile.
func MeasureHere(ctx context.Context, c *Campaign, kernel gemm.Kernel) (Measured, error) {
	load := startLoad()
	m := Measured{PID: os.Getpid(), Priors: map[string]float64{}}
	var err error
	if m.Speeds, err = c.Speeds(ctx, kernel); err != nil {
		return m, err
	}
	if _, err := c.estimate(ctx, m.Speeds, kernel, false, func(ctx context.Context, key string, p diffusion.Prior) (float64, error) {
		v, err := MeasurePriorSpeed(ctx, p)
		m.Priors[key] = v
		return v, err
	}); err != nil {
		return m, err
	}
	m.At, m.Busy = time.Now(), load.busy()
	return m, nil
}

// Speeds measures this machine's speeds (MeasureSpeeds) with the
// campaign's architecture (a Faithlab model file's own) on its first
// dataset, or with an ONNX model itself on a short probe (trained, as the
// protocols retrain it, from a copy). A TorchScript model's are zero, with
// Untimed saying why: it runs in a torch worker, which sizing does not
// start (the worker runs the file's code, which only a launch the user
// allowed may do). They depend only on SpeedsKey, so that a front end
// that estimates again after every edit of a campaign measures once per
// key (SpeedBook).
func (c *Campaign) Speeds(ctx context.Context, kernel gemm.Kernel) (Speeds, error) {
	s := c.Spec
	if len(s.Datasets) == 0 {
		return Speeds{}, fmt.Errorf("campaign %s: no dataset", s.Name)
	}
	arch := s.Model.Arch
	var net engine.Network
	switch f := s.Model.File; {
	case f != "" && model.IsTorchScript(f):
		return Speeds{Untimed: "a TorchScript model runs in its torch worker, which is started only by a launch: its speeds are not measured before"}, nil
	case f != "":
		m, err := model.Load(f, kernel)
		if err != nil {
			return Speeds{}, err
		}
		if arch = m.Arch; model.IsONNX(f) {
			arch, net = "", m.Net
			defer engine.Release(net)
		}
	}
	t0 := time.Now()
	tr, te, err := c.samples(s.Datasets[0])
	if err != nil {
		return Speeds{}, err
	}
	open := time.Since(t0).Seconds()
	sp, err := MeasureSpeeds(ctx, arch, net, tr, te, kernel)
	sp.Open = open
	if b := s.Model.Batch; err == nil && arch != "" && s.Model.File == "" && b > 0 && b != (train.Config{}).Defaults().BatchSize {
		sp.Base, err = trainingSpeed(ctx, arch, tr, kernel, b)
	}
	return sp, err
}

// SpeedsKey is what Campaign.Speeds depends on: the model (its file or
// architecture), the first dataset and the engine. Not the sample caps:
// the speeds are per image, and a campaign sized at 500 test images and
// then at 600 is the same machine's work (measured again, the estimate
// jumped with the machine's load between near-identical forms).
func (c *Campaign) SpeedsKey() string {
	s := c.Spec
	if len(s.Datasets) == 0 {
		return ""
	}
	return fmt.Sprintf("%s|%s|%d|%s|%s", s.Model.File, s.Model.Arch, s.Model.Batch, s.Datasets[0].Ref, s.Engine)
}

// probeBytes bounds the inputs MeasureSpeeds times the passes on.
const probeBytes = 4 << 20

// MeasureSpeeds measures this machine's Speeds on train's and test's
// first inputs, about a second each: training with a fresh network of
// arch (none: a copy of net), the passes with net (nil: that fresh
// network) on a probe of at most 4 MiB of inputs — 1 024 Fashion-MNIST
// images, 6 at 224×224 in RGB —, so that a large model's probe stays short.
func MeasureSpeeds(ctx context.Context, arch string, net engine.Network, trainSet, testSet *data.Dataset, kernel gemm.Kernel) (Speeds, error) {
	var sp Speeds
	var err error
	switch {
	case arch != "":
		if sp.Train, err = MeasureSpeed(ctx, arch, trainSet, kernel); err != nil {
			return sp, err
		}
	case net != nil:
		// Retrained as the protocols retrain it: a copy of the network.
		cp := net.Clone()
		sp.Train, err = measureTraining(ctx, cp, trainSet, 0)
		engine.Release(cp)
		if err != nil {
			return sp, err
		}
	}
	if net == nil {
		m, err := model.New(arch, trainSet, kernel, 1)
		if err != nil {
			return sp, err
		}
		net = m.Net
	}
	if testSet.Len() == 0 {
		return sp, fmt.Errorf("no test inputs to time")
	}
	probe := testSet.Head(min(testSet.Len(), 1024, max(2, probeBytes/(4*testSet.Dim()))))
	n, dim := probe.Len(), probe.Dim()
	timed := func(f func() error) (float64, error) {
		// A first call, not timed, makes the network's buffers (and, for
		// large inputs, its per-core copies): timed in, a 224×224
		// DenseNet-121's one call of the probe measured half its speed.
		if err := f(); err != nil {
			return 0, err
		}
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
	if sp.Forward, err = timed(func() error { _, err := engine.Logits(ctx, net, probe.X[:n*dim], n); return err }); err != nil {
		return sp, err
	}
	ones := func(first int, _, d []float32) {
		clear(d)
		for r := range len(d) / net.Classes() {
			d[r*net.Classes()] = 1
		}
	}
	if sp.Gradient, err = timed(func() error {
		_, err := engine.Differentiate(ctx, net, probe.X[:n*dim], n, engine.InputGrad, ones)
		return err
	}); err != nil {
		return sp, err
	}
	if sp.Fill, sp.Impute, sp.Quality, err = protocol.MeasureWorkSpeeds(ctx, testSet); err != nil {
		return sp, err
	}
	sp.Compare, err = report.MeasureComparisons(ctx)
	return sp, err
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
	return trainingSpeed(ctx, arch, ds, kernel, 0)
}

// trainingSpeed is MeasureSpeed in batches of batch (0: the default).
func trainingSpeed(ctx context.Context, arch string, ds *data.Dataset, kernel gemm.Kernel, batch int) (float64, error) {
	m, err := model.New(arch, ds, kernel, 1)
	if err != nil {
		return 0, err
	}
	return measureTraining(ctx, m.Net, ds, batch)
}

// measureTraining trains net on ds's first inputs (at most 1 024, and
// probeBytes' worth) in batches of batch (0: the default) for about a
// second after its first batch and returns the images a second.
func measureTraining(ctx context.Context, net engine.Network, ds *data.Dataset, batch int) (float64, error) {
	n := min(ds.Len(), 1024, max(2, probeBytes/(4*max(ds.Dim(), 1))))
	probe := ds.Head(n)
	var seen int
	var first, last time.Time
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := train.Config{Epochs: 1000, Patience: -1, ValFraction: -1, BatchSize: batch}
	bs := cfg.Defaults().BatchSize
	_, err := train.Train(ctx, net, probe, cfg, func(p train.Progress) {
		if p.EpochDone {
			return
		}
		now := time.Now()
		if first.IsZero() {
			first = now // the first batch makes the buffers: timed from its end
			return
		}
		seen += min(bs, n-(p.Batch-1)*bs)
		if last = now; now.Sub(first) > time.Second {
			cancel()
		}
	})
	if err != nil && ctx.Err() == nil {
		return 0, err
	}
	if seen == 0 {
		return 0, fmt.Errorf("measuring %s: no batch finished after the first", net.Arch())
	}
	return float64(seen) / last.Sub(first).Seconds(), nil
}
