// Package bench measures Faithlab's engine on the same work as the PyTorch
// peer script (shared/bench/torch_peer.py): the same models, batch sizes and
// figure names, so that `make bench-compare` can divide one by the other.
// Results are returned as values; the CLI prints them as JSON lines.
package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"faithlab/core/attr"
	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/engine/native"
	"faithlab/core/model"
	"faithlab/core/optim"
	"faithlab/core/perturb"
	"faithlab/core/protocol"
)

// Result is one figure, named as the peer names it.
type Result struct {
	Bench   string  `json:"bench"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	Peer    string  `json:"peer"`
	Threads int     `json:"threads"`
	Kernel  string  `json:"kernel"`
	Removed float64 `json:"removed,omitempty"` // road_impute: fraction of pixels removed
}

// Key names a figure uniquely: the bench name, and the removed fraction for
// the imputation figures, which the peer reports once per fraction.
func (r Result) Key() string {
	if r.Removed > 0 {
		return fmt.Sprintf("%s@%g", r.Bench, r.Removed)
	}
	return r.Bench
}

// Options say how long to time each figure.
type Options struct {
	MinSeconds float64 // timing window per figure (peer: 3, --quick 1)
	Kernel     gemm.Kernel
	// Engine, when set, runs the networks there (the torch engine, for
	// the bridge's cost against the peer's own figures); nil: native.
	Engine *model.Engine
}

// label names what computed a figure: the GEMM kernel and the
// elementwise ones (native.Kernels), or the engine.
func (o Options) label() string {
	if o.Engine.Kind() != "native" {
		return o.Engine.String()
	}
	return o.Kernel.Name() + "+" + native.Kernels()
}

// rate calls fn warm times, then as often as fits in minS seconds (at most
// maxCalls), and returns items per second, as the peer's rate() does.
func rate(fn func() error, items, warm int, minS float64, maxCalls int) (float64, error) {
	for range warm {
		if err := fn(); err != nil {
			return 0, err
		}
	}
	n, t0 := 0, time.Now()
	for n < maxCalls {
		if err := fn(); err != nil {
			return 0, err
		}
		n++
		if time.Since(t0).Seconds() >= minS {
			break
		}
	}
	return float64(n*items) / time.Since(t0).Seconds(), nil
}

// CNN measures the goar-cnn figures on Fashion-MNIST training images:
// cnn_train (Adam step, batch 256) and cnn_saliency (input gradient of the
// top logit, batch 256).
func CNN(ctx context.Context, ds *data.Dataset, opt Options, emit func(Result)) error {
	const B = 256
	nat, err := native.New("goar-cnn", ds.Shape, len(ds.Classes), opt.Kernel)
	if err != nil {
		return err
	}
	nat.Init(0)
	net, err := opt.Engine.Move(ctx, nat)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(0, 0))
	perm := rng.Perm(ds.Len())
	dim := ds.Dim()
	xb := make([]float32, B*dim)
	yb := make([]int, B)
	i := 0
	batch := func() {
		i = (i + 1) % (ds.Len() / B)
		for k, j := range perm[i*B : (i+1)*B] {
			copy(xb[k*dim:(k+1)*dim], ds.Sample(j))
			yb[k] = ds.Y[j]
		}
	}
	k := net.Classes()
	adam := optim.NewAdam(0)
	params := net.Params()
	train := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch()
		for _, p := range params {
			clear(p.Grad)
		}
		_, err := engine.Differentiate(ctx, net, xb, B, engine.ParamGrad, func(first int, logits, d []float32) {
			softmaxCE(d, logits, yb[first:first+len(logits)/k], k, B)
		})
		if err != nil {
			return err
		}
		adam.Step(params, 3e-4)
		return nil
	}
	v, err := rate(train, B, 2, opt.MinSeconds, 200)
	if err != nil {
		return fmt.Errorf("cnn_train: %w", err)
	}
	emit(result("cnn_train", v, "img/s", opt.label()))
	saliency := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch()
		_, err := engine.Differentiate(ctx, net, xb, B, engine.InputGrad, func(_ int, logits, d []float32) {
			topLogitGrad(d, logits, k)
		})
		return err
	}
	v, err = rate(saliency, B, 2, opt.MinSeconds, 200)
	if err != nil {
		return fmt.Errorf("cnn_saliency: %w", err)
	}
	emit(result("cnn_saliency", v, "img/s", opt.label()))

	// IG (25 right-Riemann steps, zero baseline) and SmoothGrad (15 draws,
	// σ 0.15) of the predicted class for 16 images, all inner samples in
	// one engine call, as the peer does.
	const n = 16
	explain := func(m attr.Method) func() error {
		return func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			batch()
			x := xb[:n*dim]
			target, err := engine.Predicted(ctx, net, x, n, n)
			if err != nil {
				return err
			}
			_, err = m.Attribute(ctx, net, attr.Input{X: x, N: n, Shape: ds.Shape, Target: target})
			return err
		}
	}
	for _, f := range []struct {
		name string
		m    attr.Method
	}{
		{"cnn_ig25", attr.IntegratedGradients{Steps: 25, Chunk: 25 * n}},
		{"cnn_smoothgrad15", attr.SmoothGrad{Samples: 15, NoiseFrac: 0.15, Chunk: 15 * n}},
	} {
		v, err := rate(explain(f.m), n, 2, opt.MinSeconds, 200)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		emit(result(f.name, v, "img/s", opt.label()))
	}

	// MoRF deletion curves over a 7×7 patch grid (4×4-pixel patches), zero
	// reference, probability of the predicted class: 50 forward passes per
	// image, all steps of the 16 images in one batch, random maps, as the peer.
	feats, err := perturb.NewFeatures(ds.Shape[1], ds.Shape[2], 7)
	if err != nil {
		return err
	}
	counts := make([]int, feats.N()+1)
	for j := range counts {
		counts[j] = j
	}
	curves := protocol.Curves{Net: net, Shape: ds.Shape, Features: feats, Reference: perturb.Zero{},
		Counts: counts, Prob: true, Chunk: n * len(counts)}
	scores := make([]float32, feats.N())
	deletion := func() error {
		batch()
		x := xb[:n*dim]
		target, err := engine.Predicted(ctx, net, x, n, n)
		if err != nil {
			return err
		}
		orders := make([][]int, n)
		for i := range orders {
			for j := range scores {
				scores[j] = rng.Float32()
			}
			orders[i] = perturb.Order(scores, true)
		}
		_, err = curves.Run(ctx, x, target, orders)
		return err
	}
	v, err = rate(deletion, n, 2, opt.MinSeconds, 200)
	if err != nil {
		return fmt.Errorf("cnn_deletion49: %w", err)
	}
	emit(result("cnn_deletion49", v, "img/s", opt.label()))
	return nil
}

// Road measures ROAD's noisy linear imputation (noise 0.01) of 28×28
// Fashion-MNIST images under fresh random masks removing 10, 50 and 90 % of
// the pixels, as the peer's road_impute_28x28; the peer solves one image at
// a time on one core, Faithlab 256 at a time on all cores.
func Road(ctx context.Context, ds *data.Dataset, opt Options, emit func(Result)) error {
	const B, pool = 256, 64
	dim, hw := ds.Dim(), ds.Shape[1]*ds.Shape[2]
	imgs := make([]float32, B*dim)
	keeps := make([]float32, B*hw)
	rng := rand.New(rand.NewPCG(0, 0))
	for _, frac := range []float64{0.1, 0.5, 0.9} {
		call := uint64(0)
		cut := uint64(frac * (1 << 63) * 2) // P(Uint64 < cut) = frac
		impute := func() error {
			for i := 0; i < B; i++ {
				copy(imgs[i*dim:(i+1)*dim], ds.Sample(i%pool))
				for p := 0; p < hw; p++ {
					keeps[i*hw+p] = 0
					if rng.Uint64() >= cut {
						keeps[i*hw+p] = 1
					}
				}
			}
			call++
			return perturb.FillAll(ctx, perturb.ROAD{Noise: 0.01}, imgs, ds.Shape, keeps, call, 0)
		}
		v, err := rate(impute, B, 1, opt.MinSeconds, 200)
		if err != nil {
			return fmt.Errorf("road_impute_28x28 at %g removed: %w", frac, err)
		}
		r := result("road_impute_28x28", v, "img/s", opt.Kernel.Name())
		r.Removed = frac
		emit(r)
	}
	return nil
}

// GEMM measures the ceiling the networks' passes are judged against: the
// GEMM kernel alone on C = A·B of 1024×1024 float32 matrices, in GFLOP/s
// (2·1024³ per product), on every core as the engine splits a whole-batch
// GEMM (gemm_1024) and on one core (gemm_1024_1core). A pass of goar-cnn's
// small GEMMs and elementwise layers stays below it; how far below says
// what a faster kernel could still gain. The peer has no such figure.
func GEMM(ctx context.Context, opt Options, emit func(Result)) error {
	const n = 1024
	rng := rand.New(rand.NewPCG(0, 1))
	a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	for _, k := range []struct {
		name string
		kern gemm.Kernel
	}{{"gemm_1024", opt.Kernel}, {"gemm_1024_1core", gemm.Serial(opt.Kernel)}} {
		v, err := rate(func() error {
			k.kern.Sgemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n)
			return ctx.Err()
		}, 1, 1, opt.MinSeconds, 1000)
		if err != nil {
			return err
		}
		emit(result(k.name, v*2*n*n*n/1e9, "GFLOP/s", k.kern.Name()))
	}
	return nil
}

func result(name string, v float64, unit, kernel string) Result {
	return Result{Bench: name, Value: float64(int(v*1000+0.5)) / 1000, Unit: unit, Peer: "faithlab",
		Threads: runtime.GOMAXPROCS(0), Kernel: kernel}
}

// topLogitGrad sets d = one-hot of each row's largest logit: the gradient of
// Σ max logits, as the peer's m(x).max(1).values.sum().backward().
func topLogitGrad(d, logits []float32, k int) {
	clear(d)
	for r := 0; r*k < len(logits); r++ {
		row := logits[r*k : (r+1)*k]
		arg := 0
		for j, v := range row {
			if v > row[arg] {
				arg = j
			}
		}
		d[r*k+arg] = 1
	}
}

// softmaxCE writes into d the gradient of the mean cross-entropy over a
// batch of n samples with respect to the logits of some of its rows.
func softmaxCE(d, logits []float32, y []int, k, batch int) {
	engine.Softmax(d, logits, k)
	n := float32(batch)
	for i, c := range y {
		for j := 0; j < k; j++ {
			d[i*k+j] /= n
		}
		d[i*k+c] -= 1 / n
	}
}

// UNet measures unet-s as the peer does: unet_train (one Adam step of the
// DDPM ε-prediction loss, batch 64) and unet_ddim_step (one deterministic
// DDIM update from t=500 to 460, batch 64).
func UNet(ctx context.Context, ds *data.Dataset, opt Options, emit func(Result)) error {
	const B = 64
	nat, err := native.NewUNet(ds.Shape, opt.Kernel)
	if err != nil {
		return err
	}
	nat.Init(0)
	den, err := opt.Engine.MoveDenoiser(ctx, nat)
	if err != nil {
		return err
	}
	net, ok := den.(engine.DenoiserGradienter)
	if !ok {
		return fmt.Errorf("unet_train: %s runs no whole-batch gradient", opt.label())
	}
	abar := make([]float64, 1000)
	prod := 1.0
	for i := range abar {
		beta := 1e-4 + (0.02-1e-4)*float64(i)/999
		prod *= 1 - beta
		abar[i] = prod
	}
	rng := rand.New(rand.NewPCG(0, 1))
	dim := ds.Dim()
	xt := make([]float32, B*dim)
	eps := make([]float32, B*dim)
	ts := make([]int, B)
	adam := optim.NewAdam(0)
	params := net.Params()
	train := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for s := 0; s < B; s++ {
			x0 := ds.Sample(rng.IntN(ds.Len()))
			ts[s] = rng.IntN(1000)
			a, b := float32(math.Sqrt(abar[ts[s]])), float32(math.Sqrt(1-abar[ts[s]]))
			for j, v := range x0 {
				e := float32(rng.NormFloat64())
				eps[s*dim+j] = e
				xt[s*dim+j] = a*(2*v-1) + b*e
			}
		}
		for _, p := range params {
			clear(p.Grad)
		}
		// The mean-squared error's gradient, row by row as the pieces come.
		_, err := net.Gradient(xt, ts, B, engine.ParamGrad, func(first int, pred, d []float32) {
			e := eps[first*dim:]
			for i, v := range pred {
				d[i] = 2 * (v - e[i]) / float32(B*dim)
			}
		})
		if err != nil {
			return err
		}
		adam.Step(params, 2e-4)
		return nil
	}
	v, err := rate(train, B, 2, opt.MinSeconds, 200)
	if err != nil {
		return fmt.Errorf("unet_train: %w", err)
	}
	emit(result("unet_train", v, "img/s", opt.label()))
	for i := range xt {
		xt[i] = float32(rng.NormFloat64())
	}
	t, s := 500, 460
	for i := range ts {
		ts[i] = t
	}
	next := make([]float32, len(xt))
	step := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, err := net.Forward(xt, ts, B)
		if err != nil {
			return err
		}
		at, as := math.Sqrt(abar[t]), math.Sqrt(abar[s])
		bt, bs := math.Sqrt(1-abar[t]), math.Sqrt(1-abar[s])
		for i := range xt {
			x0 := (float64(xt[i]) - bt*float64(e[i])) / at
			next[i] = float32(as*x0 + bs*float64(e[i]))
		}
		return nil
	}
	v, err = rate(step, B, 2, opt.MinSeconds, 200)
	if err != nil {
		return fmt.Errorf("unet_ddim_step: %w", err)
	}
	emit(result("unet_ddim_step", v, "img-steps/s", opt.label()))
	return nil
}
