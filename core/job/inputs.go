package job

import (
	"context"
	"fmt"

	"faithlab/core/attr/methods"
	"faithlab/core/data"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/core/spec"
	"faithlab/core/train"
)

// inputs returns the task's base model (a private copy: networks are not
// safe for concurrent use) and its dataset's splits. A model file is
// loaded and its dataset opened as the model records (model.Data); a
// recipe's model is trained once on the split the task's seed makes. The
// method is checked against the data before a model is trained for it.
func (r *Runner) inputs(ctx context.Context, t Task, meth spec.Method, progress func(string, int, int)) (*model.Model, *data.Dataset, *data.Dataset, error) {
	s := r.Spec
	load := func(m *model.Model) (*data.Dataset, *data.Dataset, error) {
		trainSet, testSet, err := r.data(t.Dataset, t.Seed, m)
		if err == nil {
			err = applies(meth, trainSet)
		}
		return trainSet, testSet, err
	}
	if s.Model.File != "" && (model.IsTorchScript(s.Model.File) || model.IsONNX(s.Model.File)) {
		open := model.LoadTorchScript
		if model.IsONNX(s.Model.File) {
			open = func(path string) (*model.Model, error) { return model.LoadONNX(path, r.Kernel) }
		}
		m, err := open(s.Model.File)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("base model: %w", err)
		}
		trainSet, testSet, err := load(m)
		return m, trainSet, testSet, err
	}
	if s.Model.File != "" {
		b, err := r.artefact(ctx, t.Base, ".flm", func() ([]byte, error) { return model.ReadFile(s.Model.File) })
		if err != nil {
			return nil, nil, nil, fmt.Errorf("base model: %w", err)
		}
		m, err := model.Decode(b, r.Kernel)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("base model %s: %w", s.Model.File, err)
		}
		trainSet, testSet, err := load(m)
		return m, trainSet, testSet, err
	}
	trainSet, testSet, err := load(nil)
	if err != nil {
		return nil, nil, nil, err
	}
	ds := s.Datasets[t.Dataset]
	b, err := r.artefact(ctx, t.Base, ".flm", func() (b []byte, err error) {
		err = protocol.Stage(ctx, "base model", func(ctx context.Context) error {
			b, err = r.trainBase(ctx, t, ds, trainSet, testSet, progress)
			return err
		})
		return b, err
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("base model: %w", err)
	}
	m, err := model.Decode(b, r.Kernel)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("base model %s: %w", r.Cache.Path(t.Base, ".flm"), err)
	}
	return m, trainSet, testSet, nil
}

// trainBase trains the task's base model from the spec's recipe and
// returns its file's bytes.
func (r *Runner) trainBase(ctx context.Context, t Task, ds spec.Dataset, trainSet, testSet *data.Dataset, progress func(string, int, int)) ([]byte, error) {
	s := r.Spec
	opt := ds.Options
	opt.Seed = t.Seed
	m, err := model.Fit{Arch: s.Model.Arch, Train: trainSet, Test: testSet, Kernel: r.Kernel, Engine: r.Engine, Source: &model.Source{Ref: ds.Ref, Options: opt},
		Config: train.Config{Epochs: s.Model.Epochs, Patience: s.Model.Patience, LR: s.Model.LR, BatchSize: s.Model.Batch, Seed: t.Seed,
			Optimizer: s.Model.Optimizer, Momentum: s.Model.Momentum, WeightDecay: s.Model.WeightDecay, Schedule: s.Model.Schedule},
	}.Run(ctx, func(p train.Progress) {
		progress(fmt.Sprintf("training the base model (epoch %d/%d)", p.Epoch, p.Epochs), p.Epoch-1, p.Epochs)
	})
	if err != nil {
		return nil, err
	}
	return m.Encode()
}

// applies says why the method cannot explain ds's samples, if it cannot.
func applies(meth spec.Method, ds *data.Dataset) error {
	info, err := methods.Lookup(meth.Name)
	if err != nil {
		return err
	}
	if err := info.Check(ds.Shape, len(ds.Truth) > 0); err != nil {
		return fmt.Errorf("%s: %w", ds.Name, err)
	}
	return nil
}

// data loads a dataset's splits once per seed, cut to the spec's sample
// counts: as the model m records when it is a model file (the seed does not
// matter then), else split by the seed for datasets without a test split.
func (r *Runner) data(d int, seed uint64, m *model.Model) (*data.Dataset, *data.Dataset, error) {
	ds := r.Spec.Datasets[d]
	key := fmt.Sprint(d, "/", seed)
	r.mu.Lock()
	e := r.sets[key]
	if e == nil {
		e = &sets{}
		r.sets[key] = e
	}
	r.mu.Unlock()
	e.once.Do(func() {
		opt := ds.OpenOptions()
		if m != nil {
			// A folder of images alone is explained at the classes the model
			// predicts; protocols that need labels are refused before any
			// work (protocol.AppliesTo).
			opt.Unlabelled = true
			e.train, e.test, e.err = m.Data(ds.Ref, opt)
		} else {
			opt.Seed = seed
			e.train, e.test, e.err = data.Open(ds.Ref, opt)
		}
	})
	return e.train, e.test, e.err
}

// engine is the runner's engine: Engine, or the native one on Kernel.
func (r *Runner) engine() *model.Engine {
	if r.Engine != nil {
		return r.Engine
	}
	return model.NativeEngine(r.Kernel)
}
