package job

import (
	"context"
	"errors"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/core/spec"
	"faithlab/core/store"
)

// artefact returns the cached bytes under key, building and storing them
// first when they are not there (once).
func (r *Runner) artefact(ctx context.Context, key, ext string, make func() ([]byte, error)) ([]byte, error) {
	v, err := r.once(ctx, key, func() (any, bool, error) {
		b, ok, err := r.Cache.Get(key, ext)
		return b, ok, err
	}, func() (any, error) {
		b, err := make()
		if err == nil {
			err = r.Cache.Put(key, ext, b)
		}
		return b, err
	})
	b, _ := v.([]byte)
	return b, err
}

// array is artefact for a .npy array, streamed from and to the cache so
// that it is never held beside its encoded bytes (a training set's maps
// are hundreds of MB). The array is shared by the tasks that ask at once:
// they must not change it.
func (r *Runner) array(ctx context.Context, key string, make func() (*data.Array, error)) (*data.Array, error) {
	v, err := r.once(ctx, key, func() (any, bool, error) {
		a, ok, err := r.Cache.GetNPY(key)
		return a, ok, err
	}, func() (any, error) {
		a, err := make()
		if err == nil {
			err = r.Cache.PutNPY(key, a.Shape, a.Data)
		}
		return a, err
	})
	a, _ := v.(*data.Array)
	return a, err
}

// once gets what the cache holds under key (get), or makes and stores it
// (make) when it holds nothing or a damaged entry (moved aside, reported
// and made again); concurrent tasks wait for one build. A build cancelled
// with its task's context, or whose network's worker was lost
// (engine.ErrWorkerLost), fails only the task that ran it: the waiting
// tasks whose own context lives build it again. Once built or read, the
// runner forgets it — later callers read the cache — so that it holds no
// artefact beyond its users.
func (r *Runner) once(ctx context.Context, key string, get func() (any, bool, error), make func() (any, error)) (any, error) {
	for {
		r.mu.Lock()
		b := r.builds[key]
		if b == nil {
			b = &build{}
			r.builds[key] = b
		}
		r.mu.Unlock()
		built := false
		b.once.Do(func() {
			built = true
			var ok bool
			b.v, ok, b.err = get()
			var damaged *store.DamagedError
			if errors.As(b.err, &damaged) { // moved aside: build it again
				r.emit(Event{Kind: Repaired, Err: damaged.Error() + "; rebuilding it"})
				b.err = nil
			}
			if ok || b.err != nil {
				return
			}
			b.v, b.err = make()
		})
		if b.err == nil {
			r.mu.Lock()
			if r.builds[key] == b {
				delete(r.builds, key)
			}
			r.mu.Unlock()
			return b.v, nil
		}
		lost := errors.Is(b.err, engine.ErrWorkerLost) && !built // another task's worker
		if !errors.Is(b.err, context.Canceled) && !lost {
			// Other failures stay, so that the tasks depending on the
			// artefact fail at once instead of each building it again; a
			// resumed run retries them.
			return nil, b.err
		}
		r.mu.Lock()
		if r.builds[key] == b {
			delete(r.builds, key)
		}
		r.mu.Unlock()
		if ctx.Err() != nil {
			return nil, b.err
		}
	}
}

// models is the protocols' cache of retrained models (protocol.Env.Models),
// kept with the artefacts: a ROAR run killed after three of its nine
// retrainings resumes with the fourth.
type models struct {
	r    *Runner
	base string
	from *model.Model // the base model, whose header (or TorchScript module) retrained ones share
	data string       // the training set the protocols retrain on (trainKey)
}

// trainKey addresses a task's training set: its dataset, read with its
// options, cut to its samples. A retrained model depends on it beside the
// base model, whose own key leaves it out when the base is a model file
// (campaigns of one model file on other training subsets once shared
// their retrained models).
func trainKey(d spec.Dataset, trainSet *data.Dataset) string {
	return drawnKey(store.Key("train-set", d.Ref, optionsKey(d.Options), trainSet.Len()), trainSet)
}

// drawnKey is key, with the positions of ds's samples in their split where
// they were drawn from it (an image folder's train_samples and
// test_samples: data.Dataset.Drawn), so that another draw, or the first
// samples taken before draws, is another entry.
func drawnKey(key string, ds *data.Dataset) string {
	if ds.Drawn == nil {
		return key
	}
	return store.Key(key, "drawn", ds.Drawn)
}

func (c *models) Model(ctx context.Context, key string, build func() (engine.Network, error)) (engine.Network, error) {
	k := store.Key("retrained", c.base, c.data, key)
	b, err := c.r.artefact(ctx, k, c.from.RetrainedExt(), func() (b []byte, err error) {
		err = protocol.Stage(ctx, "retraining", func(context.Context) error {
			net, err := build()
			if err == nil {
				b, err = c.from.EncodeRetrained(net)
			}
			return err
		})
		return b, err
	})
	if err != nil {
		return nil, err
	}
	return c.r.engine().DecodeRetrained(ctx, c.from, b)
}
