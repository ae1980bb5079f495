package protocol

import (
	"context"
	"fmt"
	"math"

	"faithlab/core/engine"
)

// Shift is how far a protocol's perturbed inputs lie from the data they
// were made from, measured as the FUD paper measures it (§4.3.1–4.3.2,
// Tables 2 and 3): out-of-distribution detection from the model's own view
// — how well the evaluated model's energy score (Liu et al. 2020) tells
// perturbed inputs from clean ones: AUROC (0.5: not at all; 1: always),
// the false positive rate at 95 % true positive rate (the clean inputs
// being the positives: 0.95 for indistinguishable sets, lower as they
// separate), AUPR-In and AUPR-Out (average precision with the clean, or
// the perturbed, inputs as positives: 0.5 for indistinguishable sets of
// equal size) — and image quality against the originals: PSNR (dB), SSIM,
// MS-SSIM and GMSD (lower is closer). A protocol whose perturbed inputs
// are easy to tell apart scores the model off its data.
type Shift struct {
	AUROC, FPR95, AUPRIn, AUPROut float64
	PSNR, SSIM, MSSSIM, GMSD      float64
	// Image says the inputs are images (at least 3×3): PSNR, SSIM, MS-SSIM
	// and GMSD, image-quality measures, are reported for images only.
	Image bool
}

// energies returns each input's energy score −log Σ exp(logit): higher for
// inputs the model finds less familiar.
func energies(ctx context.Context, net engine.Network, x []float32, n int) ([]float64, error) {
	e := make([]float64, n)
	err := Stage(ctx, stageShift, func(ctx context.Context) error {
		return engine.EachLogits(ctx, net, x, n, 0, func(i int, row []float32) { e[i] = energy(row) })
	})
	if err != nil {
		return nil, fmt.Errorf("energy scores: %w", err)
	}
	return e, nil
}

// energy is one input's energy score from its logits.
func energy(logits []float32) float64 {
	mx := float64(logits[0])
	for _, v := range logits {
		mx = max(mx, float64(v))
	}
	var s float64
	for _, v := range logits {
		s += math.Exp(float64(v) - mx)
	}
	return -(mx + math.Log(s))
}

// EnergyAUROC is the AUROC with which net's energy score tells the nOut
// inputs out from the nIn inputs in (0.5: not at all, 1: always; FUD
// §4.3.1): how far from the model's data a set of inputs lies, as the
// model itself sees it.
func EnergyAUROC(ctx context.Context, net engine.Network, in []float32, nIn int, out []float32, nOut int) (float64, error) {
	ei, err := energies(ctx, net, in, nIn)
	if err != nil {
		return 0, err
	}
	eo, err := energies(ctx, net, out, nOut)
	if err != nil {
		return 0, err
	}
	return AUROC(eo, ei), nil
}

// ssimImages is how many images SSIM averages over: a thousand fix the
// mean well enough to compare protocols, and all of a 10 000-image test set
// would add seconds per rate.
const ssimImages = 1000

// measureShift compares n perturbed inputs with the clean ones they came
// from (whose energies are cleanEnergy). shape is one input's C, H, W;
// SSIM, MS-SSIM and GMSD (over the first ssimImages, each channel apart)
// need images at least 3×3 and are NaN otherwise (tabular rows). The data
// range of the quality measures is the clean inputs' max − min. PSNR is NaN
// for perturbed inputs identical to the clean ones (GOAR at strength 0
// without projection): infinite, it would swamp any mean.
func measureShift(ctx context.Context, net engine.Network, cleanEnergy []float64, clean, perturbed []float32, n int, shape []int) (Shift, error) {
	return measureShiftOf(ctx, net, nil, cleanEnergy, clean, perturbed, n, shape)
}

// measureShiftOf is measureShift where the caller's own pass of net over
// the perturbed inputs measured their energies (pe; nil: measured here).
func measureShiftOf(ctx context.Context, net engine.Network, pe, cleanEnergy []float64, clean, perturbed []float32, n int, shape []int) (Shift, error) {
	return staged(ctx, stageShift, func(ctx context.Context) (Shift, error) {
		st := newShiftStream(net, cleanEnergy, clean, n, shape)
		if pe != nil {
			st.pe = pe[:n]
		}
		return st.all(ctx, perturbed)
	})
}

// all adds the n inputs of perturbed and measures them.
func (s *shiftStream) all(ctx context.Context, perturbed []float32) (Shift, error) {
	for i := range s.n {
		if err := s.add(ctx, perturbed[i*s.dim:(i+1)*s.dim]); err != nil {
			return Shift{}, err
		}
	}
	return s.shift(ctx)
}

// shiftStream measures the Shift of n perturbed inputs handed to it one at
// a time, in order, keeping engine.Batch of them at once rather than all n
// (Sensitivity-N measures a copy of every image at each N): the same
// energy passes, cut where the engine cuts them, and the same sums in the
// same order as over all n at once.
type shiftStream struct {
	net         engine.Network
	cleanEnergy []float64
	clean       []float32
	shape       []int
	n, dim      int
	span        float64
	buf         []float32    // inputs not yet measured
	k, done     int          // their count; inputs measured
	pe          []float64    // the perturbed inputs' energies: measured as they come, or all given ahead
	se          float64      // Σ (perturbed − clean)²
	q           [][3]float64 // each plane's SSIM, MS-SSIM and GMSD, over the first ssimImages inputs
}

func newShiftStream(net engine.Network, cleanEnergy []float64, clean []float32, n int, shape []int) *shiftStream {
	dim := engine.Size(shape)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range clean[:n*dim] {
		lo, hi = min(lo, float64(v)), max(hi, float64(v))
	}
	rows := min(n, engine.Batch(shape, 1024)) // where engine.EachLogits cuts the energy passes
	return &shiftStream{net: net, cleanEnergy: cleanEnergy, clean: clean, shape: shape, n: n, dim: dim,
		span: max(hi-lo, 1e-12), buf: make([]float32, max(1, rows)*dim), pe: make([]float64, 0, n)}
}

// add takes the next perturbed input (copied).
func (s *shiftStream) add(ctx context.Context, x []float32) error {
	copy(s.buf[s.k*s.dim:(s.k+1)*s.dim], x)
	s.k++
	if s.k*s.dim == len(s.buf) {
		return s.flush(ctx)
	}
	return nil
}

// addWith takes the next perturbed input (copied) with its energy, from
// the caller's own pass: a stream is fed by add or by addWith, not both.
func (s *shiftStream) addWith(ctx context.Context, x []float32, e float64) error {
	s.pe = append(s.pe, e)
	return s.add(ctx, x)
}

// flush measures the inputs held.
func (s *shiftStream) flush(ctx context.Context) error {
	if s.k == 0 {
		return nil
	}
	return Stage(ctx, stageShift, func(ctx context.Context) error {
		held := s.buf[:s.k*s.dim]
		if len(s.pe) == s.done { // not given ahead: measured here
			e, err := energies(ctx, s.net, held, s.k)
			if err != nil {
				return err
			}
			s.pe = append(s.pe, e...)
		}
		clean := s.clean[s.done*s.dim : (s.done+s.k)*s.dim]
		for i, v := range held {
			d := float64(v - clean[i])
			s.se += d * d
		}
		if c, h, w := s.shape[0], s.shape[1], s.shape[2]; h >= 3 && w >= 3 && s.done < ssimImages {
			// Each plane on every core, kept in order: the same sums on
			// any number of cores.
			planes := (min(s.done+s.k, ssimImages) - s.done) * c
			q := make([][3]float64, planes)
			eachChunk(planes, func(lo, hi int) {
				for p := lo; p < hi; p++ {
					a, b := clean[p*h*w:(p+1)*h*w], held[p*h*w:(p+1)*h*w]
					ss, ms := ssimAndMS(a, b, h, w, s.span)
					q[p] = [3]float64{ss, ms, gmsd(a, b, h, w, s.span)}
				}
			})
			s.q = append(s.q, q...)
		}
		s.done += s.k
		s.k = 0
		return nil
	})
}

// shift is the Shift of the n inputs, once all have been added.
func (s *shiftStream) shift(ctx context.Context) (Shift, error) {
	if err := s.flush(ctx); err != nil {
		return Shift{}, err
	}
	if s.done != s.n {
		return Shift{}, fmt.Errorf("shift diagnostics: %d of %d inputs measured", s.done, s.n)
	}
	n, ce, pe := s.n, s.cleanEnergy[:s.n], s.pe
	r := Shift{AUROC: AUROC(pe, s.cleanEnergy), FPR95: FPRAtTPR(ce, pe, 0.95),
		AUPRIn: AveragePrecision(negated(ce), negated(pe)), AUPROut: AveragePrecision(pe, ce),
		SSIM: math.NaN(), MSSSIM: math.NaN(), GMSD: math.NaN(),
		PSNR: math.NaN()}
	if s.se > 0 { // identical inputs have no error: their PSNR is infinite, left undefined
		r.PSNR = 10 * math.Log10(s.span*s.span/(s.se/float64(n*s.dim)))
	}
	if h, w := s.shape[1], s.shape[2]; h >= 3 && w >= 3 {
		r.Image = true
		var sum, ms, gm float64
		for _, v := range s.q {
			sum, ms, gm = sum+v[0], ms+v[1], gm+v[2]
		}
		m := float64(len(s.q))
		r.SSIM, r.MSSSIM, r.GMSD = sum/m, ms/m, gm/m
	}
	return r, nil
}

// ssim is the structural similarity of two h×w images (Wang et al. 2004):
// local statistics under an 11×11 Gaussian window of σ 1.5 (smaller where
// the image is), K1 0.01, K2 0.03, averaged over the positions where the
// window lies inside the image.
func ssim(x, y []float32, h, w int, span float64) float64 {
	s, _ := ssimCS(x, y, h, w, span)
	return s
}

// ssimCS is ssim and the mean of its contrast–structure term alone,
// (2σ_xy + C2)/(σ_x² + σ_y² + C2), which MS-SSIM takes at its finer scales.
func ssimCS(x, y []float32, h, w int, span float64) (float64, float64) {
	size := min(11, h, w)
	if size%2 == 0 {
		size--
	}
	g := make([]float64, size)
	var gs float64
	for i := range g {
		d := float64(i - size/2)
		g[i] = math.Exp(-d * d / (2 * 1.5 * 1.5))
		gs += g[i]
	}
	for i := range g {
		g[i] /= gs
	}
	// The five local moments, filtered along rows then along columns.
	oh, ow := h-size+1, w-size+1
	rows := make([][]float64, 5)
	for m := range rows {
		rows[m] = make([]float64, h*ow)
	}
	for r := range h {
		for c := range ow {
			var a, b, aa, bb, ab float64
			for k, wt := range g {
				u, v := float64(x[r*w+c+k]), float64(y[r*w+c+k])
				a += wt * u
				b += wt * v
				aa += wt * u * u
				bb += wt * v * v
				ab += wt * u * v
			}
			i := r*ow + c
			rows[0][i], rows[1][i], rows[2][i], rows[3][i], rows[4][i] = a, b, aa, bb, ab
		}
	}
	// Then along columns, an output row at a time: each moment's row of
	// sums gathers the window's rows in order (the sums of a pixel at a
	// time, in the same order, read eleven rows of five planes apart).
	c1, c2 := 0.01*span*0.01*span, 0.03*span*0.03*span
	var sum, cs float64
	var mom [5][]float64
	for m := range mom {
		mom[m] = make([]float64, ow)
	}
	for r := range oh {
		for m := range mom {
			acc := mom[m]
			clear(acc)
			for k, wt := range g {
				for c, v := range rows[m][(r+k)*ow : (r+k+1)*ow] {
					acc[c] += wt * v
				}
			}
		}
		for c := range ow {
			mx, my := mom[0][c], mom[1][c]
			vx, vy, cxy := mom[2][c]-mx*mx, mom[3][c]-my*my, mom[4][c]-mx*my
			sum += (2*mx*my + c1) * (2*cxy + c2) / ((mx*mx + my*my + c1) * (vx + vy + c2))
			cs += (2*cxy + c2) / (vx + vy + c2)
		}
	}
	return sum / float64(oh*ow), cs / float64(oh*ow)
}
