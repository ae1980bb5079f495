package torch

import (
	"context"
	"fmt"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/train"
)

var _ train.EpochRunner = (*Net)(nil)

// StartTraining implements train.EpochRunner: the training set goes to
// the worker once (into the device's memory) with the optimiser's
// settings; each epoch is then one request that streams its progress.
func (m *Net) StartTraining(ctx context.Context, ds *data.Dataset, cfg train.Config) (train.EpochSession, error) {
	n := ds.Len()
	dim := engine.Size(m.shape)
	if len(ds.X) < n*dim {
		return nil, fmt.Errorf("%s: %s holds %d values for %d samples of %v", m.arch, ds.Name, len(ds.X), n, m.shape)
	}
	y := make([]int32, n)
	for i, c := range ds.Y[:n] {
		if c < 0 || c >= m.classes {
			return nil, fmt.Errorf("%s: sample %d of %s has label %d, outside the %d classes", m.arch, i, ds.Name, c, m.classes)
		}
		y[i] = int32(c)
	}
	_, err := m.request(ctx, "train_start", map[string]any{"n": n, "optimizer": cfg.Optimizer, "lr": cfg.LR,
		"momentum": cfg.Momentum, "weight_decay": cfg.WeightDecay, "mask_prob": cfg.MaskProb},
		[]array{f32("x", ds.X[:n*dim], append([]int{n}, m.shape...)...), i32("y", y, n)}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: start training: %w", m.arch, err)
	}
	return &session{m: m, n: n, gen: m.gen}, nil
}

// session is a training run in the worker.
type session struct {
	m   *Net
	n   int
	gen int // the worker that holds it
}

// batchEvent is the worker's progress during an epoch.
type batchEvent struct {
	Batch   int     `json:"batch"`
	Batches int     `json:"batches"`
	LossSum float64 `json:"loss_sum"`
	Correct int     `json:"correct"`
	Seen    int     `json:"seen"`
}

// Epoch implements train.EpochSession. The reply brings the new weights.
func (s *session) Epoch(ctx context.Context, order []int, batch int, lr float64, maskSeed uint64, progress func(train.EpochProgress)) error {
	o := make([]int32, len(order))
	for i, j := range order {
		if j < 0 || j >= s.n {
			return fmt.Errorf("%s: sample %d of an epoch's order outside the %d samples", s.m.arch, j, s.n)
		}
		o[i] = int32(j)
	}
	var perr error
	f, err := s.m.request(ctx, "train_epoch", map[string]any{"batch": batch, "lr": lr, "mask_seed": maskSeed},
		[]array{i32("order", o, len(o))}, func(f *frame) {
			var ev batchEvent
			if err := f.decode(&ev); err != nil {
				perr = err
				return
			}
			if progress != nil {
				progress(train.EpochProgress{Batch: ev.Batch, Batches: ev.Batches, Seen: ev.Seen, Correct: ev.Correct, LossSum: ev.LossSum})
			}
		})
	if err != nil {
		return fmt.Errorf("%s: %w", s.m.arch, err)
	}
	if perr != nil {
		return fmt.Errorf("%s: progress from the worker: %w", s.m.arch, perr)
	}
	return s.m.receive(f, "param:")
}

// Close implements train.EpochSession. A session whose worker died
// ended with it.
func (s *session) Close() error {
	if !s.m.e.alive(s.gen) {
		return nil
	}
	_, err := s.m.request(context.Background(), "train_end", nil, nil, nil)
	return err
}
