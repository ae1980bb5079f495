package diffusion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/optim"
)

// TrainConfig says how to train a prior. Zero fields take the defaults noted.
type TrainConfig struct {
	Epochs    int     `json:"epochs"`     // passes over the data (default 10)
	BatchSize int     `json:"batch_size"` // default 128
	LR        float64 `json:"lr"`         // Adam's rate after warm-up (default 2e-4, Ho et al. and the peer)
	Warmup    int     `json:"warmup"`     // steps of linear learning-rate warm-up (default 500)
	EMA       float64 `json:"ema"`        // decay of the weights' moving average (default 0.999)
	GradClip  float64 `json:"grad_clip"`  // largest gradient norm (default 1, Ho et al.; negative: none)
	Schedule  string  `json:"schedule"`   // noise schedule: linear (default) or cosine
	T         int     `json:"steps"`      // diffusion steps (default 1000)
	Seed      uint64  `json:"seed"`       // initialisation is the caller's; this seeds order, steps and noise
	// Checkpoint, when set, is a file the trainer saves its whole state to
	// every CheckpointEvery steps and at every epoch's end, and resumes from
	// when it exists: a run killed at any moment and started again ends with
	// the same weights, bit for bit, as one never stopped, and a finished
	// run started again with more Epochs goes on as one asked for them from
	// the start would have.
	Checkpoint      string `json:"-"`
	CheckpointEvery int    `json:"-"` // default 100
}

func (c TrainConfig) withDefaults() TrainConfig {
	if c.Epochs == 0 {
		c.Epochs = 10
	}
	if c.BatchSize == 0 {
		c.BatchSize = 128
	}
	if c.LR == 0 {
		c.LR = 2e-4
	}
	if c.Warmup == 0 {
		c.Warmup = 500
	}
	if c.EMA == 0 {
		c.EMA = 0.999
	}
	if c.GradClip == 0 {
		c.GradClip = 1
	}
	if c.Schedule == "" {
		c.Schedule = Linear
	}
	if c.T == 0 {
		c.T = 1000
	}
	if c.CheckpointEvery <= 0 {
		c.CheckpointEvery = 100
	}
	return c
}

func (c TrainConfig) check() error {
	switch {
	case c.Epochs < 1, c.BatchSize < 1, !(c.LR > 0), c.Warmup < 0:
		return fmt.Errorf("train prior: %d epochs, batch %d, learning rate %g, warm-up %d: want positive (warm-up ≥ 0)", c.Epochs, c.BatchSize, c.LR, c.Warmup)
	case !(c.EMA > 0 && c.EMA < 1):
		return fmt.Errorf("train prior: EMA decay %g: want it in (0, 1)", c.EMA)
	}
	return nil
}

// TrainEpoch is one epoch of a prior's training; its time and speed are
// those of the part run since the last resume.
type TrainEpoch struct {
	Epoch     int     `json:"epoch"`
	Loss      float64 `json:"loss"` // mean ε-prediction error over the epoch
	Seconds   float64 `json:"seconds"`
	ImagesSec float64 `json:"images_per_second"`
}

// TrainRecord is what a prior's training did; it is saved with the prior.
type TrainRecord struct {
	Config  TrainConfig  `json:"config"`
	Dataset string       `json:"dataset"`
	Samples int          `json:"samples"`
	History []TrainEpoch `json:"history"`
	Steps   int          `json:"steps"`   // optimiser steps taken
	Resumed int          `json:"resumed"` // times the run resumed from its checkpoint
	Seconds float64      `json:"seconds"` // of training, summed over the runs
	Kernel  string       `json:"kernel,omitempty"`
}

// TrainProgress is reported after every step and every epoch.
type TrainProgress struct {
	Epoch, Epochs  int
	Batch, Batches int
	Loss           float64 // running mean over the epoch so far
	EpochDone      bool
	Last           *TrainEpoch // set when EpochDone
}

// TrainPrior fits net to predict the noise of the DDPM forward process on
// ds (Ho et al. 2020, Algorithm 1): for data x₀ scaled into [−1, 1] by
// ScalingFor(ds), a step t uniform on 0 … T−1 and noise ε, it minimises
// ‖ε − ε_θ(√ᾱ_t x₀ + √(1−ᾱ_t) ε, t)‖² with Adam, gradients clipped to a
// norm, and keeps an exponential moving average of the weights. At the end
// net holds the average, which is what a prior samples with. A cancelled
// context stops before the next step and returns the record so far with
// ctx's error; the weights are then the raw ones, and a run with the same
// checkpoint file resumes from its last checkpoint.
func TrainPrior(ctx context.Context, net engine.Denoiser, ds *data.Dataset, cfg TrainConfig, progress func(TrainProgress)) (rec TrainRecord, err error) {
	cfg = cfg.withDefaults()
	rec = TrainRecord{Config: cfg, Dataset: ds.Name, Samples: ds.Len()}
	if err := cfg.check(); err != nil {
		return rec, err
	}
	if !slices.Equal(net.InputShape(), ds.Shape) {
		return rec, fmt.Errorf("train prior: %s samples have shape %v, %s takes %v", ds.Name, ds.Shape, net.Arch(), net.InputShape())
	}
	sched, err := NewSchedule(cfg.Schedule, cfg.T)
	if err != nil {
		return rec, fmt.Errorf("train prior: %w", err)
	}
	tr := &trainer{cfg: cfg, net: net, ds: ds, sched: sched, space: ScalingFor(ds), adam: optim.NewAdam(0), params: net.Params()}
	tr.ema = make([][]float32, len(tr.params))
	for i, p := range tr.params {
		tr.ema[i] = slices.Clone(p.Data)
	}
	st := trainState{}
	if cfg.Checkpoint != "" {
		loaded, err := tr.load(&st)
		if err != nil {
			return rec, fmt.Errorf("train prior: resume from %s: %w", cfg.Checkpoint, err)
		}
		if loaded {
			rec = st.Record
			rec.Config.Epochs = cfg.Epochs
			rec.Resumed++
		}
	}
	start := time.Now()
	defer func() { rec.Seconds += time.Since(start).Seconds() }() // rec is the named result: the return sees this
	batches := (ds.Len() + cfg.BatchSize - 1) / cfg.BatchSize
	for st.Epoch < cfg.Epochs {
		order := rand.New(rand.NewPCG(cfg.Seed, uint64(st.Epoch))).Perm(ds.Len())
		epochStart, seen := time.Now(), 0
		for st.Batch < batches {
			if err := ctx.Err(); err != nil {
				return rec, err
			}
			idx := order[st.Batch*cfg.BatchSize : min((st.Batch+1)*cfg.BatchSize, ds.Len())]
			loss, err := tr.step(idx, rec.Steps)
			if err != nil {
				return rec, fmt.Errorf("train prior: epoch %d, batch %d: %w", st.Epoch+1, st.Batch+1, err)
			}
			rec.Steps++
			st.Batch++
			st.LossSum += loss * float64(len(idx))
			st.Seen += len(idx)
			seen += len(idx)
			if progress != nil {
				progress(TrainProgress{Epoch: st.Epoch + 1, Epochs: cfg.Epochs, Batch: st.Batch, Batches: batches, Loss: st.LossSum / float64(st.Seen)})
			}
			if st.Batch < batches && rec.Steps%cfg.CheckpointEvery == 0 {
				if err := tr.checkpoint(st, rec, start); err != nil {
					return rec, err
				}
			}
		}
		secs := time.Since(epochStart).Seconds()
		e := TrainEpoch{Epoch: st.Epoch + 1, Loss: st.LossSum / float64(st.Seen), Seconds: secs, ImagesSec: float64(seen) / secs}
		rec.History = append(rec.History, e)
		st = trainState{Epoch: st.Epoch + 1}
		if progress != nil {
			progress(TrainProgress{Epoch: e.Epoch, Epochs: cfg.Epochs, Batch: batches, Batches: batches, Loss: e.Loss, EpochDone: true, Last: &e})
		}
		if err := tr.checkpoint(st, rec, start); err != nil {
			return rec, err
		}
	}
	for i, p := range tr.params {
		copy(p.Data, tr.ema[i])
	}
	return rec, nil
}

// trainState is where a run is: the epoch, the next batch in it, the
// epoch's loss so far, and the record.
type trainState struct {
	Epoch, Batch int
	LossSum      float64
	Seen         int
	Record       TrainRecord
}

type trainer struct {
	cfg    TrainConfig
	net    engine.Denoiser
	ds     *data.Dataset
	sched  *Schedule
	space  Scaling
	adam   *optim.Adam
	params []engine.Param
	ema    [][]float32
	x, eps []float32
	ts     []int
	rowErr []float64
}

// step takes one optimiser step on the samples idx as step number k, whose
// timesteps and noise come from their own stream, and returns the batch's
// mean squared error.
func (tr *trainer) step(idx []int, k int) (float64, error) {
	b, dim := len(idx), tr.ds.Dim()
	x, eps := grow(&tr.x, b*dim), grow(&tr.eps, b*dim)
	tr.ts = slices.Grow(tr.ts[:0], b)[:b]
	rng := rand.New(rand.NewPCG(tr.cfg.Seed^0x9e3779b97f4a7c15, uint64(k)))
	for s, i := range idx {
		t := rng.IntN(tr.sched.T)
		tr.ts[s] = t
		a, sd := math.Sqrt(tr.sched.AlphaBar(t)), math.Sqrt(1-tr.sched.AlphaBar(t))
		xs := x[s*dim : (s+1)*dim]
		tr.space.ToPrior(xs, tr.ds.Sample(i))
		for j := range xs {
			e := rng.NormFloat64()
			eps[s*dim+j] = float32(e)
			xs[j] = float32(a*float64(xs[j]) + sd*e)
		}
	}
	for _, p := range tr.params {
		clear(p.Grad)
	}
	if cap(tr.rowErr) < b {
		tr.rowErr = make([]float64, b)
	}
	rowErr := tr.rowErr[:b]
	scale := float32(2 / float64(b*dim))
	outGrad := func(first int, pred, d []float32) {
		for r := 0; r*dim < len(pred); r++ {
			var se float64
			for j := r * dim; j < (r+1)*dim; j++ {
				diff := pred[j] - eps[first*dim+j]
				d[j] = scale * diff
				se += float64(diff) * float64(diff)
			}
			rowErr[first+r] = se
		}
	}
	var err error
	if g, ok := tr.net.(engine.DenoiserGradienter); ok {
		_, err = g.Gradient(x, tr.ts, b, engine.ParamGrad, outGrad)
	} else {
		var pred []float32
		if pred, err = tr.net.Forward(x, tr.ts, b); err == nil {
			d := make([]float32, len(pred))
			outGrad(0, pred, d)
			_, err = tr.net.Backward(d, engine.ParamGrad)
		}
	}
	if err != nil {
		return 0, err
	}
	var loss float64
	for _, se := range rowErr {
		loss += se
	}
	loss /= float64(b * dim)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, fmt.Errorf("the loss is %g (diverged)", loss)
	}
	if c := tr.cfg.GradClip; c > 0 {
		var sq float64
		for _, p := range tr.params {
			for _, g := range p.Grad {
				sq += float64(g) * float64(g)
			}
		}
		if norm := math.Sqrt(sq); norm > c {
			f := float32(c / norm)
			for _, p := range tr.params {
				for j := range p.Grad {
					p.Grad[j] *= f
				}
			}
		}
	}
	tr.adam.Step(tr.params, tr.cfg.LR*min(1, float64(k+1)/float64(max(tr.cfg.Warmup, 1))))
	// The average warms up too (decay (1+k)/(10+k) at first), so that a
	// short run's average is not dominated by its random start.
	d := float32(min(tr.cfg.EMA, float64(1+k)/float64(10+k)))
	for i, p := range tr.params {
		e := tr.ema[i]
		for j, v := range p.Data {
			e[j] = d*e[j] + (1-d)*v
		}
	}
	return loss, nil
}

// load restores the checkpoint into the trainer and st; it reports false
// when there is none yet.
func (tr *trainer) load(st *trainState) (bool, error) {
	b, err := data.ReadFileLimit(tr.cfg.Checkpoint, maxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ck, err := decodeCheckpoint(b)
	if err != nil {
		return false, err
	}
	// Every step depends on the seed and its own number only, so a run
	// may go on for more epochs than it first asked for.
	want := tr.cfg
	got := ck.State.Record.Config
	got.Checkpoint, got.CheckpointEvery, got.Epochs = want.Checkpoint, want.CheckpointEvery, want.Epochs
	if got != want || ck.State.Record.Dataset != tr.ds.Name || ck.State.Record.Samples != tr.ds.Len() {
		return false, fmt.Errorf("it was made by another run (%s on %s, %d samples; now %s, %d samples)", settingsBesides(got, want), ck.State.Record.Dataset, ck.State.Record.Samples, tr.ds.Name, tr.ds.Len())
	}
	if ck.State.Epoch > want.Epochs {
		return false, fmt.Errorf("it has trained %d epochs, more than the %d asked for", ck.State.Epoch, want.Epochs)
	}
	if err := ck.restore(tr); err != nil {
		return false, err
	}
	*st = ck.State
	return true, nil
}

// checkpoint saves the run's state, when it has a checkpoint file, with the
// record and its time so far.
func (tr *trainer) checkpoint(st trainState, rec TrainRecord, start time.Time) error {
	if tr.cfg.Checkpoint == "" {
		return nil
	}
	st.Record = rec
	st.Record.Seconds += time.Since(start).Seconds()
	b, err := encodeCheckpoint(tr, st)
	if err == nil {
		err = data.WriteFileAtomic(tr.cfg.Checkpoint, b)
	}
	if err != nil {
		return fmt.Errorf("train prior: checkpoint %s: %w", tr.cfg.Checkpoint, err)
	}
	return nil
}

// settingsBesides words the settings of a that differ from b's, by their
// names in a training record ("batch_size 64, lr 0.001"; "the same settings").
func settingsBesides(a, b TrainConfig) string {
	var ma, mb map[string]any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	json.Unmarshal(ja, &ma)
	json.Unmarshal(jb, &mb)
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(ma)) {
		if fmt.Sprint(ma[k]) != fmt.Sprint(mb[k]) {
			diff = append(diff, fmt.Sprintf("%s %v", k, ma[k]))
		}
	}
	if len(diff) == 0 {
		return "the same settings"
	}
	return strings.Join(diff, ", ")
}
