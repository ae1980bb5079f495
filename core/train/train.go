// Package train fits an engine.Network to a dataset: minibatch training with
// softmax cross-entropy, Adam or SGD, a learning-rate schedule, and early
// stopping on a held-out validation split, which by default follows GOAR's
// recipe (Appendix A): Adam, lr 3e-4, batch 256, patience 5.
//
// Training is deterministic: the same seed, data and configuration give the
// same weights bit for bit on one machine. Progress is reported through a
// callback; Train never prints.
package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/optim"
)

// Config says how to train. Zero fields take the defaults of Defaults.
type Config struct {
	Epochs      int     `json:"epochs"`       // most epochs to run (default 100; early stopping usually ends sooner)
	BatchSize   int     `json:"batch_size"`   // default 256
	LR          float64 `json:"lr"`           // default 3e-4
	Optimizer   string  `json:"optimizer"`    // "adam" (default) or "sgd"
	Momentum    float64 `json:"momentum"`     // SGD momentum (default 0)
	WeightDecay float64 `json:"weight_decay"` // L2 weight decay (default 0)
	Schedule    string  `json:"schedule"`     // "constant" (default) or "cosine" over Epochs
	ValFraction float64 `json:"val_fraction"` // held out for early stopping; 0: 1/12 (Fashion-MNIST's usual 55k/5k) when early stopping can end the run, none when it cannot (Epochs ≤ Patience); negative: none
	Patience    int     `json:"patience"`     // epochs without validation improvement before stopping (default 5; negative: never stop early)
	Seed        uint64  `json:"seed"`
	// MaskProb removes (sets to 0) each pixel of every training batch with
	// this probability, drawn afresh per batch: the random masking that
	// trains Eval-X's proxy model (Jethani et al. 2021 use 0.5).
	MaskProb float64 `json:"mask_prob,omitempty"`
}

// Defaults fills the zero fields of c with the GOAR recipe.
func (c Config) Defaults() Config {
	if c.Epochs == 0 {
		c.Epochs = 100
	}
	if c.BatchSize == 0 {
		c.BatchSize = 256
	}
	if c.LR == 0 {
		c.LR = 3e-4
	}
	if c.Optimizer == "" {
		c.Optimizer = "adam"
	}
	if c.Schedule == "" {
		c.Schedule = "constant"
	}
	if c.Patience == 0 {
		c.Patience = 5
	}
	if c.ValFraction == 0 {
		// A split that cannot stop training would only take data from it.
		c.ValFraction = 1.0 / 12
		if c.Patience < 0 || c.Epochs <= c.Patience {
			c.ValFraction = -1
		}
	}
	return c
}

// Images is how many training images a run of c on n samples sees at
// most: every epoch over what the validation split leaves (early
// stopping ends sooner).
func (c Config) Images(n int) int {
	c = c.Defaults()
	if c.ValFraction > 0 {
		n = data.SplitLen(n, c.ValFraction)
	}
	return c.Epochs * n
}

// Epoch is one epoch's record.
type Epoch struct {
	Epoch     int     `json:"epoch"`
	LR        float64 `json:"lr"`
	Loss      float64 `json:"loss"`
	Accuracy  float64 `json:"accuracy"`
	ValLoss   float64 `json:"val_loss,omitempty"`
	ValAcc    float64 `json:"val_accuracy,omitempty"`
	Seconds   float64 `json:"seconds"`
	ImagesSec float64 `json:"images_per_second"`
}

// Record is what a training run did; it is saved with the model.
type Record struct {
	Config    Config  `json:"config"`
	Dataset   string  `json:"dataset"`
	Samples   int     `json:"samples"`
	History   []Epoch `json:"history"`
	BestEpoch int     `json:"best_epoch"`
	Stopped   string  `json:"stopped"` // "epochs", "early-stopping" or "cancelled"
	Seconds   float64 `json:"seconds"`
}

// Progress is reported after every batch and every epoch.
type Progress struct {
	Epoch, Epochs  int
	Batch, Batches int
	Loss, Accuracy float64 // running means over the epoch so far
	EpochDone      bool
	Last           *Epoch // set when EpochDone
}

// Train fits net to ds. With a validation split it keeps the weights of the
// epoch with the lowest validation loss. A cancelled context stops after the
// current batch and returns the record so far with ctx's error.
func Train(ctx context.Context, net engine.Network, ds *data.Dataset, cfg Config, progress func(Progress)) (Record, error) {
	cfg = cfg.Defaults()
	rec := Record{Config: cfg, Dataset: ds.Name}
	if err := checkConfig(cfg); err != nil {
		return rec, err
	}
	if err := ds.Validate(); err != nil {
		return rec, fmt.Errorf("train: %w", err)
	}
	if got, want := ds.Shape, net.InputShape(); !equal(got, want) {
		return rec, fmt.Errorf("train: %s samples have shape %v, %s expects %v", ds.Name, got, net.Arch(), want)
	}
	if len(ds.Classes) != net.Classes() {
		return rec, fmt.Errorf("train: %s has %d classes, %s outputs %d", ds.Name, len(ds.Classes), net.Arch(), net.Classes())
	}
	trainSet, val := ds, (*data.Dataset)(nil)
	if cfg.ValFraction > 0 {
		trainSet, val = ds.Split(cfg.ValFraction, cfg.Seed)
		if val.Len() == 0 || trainSet.Len() == 0 {
			return rec, fmt.Errorf("train: %d samples are too few for a %.0f%% validation split", ds.Len(), 100*cfg.ValFraction)
		}
	}
	rec.Samples = trainSet.Len()
	opt, err := optim.New(cfg.Optimizer, cfg.Momentum, cfg.WeightDecay)
	if err != nil {
		return rec, fmt.Errorf("train: %w", err)
	}
	sched := optim.Constant(cfg.LR)
	if cfg.Schedule == "cosine" {
		sched = optim.Cosine(cfg.LR, cfg.Epochs)
	}
	params := net.Params()
	best := math.Inf(1)
	var bestW [][]float32
	sinceBest := 0
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x7a11))
	dim := ds.Dim()
	k := net.Classes()
	bs := min(cfg.BatchSize, trainSet.Len())
	xb := make([]float32, bs*dim)
	yb := make([]int, bs)
	lossAt := make([]float64, bs)
	hitAt := make([]bool, bs)
	// A network that trains beside its device runs each epoch's batches
	// itself (session.go); the loop over batches below is then skipped.
	var session EpochSession
	if r, ok := net.(EpochRunner); ok {
		if session, err = r.StartTraining(ctx, trainSet, cfg); err != nil {
			return rec, fmt.Errorf("train: %w", err)
		}
		defer session.Close()
	}
	start := time.Now()
	rec.Stopped = "epochs"
	for epoch := 0; epoch < cfg.Epochs; epoch++ {
		t0 := time.Now()
		net.SetTraining(true)
		lr := sched(epoch)
		perm := rng.Perm(trainSet.Len())
		batches := (len(perm) + bs - 1) / bs
		var lossSum, correct float64
		seen := 0
		if session != nil {
			var maskSeed uint64
			if cfg.MaskProb > 0 {
				maskSeed = rng.Uint64()
			}
			err := session.Epoch(ctx, perm, bs, lr, maskSeed, func(p EpochProgress) {
				lossSum, correct, seen = p.LossSum, float64(p.Correct), p.Seen
				if progress != nil {
					progress(Progress{Epoch: epoch + 1, Epochs: cfg.Epochs, Batch: p.Batch, Batches: batches,
						Loss: lossSum / float64(max(seen, 1)), Accuracy: correct / float64(max(seen, 1))})
				}
			})
			if err := ctx.Err(); err != nil {
				rec.Stopped = "cancelled"
				rec.Seconds = time.Since(start).Seconds()
				return rec, err
			}
			if err != nil {
				return rec, fmt.Errorf("train epoch %d: %w", epoch+1, err)
			}
		}
		for b := 0; session == nil && b < batches; b++ {
			if err := ctx.Err(); err != nil {
				rec.Stopped = "cancelled"
				rec.Seconds = time.Since(start).Seconds()
				return rec, err
			}
			idx := perm[b*bs : min((b+1)*bs, len(perm))]
			n := len(idx)
			for i, j := range idx {
				copy(xb[i*dim:(i+1)*dim], trainSet.Sample(j))
				yb[i] = trainSet.Y[j]
			}
			if cfg.MaskProb > 0 {
				maskPixels(xb[:n*dim], ds.Shape, cfg.MaskProb, rng)
			}
			for _, p := range params {
				clear(p.Grad)
			}
			_, err := engine.Differentiate(ctx, net, xb[:n*dim], n, engine.ParamGrad, func(first int, logits, dl []float32) {
				rows := len(logits) / k
				softmaxCE(dl, logits, yb[first:first+rows], k, n, lossAt[first:first+rows], hitAt[first:first+rows])
			})
			if err != nil {
				return rec, fmt.Errorf("train epoch %d batch %d: %w", epoch+1, b+1, err)
			}
			for i := range n {
				lossSum += lossAt[i]
				if hitAt[i] {
					correct++
				}
			}
			seen += n
			opt.Step(params, lr)
			if progress != nil {
				progress(Progress{Epoch: epoch + 1, Epochs: cfg.Epochs, Batch: b + 1, Batches: batches,
					Loss: lossSum / float64(seen), Accuracy: correct / float64(seen)})
			}
		}
		net.SetTraining(false)
		e := Epoch{Epoch: epoch + 1, LR: lr, Loss: lossSum / float64(seen), Accuracy: correct / float64(seen)}
		stop := false
		if val != nil {
			ev, err := Evaluate(ctx, net, val, bs)
			if err != nil {
				return rec, fmt.Errorf("train epoch %d validation: %w", epoch+1, err)
			}
			e.ValLoss, e.ValAcc = ev.Loss, ev.Accuracy
			if ev.Loss < best {
				best, sinceBest, rec.BestEpoch = ev.Loss, 0, epoch+1
				bestW = snapshot(params, bestW)
			} else if sinceBest++; cfg.Patience > 0 && sinceBest >= cfg.Patience {
				stop = true
			}
		} else {
			rec.BestEpoch = epoch + 1
		}
		e.Seconds = time.Since(t0).Seconds()
		e.ImagesSec = float64(seen) / e.Seconds
		rec.History = append(rec.History, e)
		if progress != nil {
			progress(Progress{Epoch: epoch + 1, Epochs: cfg.Epochs, Batch: batches, Batches: batches,
				Loss: e.Loss, Accuracy: e.Accuracy, EpochDone: true, Last: &e})
		}
		if stop {
			rec.Stopped = "early-stopping"
			break
		}
	}
	if bestW != nil {
		for i, p := range params {
			copy(p.Data, bestW[i])
		}
	}
	rec.Seconds = time.Since(start).Seconds()
	return rec, nil
}

// maskPixels sets each pixel (all its channels) of a batch to 0 with
// probability p.
func maskPixels(x []float32, shape []int, p float64, rng *rand.Rand) {
	C, hw := shape[0], shape[1]*shape[2]
	for s := 0; s < len(x)/(C*hw); s++ {
		img := x[s*C*hw : (s+1)*C*hw]
		for q := 0; q < hw; q++ {
			if rng.Float64() < p {
				for c := 0; c < C; c++ {
					img[c*hw+q] = 0
				}
			}
		}
	}
}

func checkConfig(c Config) error {
	var errs []error
	if !(c.MaskProb >= 0 && c.MaskProb < 1) {
		errs = append(errs, fmt.Errorf("mask probability %g outside [0, 1)", c.MaskProb))
	}
	if c.Epochs < 0 {
		errs = append(errs, fmt.Errorf("epochs %d is negative", c.Epochs))
	}
	if c.BatchSize < 0 {
		errs = append(errs, fmt.Errorf("batch size %d is negative", c.BatchSize))
	}
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		errs = append(errs, fmt.Errorf("learning rate %g is not a positive number", c.LR))
	}
	if c.ValFraction >= 1 {
		errs = append(errs, fmt.Errorf("validation fraction %g leaves nothing to train on", c.ValFraction))
	}
	if c.Schedule != "constant" && c.Schedule != "cosine" {
		errs = append(errs, fmt.Errorf("unknown schedule %q (constant, cosine)", c.Schedule))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("train config: %w", err)
	}
	return nil
}

func snapshot(ps []engine.Param, dst [][]float32) [][]float32 {
	if dst == nil {
		dst = make([][]float32, len(ps))
	}
	for i, p := range ps {
		dst[i] = append(dst[i][:0], p.Data...)
	}
	return dst
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// crossEntropy writes d(mean loss)/d(logits) into grad and returns the mean
// softmax cross-entropy and the number of correct argmax predictions.
func crossEntropy(grad, logits []float32, y []int, k int) (float64, int) {
	n := len(y)
	loss, hit := make([]float64, n), make([]bool, n)
	softmaxCE(grad, logits, y, k, n, loss, hit)
	var sum float64
	correct := 0
	for i := range n {
		sum += loss[i]
		if hit[i] {
			correct++
		}
	}
	return sum / float64(n), correct
}

// softmaxCE does crossEntropy's work for some rows of a batch of batch
// samples: it writes each row's softmax cross-entropy into loss, whether its
// argmax is its label into hit, and the row's share of d(mean loss)/d(logits)
// into grad.
func softmaxCE(grad, logits []float32, y []int, k, batch int, loss []float64, hit []bool) {
	inv := 1 / float32(batch)
	for i := range y {
		row := logits[i*k : (i+1)*k]
		mx, arg := row[0], 0
		for j, v := range row {
			if v > mx {
				mx, arg = v, j
			}
		}
		hit[i] = arg == y[i]
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v - mx))
		}
		loss[i] = math.Log(s) - float64(row[y[i]]-mx)
		g := grad[i*k : (i+1)*k]
		for j, v := range row {
			g[j] = float32(math.Exp(float64(v-mx))/s) * inv
		}
		g[y[i]] -= inv
	}
}

// Evaluation is a model's loss and accuracy on a dataset.
type Evaluation struct {
	Loss          float64   `json:"loss"`
	Accuracy      float64   `json:"accuracy"`
	ClassAccuracy []float64 `json:"class_accuracy"`
	// Confusion counts the samples of each true class (row) by the class
	// predicted (column).
	Confusion [][]int `json:"confusion"`
	Samples   int     `json:"samples"`
	// Correct says, for each sample in order, whether the model classified
	// it correctly (not written: campaigns keep it per input, see
	// protocol.Units).
	Correct []bool `json:"-"`
}

// Evaluate computes loss, accuracy and per-class accuracy in batches.
func Evaluate(ctx context.Context, net engine.Network, ds *data.Dataset, batch int) (Evaluation, error) {
	return EvaluateEach(ctx, net, ds, batch, nil)
}

// EvaluateEach is Evaluate, handing each sample's logits to each (when not
// nil) in order as they are computed, for what a caller measures of the
// same pass.
func EvaluateEach(ctx context.Context, net engine.Network, ds *data.Dataset, batch int, each func(i int, logits []float32)) (Evaluation, error) {
	if err := ds.Validate(); err != nil {
		return Evaluation{}, fmt.Errorf("evaluate: %w", err)
	}
	if !equal(ds.Shape, net.InputShape()) || len(ds.Classes) != net.Classes() {
		return Evaluation{}, fmt.Errorf("evaluate: %s (%v, %d classes) does not fit %s (%v, %d classes)",
			ds.Name, ds.Shape, len(ds.Classes), net.Arch(), net.InputShape(), net.Classes())
	}
	if batch <= 0 {
		batch = 256
	}
	batch = engine.Batch(ds.Shape, batch)
	k, dim := net.Classes(), ds.Dim()
	grad := make([]float32, batch*k)
	var ev Evaluation
	ev.Confusion = make([][]int, k)
	for c := range ev.Confusion {
		ev.Confusion[c] = make([]int, k)
	}
	for lo := 0; lo < ds.Len(); lo += batch {
		if err := ctx.Err(); err != nil {
			return ev, err
		}
		hi := min(lo+batch, ds.Len())
		logits, err := engine.Logits(ctx, net, ds.X[lo*dim:hi*dim], hi-lo)
		if err != nil {
			return ev, fmt.Errorf("evaluate %s: %w", ds.Name, err)
		}
		l, _ := crossEntropy(grad[:(hi-lo)*k], logits, ds.Y[lo:hi], k)
		ev.Loss += l * float64(hi-lo)
		for i := lo; i < hi; i++ {
			row := logits[(i-lo)*k : (i-lo+1)*k]
			c := engine.Argmax(row)
			ev.Confusion[ds.Y[i]][c]++
			ev.Correct = append(ev.Correct, c == ds.Y[i])
			if each != nil {
				each(i, row)
			}
		}
	}
	n := ds.Len()
	ev.Samples = n
	ev.Loss /= float64(n)
	correct := 0
	ev.ClassAccuracy = make([]float64, k)
	for c, row := range ev.Confusion {
		tot := 0
		for _, v := range row {
			tot += v
		}
		correct += row[c]
		if tot > 0 {
			ev.ClassAccuracy[c] = float64(row[c]) / float64(tot)
		}
	}
	ev.Accuracy = float64(correct) / float64(n)
	return ev, nil
}
