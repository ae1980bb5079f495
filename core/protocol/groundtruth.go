package protocol

import (
	"fmt"
	"math"
	"slices"

	"faithlab/core/perturb"
)

// Agreement is the OpenXAI comparison (Agarwal et al. 2022; GOAR Appendix
// B) of an attribution vector with a known ground-truth feature vector, at
// the top K features by magnitude. All values lie in [0, 1] except RC, a
// correlation in [−1, 1]; higher is better for all.
type Agreement struct {
	K   int     `json:"k"`
	FA  float64 `json:"fa"`  // feature agreement: share of the top-K features found in both
	RA  float64 `json:"ra"`  // rank agreement: share of ranks 1…K held by the same feature
	SA  float64 `json:"sa"`  // sign agreement: share of the top-K found in both with the same sign
	SRA float64 `json:"sra"` // signed rank agreement: same feature, same rank, same sign
	RC  float64 `json:"rc"`  // rank correlation: Spearman's ρ of all features' magnitudes
	PRA float64 `json:"pra"` // pairwise rank agreement: share of pairs among the truth's top K ordered alike
}

// Agree compares attribution a with ground truth g at the top k features.
func Agree(a, g []float32, k int) (Agreement, error) {
	if len(a) != len(g) || len(a) == 0 {
		return Agreement{}, fmt.Errorf("attribution has %d features, ground truth %d", len(a), len(g))
	}
	if k < 1 || k > len(a) {
		return Agreement{}, fmt.Errorf("top-k %d outside [1, %d]", k, len(a))
	}
	for i := range a {
		if math.IsNaN(float64(a[i])) || math.IsNaN(float64(g[i])) {
			return Agreement{}, fmt.Errorf("NaN at feature %d", i)
		}
	}
	abs := func(v []float32) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(math.Abs(float64(x)))
		}
		return out
	}
	ra, rg := perturb.Order(abs(a), true), perturb.Order(abs(g), true)
	ta, tg := ra[:k], rg[:k]
	sign := func(x float32) int {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}
	r := Agreement{K: k}
	for _, f := range ta {
		if slices.Contains(tg, f) {
			r.FA++
			if sign(a[f]) == sign(g[f]) {
				r.SA++
			}
		}
	}
	for j := 0; j < k; j++ {
		if ta[j] == tg[j] {
			r.RA++
			if sign(a[ta[j]]) == sign(g[tg[j]]) {
				r.SRA++
			}
		}
	}
	r.FA, r.SA, r.RA, r.SRA = r.FA/float64(k), r.SA/float64(k), r.RA/float64(k), r.SRA/float64(k)
	fa, fg := make([]float64, len(a)), make([]float64, len(a))
	for i := range a {
		fa[i], fg[i] = math.Abs(float64(a[i])), math.Abs(float64(g[i]))
	}
	r.RC = Spearman(fa, fg)
	var pairs, agree float64
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			p, q := tg[i], tg[j]
			pairs++
			if (fa[p] > fa[q]) == (fg[p] > fg[q]) && (fa[p] == fa[q]) == (fg[p] == fg[q]) {
				agree++
			}
		}
	}
	r.PRA = 1
	if pairs > 0 {
		r.PRA = agree / pairs
	}
	return r, nil
}

// MeanAgreement averages Agree over n samples' maps (n×d) against one
// ground truth per sample (n×d) or one shared by all (d).
func MeanAgreement(maps, truth []float32, n, k int) (Agreement, error) {
	if n < 1 || len(maps)%n != 0 {
		return Agreement{}, fmt.Errorf("%d map values are not %d maps", len(maps), n)
	}
	d := len(maps) / n
	shared := len(truth) == d
	if !shared && len(truth) != n*d {
		return Agreement{}, fmt.Errorf("ground truth of %d values for %d maps of %d features", len(truth), n, d)
	}
	var m Agreement
	for i := 0; i < n; i++ {
		g := truth
		if !shared {
			g = truth[i*d : (i+1)*d]
		}
		a, err := Agree(maps[i*d:(i+1)*d], g, k)
		if err != nil {
			return Agreement{}, fmt.Errorf("sample %d: %w", i, err)
		}
		m.FA += a.FA / float64(n)
		m.RA += a.RA / float64(n)
		m.SA += a.SA / float64(n)
		m.SRA += a.SRA / float64(n)
		m.RC += a.RC / float64(n)
		m.PRA += a.PRA / float64(n)
	}
	m.K = k
	return m, nil
}
