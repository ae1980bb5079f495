package attr

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"faithlab/core/engine"
)

// KernelSHAP estimates Shapley values by weighted linear regression over
// coalitions (Lundberg and Lee 2017, Theorem 2): coalition z ∈ {0,1}^M has
// Shapley-kernel weight (M−1)/(C(M,|z|)·|z|·(M−|z|)), features outside z take
// the baseline's values, and efficiency Σφ = f(x) − f(baseline) is imposed
// exactly by eliminating one feature. With 2^M − 2 ≤ Samples every
// coalition is used and the values are exact Shapley values; otherwise
// Samples coalitions are drawn from the kernel in complementary pairs.
// Features are the input values (tabular data, Grid 0) or the patches of a
// Grid×Grid partition of the image, whose value is spread evenly over its
// pixels (maps n×1×H×W). Defaults: 2048 samples, zero baseline.
type KernelSHAP struct {
	Samples  int       `json:"samples" doc:"coalitions sampled (in complementary pairs)" range:"[2,]"`
	Grid     int       `json:"grid" doc:"patch grid side: features are the grid×grid patches (0: every input value)" range:"[0,]"`
	Baseline string    `json:"baseline" doc:"reference input x′, named as removal references are: zero, mean (the sample's channel means), blur[:σ] (the sample blurred; σ 5 pixels by default) or dataset-mean (the training set's channel means)"`
	Train    []float32 `json:"-"` // training inputs (n×C×H×W), for the dataset-mean baseline
	Seed     uint64    `json:"-"`
	Chunk    int       `json:"-"`
}

// Check implements param.Checker.
func (k KernelSHAP) Check() error { return checkBaseline(k.Baseline, k.Train) }

func (k KernelSHAP) defaults() KernelSHAP {
	if k.Samples == 0 {
		k.Samples = 2048
	}
	if k.Baseline == "" {
		k.Baseline = "zero"
	}
	return k
}

// Name implements Method.
func (KernelSHAP) Name() string { return "KernelSHAP" }

// Settings implements Method.
func (k KernelSHAP) Settings() map[string]any {
	k = k.defaults()
	return map[string]any{"samples": k.Samples, "grid": k.Grid, "baseline": k.Baseline, "seed": k.Seed}
}

// Attribute implements Method.
func (k KernelSHAP) Attribute(ctx context.Context, net engine.Network, in Input) (Maps, error) {
	k = k.defaults()
	C, H, W := in.Shape[0], in.Shape[1], in.Shape[2]
	dim := in.Dim()
	// feature[j] is the feature that input value j belongs to.
	feature := make([]int, dim)
	M := dim
	out := Maps{Data: make([]float32, len(in.X)), Shape: append([]int{in.N}, in.Shape...)}
	if k.Grid > 0 {
		if k.Grid > H || k.Grid > W {
			return Maps{}, fmt.Errorf("grid %d×%d does not fit %d×%d images", k.Grid, k.Grid, H, W)
		}
		M = k.Grid * k.Grid
		for c := 0; c < C; c++ {
			for y := 0; y < H; y++ {
				for x := 0; x < W; x++ {
					feature[(c*H+y)*W+x] = (y*k.Grid/H)*k.Grid + x*k.Grid/W
				}
			}
		}
		out = Maps{Data: make([]float32, in.N*H*W), Shape: []int{in.N, 1, H, W}}
	} else {
		for j := range feature {
			feature[j] = j
		}
	}
	if M < 2 {
		return Maps{}, fmt.Errorf("%d features: KernelSHAP needs at least 2", M)
	}
	coal := coalitions(M, k.Samples, k.Seed)
	bases, err := baselines(k.Baseline, k.Train, in)
	if err != nil {
		return Maps{}, err
	}
	for i := 0; i < in.N; i++ {
		x, base := in.Sample(i), bases[i*dim:(i+1)*dim]
		// Row 0: the full input; row 1: the baseline; then every coalition.
		rows := 2 + len(coal.z)
		fz := make([]float64, rows)
		err := logitsOf(ctx, net, rows, k.Chunk, func(r int, dst []float32) {
			for j := range dst {
				keep := r == 0 || (r >= 2 && coal.z[r-2][feature[j]])
				if keep {
					dst[j] = x[j]
				} else {
					dst[j] = base[j]
				}
			}
		}, in.Target[i], func(r int, v float64) { fz[r] = v })
		if err != nil {
			return Maps{}, err
		}
		phi, err := solveShapley(coal, fz[2:], fz[0], fz[1], M)
		if err != nil {
			return Maps{}, err
		}
		if k.Grid > 0 {
			counts := make([]int, M)
			for p := 0; p < H*W; p++ {
				counts[feature[p]]++
			}
			for p := 0; p < H*W; p++ {
				out.Data[i*H*W+p] = float32(phi[feature[p]] / float64(counts[feature[p]]))
			}
		} else {
			for j := 0; j < dim; j++ {
				out.Data[i*dim+j] = float32(phi[j])
			}
		}
	}
	return out, nil
}

// coalitionSet is the regression design: coalitions and their weights.
type coalitionSet struct {
	z [][]bool
	w []float64
}

// coalitions enumerates all 2^M − 2 proper coalitions with kernel weights
// when they number at most samples, else draws samples of them (sizes from
// the kernel's distribution, members uniformly, in complementary pairs),
// each of weight 1.
func coalitions(M, samples int, seed uint64) coalitionSet {
	var cs coalitionSet
	if M < 31 && (1<<M)-2 <= samples {
		for m := 1; m < 1<<M-1; m++ {
			z := make([]bool, M)
			s := 0
			for p := 0; p < M; p++ {
				if m&(1<<p) != 0 {
					z[p] = true
					s++
				}
			}
			cs.z = append(cs.z, z)
			cs.w = append(cs.w, float64(M-1)/(binom(M, s)*float64(s*(M-s))))
		}
		return cs
	}
	// P(size s) ∝ (M−1)/(s(M−s)), s = 1..M−1.
	cdf := make([]float64, M)
	for s := 1; s < M; s++ {
		cdf[s] = cdf[s-1] + 1/float64(s*(M-s))
	}
	rng := rand.New(rand.NewPCG(seed, 0x5a9))
	for len(cs.z)+2 <= samples {
		u := rng.Float64() * cdf[M-1]
		s := 1
		for cdf[s] < u {
			s++
		}
		z := make([]bool, M)
		for _, p := range rng.Perm(M)[:s] {
			z[p] = true
		}
		comp := make([]bool, M)
		for p := range z {
			comp[p] = !z[p]
		}
		cs.z = append(cs.z, z, comp)
		cs.w = append(cs.w, 1, 1)
	}
	return cs
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// solveShapley fits f(z) − f(∅) ≈ z·φ by weighted least squares with
// Σφ = f(x) − f(∅), eliminating φ_M−1.
func solveShapley(cs coalitionSet, fz []float64, fx, f0 float64, M int) ([]float64, error) {
	delta := fx - f0
	n := len(cs.z)
	A := mat.NewDense(n, M-1, nil)
	b := mat.NewVecDense(n, nil)
	for r, z := range cs.z {
		sw := math.Sqrt(cs.w[r])
		last := 0.0
		if z[M-1] {
			last = 1
		}
		for p := 0; p < M-1; p++ {
			zp := 0.0
			if z[p] {
				zp = 1
			}
			A.Set(r, p, sw*(zp-last))
		}
		b.SetVec(r, sw*(fz[r]-f0-last*delta))
	}
	var qr mat.QR
	qr.Factorize(A)
	var sol mat.VecDense
	if err := qr.SolveVecTo(&sol, false, b); err != nil {
		return nil, fmt.Errorf("KernelSHAP regression: %w (too few samples for %d features?)", err, M)
	}
	phi := make([]float64, M)
	sum := 0.0
	for p := 0; p < M-1; p++ {
		phi[p] = sol.AtVec(p)
		sum += phi[p]
	}
	phi[M-1] = delta - sum
	return phi, nil
}

// logitsOf runs m generated inputs forward in chunks and hands each
// one's target logit to use.
func logitsOf(ctx context.Context, net engine.Network, m, chunk int, fill func(i int, dst []float32), target int, use func(i int, v float64)) error {
	chunk = engine.Batch(net.InputShape(), cmp.Or(max(chunk, 0), 256))
	dim := engine.Size(net.InputShape())
	k := net.Classes()
	xs := make([]float32, min(chunk, m)*dim)
	for lo := 0; lo < m; lo += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+chunk, m)
		fillRows(xs, dim, lo, hi, fill)
		logits, err := net.Forward(xs[:(hi-lo)*dim], hi-lo)
		if err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			use(i, float64(logits[(i-lo)*k+target]))
		}
	}
	return nil
}
