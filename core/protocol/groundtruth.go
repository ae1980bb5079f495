package protocol

import (
	"context"
	"fmt"
	"math"
	"slices"

	"faithlab/core/engine"
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
	RC  float64 `json:"rc"`  // rank correlation: Spearman's ρ of all features' magnitudes, NaN when either is constant
	PRA float64 `json:"pra"` // pairwise rank agreement: share of pairs among the truth's top K ordered alike
	// Cos is the cosine of the angle between attribution and truth, in
	// [−1, 1]: GOAR §5.1's closeness to the ground-truth direction, defined
	// also where the truth weighs every feature alike and RC is not.
	Cos float64 `json:"cos"`
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
	// Where the truth ties within its top k+1 magnitudes, its top-k set or
	// ranks are not unique (the Gaussian mixture's truth weighs every feature
	// alike): these four would measure the tie-break, not the map.
	for j := 1; j < min(k+1, len(g)); j++ {
		if abs32(g[rg[j]]) == abs32(g[rg[j-1]]) {
			r.FA, r.SA, r.RA, r.SRA = math.NaN(), math.NaN(), math.NaN(), math.NaN()
			break
		}
	}
	fa, fg := make([]float64, len(a)), make([]float64, len(a))
	for i := range a {
		fa[i], fg[i] = math.Abs(float64(a[i])), math.Abs(float64(g[i]))
	}
	r.RC = Spearman(fa, fg)
	var ag, aa, gg float64
	for i := range a {
		x, y := float64(a[i]), float64(g[i])
		ag, aa, gg = ag+x*y, aa+x*x, gg+y*y
	}
	r.Cos = ag / math.Sqrt(aa*gg) // NaN for a zero vector
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

func abs32(x float32) float32 { return float32(math.Abs(float64(x))) }

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
		m.Cos += a.Cos / float64(n)
	}
	m.K = k
	return m, nil
}

// GroundTruth scores maps by their agreement with a known ground truth
// (OpenXAI; GOAR Appendix B): the weights of a linear model for the class
// explained, or the discriminative direction of a synthetic problem. It
// needs the environment's Truth, and a problem that has one.
type GroundTruth struct {
	Samples int     `json:"samples" doc:"test samples evaluated: the first n (0: all)" range:"[0,]"`
	TopK    float64 `json:"top_k" doc:"fraction of the features compared by FA, RA, SA, SRA and PRA (k = ⌈fraction·features⌉)" range:"(0,1]"`
}

func (g GroundTruth) defaults() GroundTruth {
	if g.TopK == 0 {
		g.TopK = 0.25
	}
	return g
}

// Info implements Protocol.
func (g GroundTruth) Info() Info {
	return Info{Name: "GroundTruth", Category: "ground-truth", Family: FamilyGroundTruth, Data: []string{"image", "tabular"},
		Doc:    "OpenXAI agreement of each map with the known ground-truth attribution (linear models, synthetic data)",
		Params: Params(g.defaults())}.with(g.metrics())
}

// Run implements Protocol.
func (g GroundTruth) Run(ctx context.Context, env *Env) (Result, error) {
	g = g.defaults()
	res := Result{Protocol: "GroundTruth", Method: env.Method, Config: config(g)}
	if !(g.TopK > 0 && g.TopK <= 1) {
		return res, fmt.Errorf("GroundTruth: top_k %g outside (0, 1]", g.TopK)
	}
	if env.Truth == nil {
		return res, fmt.Errorf("GroundTruth: this problem has no known ground truth (a linear model, arch logreg, or the synthetic Gaussian mixture has one)")
	}
	_, n, shape, err := testImages(env, g.Samples)
	if err != nil {
		return res, fmt.Errorf("GroundTruth: %w", err)
	}
	maps, err := mapsFor(ctx, env, "test", n, shape)
	if err != nil {
		return res, fmt.Errorf("GroundTruth: %w", err)
	}
	truth, err := env.Truth(ctx, "test")
	if err != nil {
		return res, fmt.Errorf("GroundTruth: %w", err)
	}
	d := shape[1] * shape[2]
	if len(truth) < n*d {
		return res, fmt.Errorf("GroundTruth: %d truth values for %d samples of %d features", len(truth), n, d)
	}
	k := int(math.Ceil(g.TopK * float64(d)))
	a, err := MeanAgreement(maps, truth[:n*d], n, k)
	if err != nil {
		return res, fmt.Errorf("GroundTruth: %w", err)
	}
	per := make([][7]float64, n) // each sample's agreement, for Units
	for i := range per {
		s, err := Agree(maps[i*d:(i+1)*d], truth[i*d:(i+1)*d], k)
		if err != nil {
			return res, fmt.Errorf("GroundTruth: sample %d: %w", i, err)
		}
		per[i] = [7]float64{s.FA, s.RA, s.SA, s.SRA, s.RC, s.PRA, s.Cos}
	}
	for j, name := range []string{"fa", "ra", "sa", "sra", "rc", "pra", "cos"} {
		v := make([]float64, n)
		for i := range v {
			v[i] = per[i][j]
		}
		res.keep(name, v)
	}
	res.Scalars = []Scalar{{"fa", a.FA, Higher}, {"ra", a.RA, Higher}, {"sa", a.SA, Higher},
		{"sra", a.SRA, Higher}, {"rc", a.RC, Higher}, {"pra", a.PRA, Higher}, {"cos", a.Cos, Higher}}
	return res, nil
}

// ClassTruth lays out one ground-truth vector per sample: perClass[c] is
// the truth for class c, and sample i gets that of the class its map
// explains, targets[i].
func ClassTruth(perClass [][]float32, targets []int) ([]float32, error) {
	if len(perClass) == 0 {
		return nil, fmt.Errorf("no ground truth per class")
	}
	d := len(perClass[0])
	out := make([]float32, 0, len(targets)*d)
	for i, c := range targets {
		if c < 0 || c >= len(perClass) || len(perClass[c]) != d {
			return nil, fmt.Errorf("sample %d explains class %d: no %d-feature ground truth for it", i, c, d)
		}
		out = append(out, perClass[c]...)
	}
	return out, nil
}

// LinearTruth is the ground truth of a linear model (arch "logreg"): the
// weights of each class's logit, the exact effect of every feature on it.
func LinearTruth(net engine.Network) ([][]float32, error) {
	if net.Arch() != "logreg" {
		return nil, fmt.Errorf("a %s model has no known ground truth (only logreg, a linear model, has one)", net.Arch())
	}
	for _, p := range net.Params() {
		if p.Name == "f1.weight" && len(p.Shape) == 2 && p.Shape[0] == net.Classes() {
			d := p.Shape[1]
			out := make([][]float32, p.Shape[0])
			for c := range out {
				out[c] = p.Data[c*d : (c+1)*d]
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("logreg model without its f1.weight (classes×features) parameter")
}

// TruthCorrelation is, for one score of one protocol, its Pearson
// correlation across methods with one ground-truth agreement metric (GOAR
// Table 1): how well the protocol ranks methods as the truth does.
type TruthCorrelation struct {
	Dataset  string  `json:"dataset,omitempty"` // set by callers that pool datasets or seeds
	Seed     string  `json:"seed,omitempty"`
	Protocol string  `json:"protocol"`
	Score    string  `json:"score"`
	Truth    string  `json:"truth"`
	R        float64 `json:"r"`
	Methods  int     `json:"methods"`
}

// CorrelateWithTruth pairs each method's protocol scores with its
// GroundTruth result and correlates every score (a scalar with a better
// direction) with every agreement metric across the methods that have both
// (at least three).
func CorrelateWithTruth(results []Result) []TruthCorrelation {
	truth := map[string]Result{}
	for _, r := range results {
		if r.Protocol == "GroundTruth" {
			truth[r.Method] = r
		}
	}
	type key struct{ proto, score, truth string }
	xs, ys := map[key][]float64{}, map[key][]float64{}
	var order []key
	for _, r := range results {
		g, ok := truth[r.Method]
		if !ok || r.Protocol == "GroundTruth" {
			continue
		}
		for _, s := range r.Scalars {
			if s.Better == "" {
				continue // a diagnostic of the protocol, not a score of the method
			}
			for _, t := range g.Scalars {
				k := key{r.Protocol, s.Name, t.Name}
				if _, seen := xs[k]; !seen {
					order = append(order, k)
				}
				xs[k] = append(xs[k], s.Value)
				ys[k] = append(ys[k], t.Value)
			}
		}
	}
	var out []TruthCorrelation
	for _, k := range order {
		if len(xs[k]) < 3 {
			continue
		}
		out = append(out, TruthCorrelation{Protocol: k.proto, Score: k.score, Truth: k.truth,
			R: Pearson(xs[k], ys[k]), Methods: len(xs[k])})
	}
	return out
}
