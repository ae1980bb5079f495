package train

import (
	"context"

	"faithlab/core/data"
	"faithlab/core/engine"
)

// EpochRunner is a network that runs training epochs itself, beside its
// device (the torch engine's worker, whose GPU a round trip per batch
// would starve). Train then hands it the training set once per run and
// each epoch's sample order and learning rate, and keeps everything else —
// the order's seed, the schedule, validation, early stopping, the record —
// as for any network.
type EpochRunner interface {
	engine.Network
	// StartTraining readies a run on ds with cfg's optimiser (Optimizer,
	// Momentum, WeightDecay, as core/optim makes them) and MaskProb.
	StartTraining(ctx context.Context, ds *data.Dataset, cfg Config) (EpochSession, error)
}

// EpochSession is one training run of an EpochRunner; the optimiser's
// state lasts from one epoch to the next.
type EpochSession interface {
	// Epoch takes the samples of ds in order, batch at a time (the last
	// batch may be smaller), one optimiser step per batch on the mean
	// softmax cross-entropy at learning rate lr, masking each pixel with
	// probability MaskProb from maskSeed. It reports its progress at least
	// after the last batch; when it returns, the network's Params hold the
	// new weights. A cancelled ctx stops it within a batch with ctx's error.
	Epoch(ctx context.Context, order []int, batch int, lr float64, maskSeed uint64, progress func(EpochProgress)) error
	// Close ends the run and frees what it holds.
	Close() error
}

// EpochProgress is an epoch's progress so far.
type EpochProgress struct {
	Batch, Batches int
	Seen, Correct  int     // samples trained on, and how many of them the network classified right
	LossSum        float64 // the sum of their losses
}
