package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/protocol"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// A score without its uncertainty is half a result. Confidence reads the
// per-input values each result keeps (protocol.Units) and says how sure
// each verdict is: an interval for every score (a seeded bootstrap over
// the test inputs; over seeds, then inputs, where the campaign has several,
// so that retraining noise counts), which differences between methods are
// real (paired, Holm-corrected over a protocol's pairs), how likely each
// method is to rank first, and whether the protocols agree with each
// other. Intervals are at 95 %: Agresti–Coull for scores of 0/1 per
// input, the hull of the BCa and studentized bootstrap intervals for
// others, a two-level percentile bootstrap over seeds; each inside the
// score's natural range, and flagged where the inputs are too few for
// their skewness (package stats says why). One interval per number: it is
// seeded by what it measures, so the same records and seed give the same
// interval, bit for bit, wherever it is shown.

// Alpha is the level at which a difference between methods is called.
const Alpha = 0.05

// Confidence is what a run's per-input values say of its verdicts.
type Confidence struct {
	Resamples int         `json:"resamples"`
	Level     float64     `json:"level"`
	Seed      uint64      `json:"seed"`
	Intervals []ScoreCI   `json:"intervals"`
	Rankings  []Ranking   `json:"rankings"`
	Agreement []Agreement `json:"agreement,omitempty"`
	// Contradictions are the pairs of methods two settings order
	// oppositely, each order told apart (for any number of methods).
	Contradictions []Contradiction `json:"contradictions,omitempty"`
	Card           []CardRow       `json:"report_card,omitempty"`
	Missing        []MissingUnits  `json:"missing_units,omitempty"`
	byKey          map[string]int  // Intervals by ciKey
	cache          map[string]stats.Interval
}

// ScoreCI is one score of one method under one protocol setting with its
// interval: of one seed's run, or pooled over the seeds ("all").
type ScoreCI struct {
	Dataset  string `json:"dataset"`
	Protocol string `json:"protocol"` // the setting's title
	Method   string `json:"method"`
	Metric   string `json:"metric"`
	Seed     string `json:"seed"` // the seed, or "all" for every seed's, where there are several
	stats.Interval
}

// AllSeeds is ScoreCI.Seed of an interval pooled over several seeds.
const AllSeeds = "all"

// Ranking is one protocol setting's ranking of the methods by its
// headline score, with what the data can and cannot tell apart.
type Ranking struct {
	Dataset  string               `json:"dataset"`
	Protocol string               `json:"protocol"`
	Metric   string               `json:"metric"`
	Better   protocol.Better      `json:"better"`
	Methods  []RankedMethod       `json:"methods"`          // best first
	Pairs    []Pair               `json:"pairs"`            // between the methods it ranks (RankedMethod.Ranked)
	Winner   string               `json:"winner,omitempty"` // the best method, when the runner-up differs from it; "" for no clear winner
	Units    int                  `json:"units"`            // inputs per seed the methods share
	Seeds    int                  `json:"seeds"`
	Values   map[string][]float64 `json:"-"` // each method's per-input values, averaged over seeds (the report card's split halves)
}

// RankedMethod is a method's place in a Ranking.
type RankedMethod struct {
	Method   string         `json:"method"`
	CI       stats.Interval `json:"ci"`
	Letters  string         `json:"letters"`   // methods sharing a letter cannot be told apart at Alpha
	PFirst   float64        `json:"p_first"`   // the share of bootstrap resamples in which it ranks first
	MeanRank float64        `json:"mean_rank"` // its rank among the methods on an input (1: best), averaged over inputs and seeds
	Weak     bool           `json:"weak,omitempty"`
}

// Ranked reports whether the ranking ranks the method (letters, pairs,
// the chance of ranking first, a mean rank; a candidate for the best): its
// score is defined and its retrained models learned.
func (m RankedMethod) Ranked() bool { return !m.Weak && !math.IsNaN(m.CI.Estimate) }

// rankedOnly is r with the methods it ranks (RankedMethod.Ranked) alone.
func (r Ranking) rankedOnly() Ranking {
	r.Methods = slices.DeleteFunc(slices.Clone(r.Methods), func(m RankedMethod) bool { return !m.Ranked() })
	return r
}

// Pair is the paired comparison of two methods (A ranked above B).
type Pair struct {
	A         string         `json:"a"`
	B         string         `json:"b"`
	Diff      stats.Interval `json:"diff"`       // A − B, paired over the same inputs and seeds
	P         float64        `json:"p"`          // the paired test's p-value of no difference (stats.Bootstrap.Paired)
	PExact    bool           `json:"p_exact"`    // P is enumerated, not drawn
	PError    float64        `json:"p_error"`    // P's Monte-Carlo standard error (0 when exact)
	PHolm     float64        `json:"p_holm"`     // Holm-corrected over the setting's pairs of ranked methods
	PWilcoxon float64        `json:"p_wilcoxon"` // Wilcoxon signed-rank on the inputs' values summed over seeds (shown, not decided on)
	Differ    bool           `json:"differ"`     // PHolm < Alpha
}

// Agreement is whether the protocols on one dataset rank the methods they
// share alike: Kendall's τ between every two, Kendall's W over all.
type Agreement struct {
	Dataset   string      `json:"dataset"`
	Protocols []string    `json:"protocols"`
	Methods   []string    `json:"methods"` // those every protocol ranks
	Tau       [][]float64 `json:"tau"`     // between protocols i and j, over the methods both rank
	W         float64     `json:"w"`
	P         float64     `json:"p"`       // permutation p-value of W
	PExact    bool        `json:"p_exact"` // P is enumerated, not drawn
	PError    float64     `json:"p_error"` // P's Monte-Carlo standard error (0 when exact)
	Words     string      `json:"words"`
	// Left are the settings left out and why: "ROAR (every method scores
	// the same)".
	Left []string `json:"left,omitempty"`
}

// MissingUnits is a protocol setting whose records keep no per-input
// values (a run from before they were kept): its scores have no intervals
// until the campaign runs again.
type MissingUnits struct {
	Dataset  string `json:"dataset"`
	Protocol string `json:"protocol"`
}

// ConfidenceOptions say how Confident resamples; zero fields take the
// defaults (2 000 resamples, seed 1).
type ConfidenceOptions struct {
	Resamples int
	Seed      uint64
}

// Confident analyses the records' per-input values (see Confidence).
func Confident(recs []store.Record, o ConfidenceOptions) Confidence {
	if o.Resamples <= 0 {
		o.Resamples = 2000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	conf := Confidence{Resamples: o.Resamples, Level: 0.95, Seed: o.Seed}
	c := newCampaign(recs)
	weakRecs := map[string]bool{}
	weak, _ := weakRetraining(recs)
	for _, w := range weak {
		weakRecs[w.Dataset+"\x00"+w.Protocol+"\x00"+w.Method] = true
	}
	for _, g := range c.groups {
		methods, by := c.methodsOf(g.recs)
		anyUnits := false
		for _, meth := range methods {
			for _, m := range g.info.Metrics {
				s, ok := seriesOf(by[meth], m.Name)
				if !ok {
					continue
				}
				anyUnits = true
				for k, seed := range s.seeds {
					conf.add(ScoreCI{Dataset: g.dataset, Protocol: g.title, Method: meth, Metric: m.Name, Seed: strconv.FormatUint(seed, 10),
						Interval: conf.interval(o, g, meth, m, s.pick(k))})
				}
				if len(s.seeds) > 1 {
					conf.add(ScoreCI{Dataset: g.dataset, Protocol: g.title, Method: meth, Metric: m.Name, Seed: AllSeeds, Interval: conf.interval(o, g, meth, m, s)})
				}
			}
		}
		if !anyUnits {
			conf.Missing = append(conf.Missing, MissingUnits{Dataset: g.dataset, Protocol: g.title})
			continue
		}
		if h, ok := g.info.Headline(); ok && h.Better != "" {
			if r, ok := conf.rank(o, g, methods, by, h, weakRecs); ok {
				conf.Rankings = append(conf.Rankings, r)
			}
		}
	}
	conf.Agreement = agreement(conf.Rankings, o.Seed)
	conf.Contradictions = contradictions(conf.Rankings)
	return conf
}

// boot is the bootstrap of one series: its seed mixes the run's with what
// the series measures (dataset, protocol setting, metric, the seeds it
// pools, …), so that adding a method or a protocol to a campaign leaves
// the other intervals as they were, and the same series gets the same
// interval wherever it is shown. A method's name is not among them: the
// methods of a setting resample the same inputs, and maps filed under
// another label (a file method's label:) get the intervals their maker's
// got.
func boot(o ConfidenceOptions, parts ...string) stats.Bootstrap {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return stats.Bootstrap{Resamples: o.Resamples, Seed: o.Seed ^ h.Sum64()}
}

// interval is the interval of a method's series of metric m under g's
// setting, in the metric's own units, inside its range: computed once
// per (setting, method, metric, seeds) and shared by every table and
// figure that shows it.
func (c *Confidence) interval(o ConfidenceOptions, g *group, method string, m protocol.Metric, s series) stats.Interval {
	key := ciKey(g.dataset, g.title, method, m.Name, s.seedList(), strconv.FormatFloat(s.den, 'g', -1, 64))
	if iv, ok := c.cache[key]; ok {
		return iv
	}
	b := boot(o, g.dataset, g.title, m.Name, s.seedList())
	b.Range = s.scaled(m.Value.Range)
	iv := s.unscale(b.Mean(s.data))
	if c.cache == nil {
		c.cache = map[string]stats.Interval{}
	}
	c.cache[key] = iv
	return iv
}

// series is one method's per-input values of one score: data[s][i] is
// input i under seed seeds[s], as numerators over den — counts, exactly,
// for a score on a grid (protocol.Units.Exact), so that equal values and
// differences compare equal; den is 1 otherwise.
type series struct {
	seeds []uint64
	data  [][]float64
	den   float64
}

// seriesOf gathers a method's per-input values of the named scalar, a
// seed each, in seed order; false when no record keeps them. Seeds on
// different grids (records of different builds) are read as plain values.
func seriesOf(recs []store.Record, name string) (series, bool) {
	var s series
	var dens []float64
	sorted := slices.SortedFunc(slices.Values(recs), func(a, b store.Record) int { return cmp.Compare(a.Seed, b.Seed) })
	for _, r := range sorted {
		num, den := r.Result.Units.Exact(name)
		if num == nil || slices.Contains(s.seeds, r.Seed) {
			continue
		}
		s.seeds, s.data, dens = append(s.seeds, r.Seed), append(s.data, num), append(dens, den)
	}
	s.den = 1
	if len(dens) > 0 && slices.Min(dens) == slices.Max(dens) {
		s.den = dens[0]
	} else {
		for k, d := range s.data {
			for i := range d {
				d[i] /= dens[k]
			}
		}
	}
	return s, len(s.data) > 0
}

// pick is the series of its k-th seed alone.
func (s series) pick(k int) series {
	return series{seeds: s.seeds[k : k+1], data: s.data[k : k+1], den: s.den}
}

// seedList names the seeds the series pools: "3", "1,2,3".
func (s series) seedList() string {
	var names []string
	for _, seed := range s.seeds {
		names = append(names, strconv.FormatUint(seed, 10))
	}
	return strings.Join(names, ",")
}

// scaled is a range in the series' numerators (nil for none).
func (s series) scaled(rng []float64) []float64 {
	if len(rng) != 2 {
		return nil
	}
	return []float64{rng[0] * s.den, rng[1] * s.den}
}

// unscale is an interval of numerators in the score's own units.
func (s series) unscale(iv stats.Interval) stats.Interval {
	iv.Estimate, iv.Lo, iv.Hi = iv.Estimate/s.den, iv.Lo/s.den, iv.Hi/s.den
	return iv
}

// aligned returns the methods' series restricted to the seeds all of
// them have, with the same number of inputs each and one denominator;
// false when there are none.
func aligned(ss []series) ([]series, int, bool) {
	if len(ss) == 0 {
		return nil, 0, false
	}
	common := slices.Clone(ss[0].seeds)
	for _, s := range ss[1:] {
		common = slices.DeleteFunc(common, func(seed uint64) bool { return !slices.Contains(s.seeds, seed) })
	}
	if len(common) == 0 {
		return nil, 0, false
	}
	den := ss[0].den
	for _, s := range ss {
		if s.den != den {
			den = 0
		}
	}
	out := make([]series, len(ss))
	n := -1
	for m, s := range ss {
		out[m] = series{seeds: common, den: s.den}
		for _, seed := range common {
			d := s.data[slices.Index(s.seeds, seed)]
			if n >= 0 && len(d) != n {
				return nil, 0, false
			}
			n = len(d)
			if den == 0 { // methods on different grids: plain values
				d = slices.Clone(d)
				for i := range d {
					d[i] /= s.den
				}
				out[m].den = 1
			}
			out[m].data = append(out[m].data, d)
		}
	}
	return out, n, true
}

// oriented is v with its sign set so that higher is better.
func oriented(v float64, better protocol.Better) float64 {
	if better == protocol.Lower {
		return -v
	}
	return v
}

// rank ranks a setting's methods by the headline h.
func (c *Confidence) rank(o ConfidenceOptions, g *group, methods []string, by map[string][]store.Record, h protocol.Metric, weakRecs map[string]bool) (Ranking, bool) {
	var names []string
	var ss []series
	for _, meth := range methods {
		if s, ok := seriesOf(by[meth], h.Name); ok {
			names, ss = append(names, meth), append(ss, s)
		}
	}
	ss, n, ok := aligned(ss)
	if !ok || len(names) < 1 {
		return Ranking{}, false
	}
	data := make([][][]float64, len(ss))
	for m, s := range ss {
		data[m] = s.data
	}
	den := ss[0].den
	r := Ranking{Dataset: g.dataset, Protocol: g.title, Metric: h.Name, Better: h.Better, Units: n, Seeds: len(data[0]), Values: map[string][]float64{}}
	cis := make([]stats.Interval, len(names))
	for m, name := range names {
		cis[m] = c.interval(o, g, name, h, ss[m])
		v := seedMeans(data[m])
		for i := range v {
			v[i] /= den
		}
		r.Values[name] = v
	}
	// Best first, by the estimate; NaN last.
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := oriented(cis[a].Estimate, h.Better), oriented(cis[b].Estimate, h.Better)
		switch {
		case math.IsNaN(x) && math.IsNaN(y):
			return 0
		case math.IsNaN(x):
			return 1
		case math.IsNaN(y):
			return -1
		}
		return cmp.Compare(y, x)
	})
	// Every method keeps its interval; the ranked ones (RankedMethod.Ranked:
	// a score, and retrained models that learned) get their letters, pairs,
	// chance of ranking first and mean rank among themselves.
	var contenders []int // positions in order, as in r.Methods
	for a, i := range order {
		m := RankedMethod{Method: names[i], CI: cis[i], PFirst: math.NaN(), MeanRank: math.NaN(), Weak: weakRecs[g.dataset+"\x00"+g.title+"\x00"+names[i]]}
		r.Methods = append(r.Methods, m)
		if m.Ranked() {
			contenders = append(contenders, a)
		}
	}
	// Holm over the contenders' pairs: each p-value drawn by Monte Carlo
	// is settled against every level Holm may compare it with.
	type ij struct{ i, j int }
	var idx []ij
	var ps []float64
	npairs := len(contenders) * (len(contenders) - 1) / 2
	levels := make([]float64, npairs)
	for k := range levels {
		levels[k] = Alpha / float64(k+1)
	}
	seeds := ss[0].seedList()
	for x, a := range contenders {
		for _, b := range contenders[x+1:] {
			i, j := order[a], order[b]
			bt := boot(o, g.dataset, g.title, h.Name, seeds, "pair")
			bt.Range = ss[0].scaled(h.Value.Range)
			d := ss[0].unscale(bt.Diff(data[i], data[j]))
			p := bt.Paired(data[i], data[j], levels)
			_, _, pw := stats.Wilcoxon(seedSums(data[i]), seedSums(data[j]))
			r.Pairs = append(r.Pairs, Pair{A: names[i], B: names[j], Diff: d, P: p.P, PExact: p.Exact, PError: p.Error, PWilcoxon: pw})
			idx, ps = append(idx, ij{a, b}), append(ps, p.P)
		}
	}
	differ := map[ij]bool{}
	for k, ph := range stats.Holm(ps) {
		r.Pairs[k].PHolm = ph
		r.Pairs[k].Differ = ph < Alpha
		differ[idx[k]] = r.Pairs[k].Differ
	}
	for x, l := range stats.Letters(len(contenders), func(x, y int) bool {
		if x > y {
			x, y = y, x
		}
		return differ[ij{contenders[x], contenders[y]}]
	}) {
		r.Methods[contenders[x]].Letters = l
	}
	if len(contenders) > 0 {
		// The chance of ranking first, under the same resamples for all.
		cdata := make([][][]float64, len(contenders))
		for x, a := range contenders {
			cdata[x] = data[order[a]]
		}
		first := make([]float64, len(contenders))
		reps := boot(o, g.dataset, g.title, h.Name, seeds, "ranks").Replicates(cdata)
		for _, rep := range reps {
			best, ties := -1, 0.0
			for m, v := range rep {
				switch {
				case math.IsNaN(v):
				case best < 0 || oriented(v, h.Better) > oriented(rep[best], h.Better):
					best, ties = m, 1
				case oriented(v, h.Better) == oriented(rep[best], h.Better):
					ties++
				}
			}
			if best < 0 {
				continue
			}
			for m, v := range rep {
				if !math.IsNaN(v) && oriented(v, h.Better) == oriented(rep[best], h.Better) {
					first[m] += 1 / ties / float64(len(reps))
				}
			}
		}
		for x, rank := range unitRanks(cdata, h.Better) {
			r.Methods[contenders[x]].PFirst, r.Methods[contenders[x]].MeanRank = first[x], rank
		}
	}
	// A winner only where the best (of the methods whose retrained models
	// learned) is told apart from the runner-up.
	var top []int
	for a, m := range r.Methods {
		if m.Ranked() {
			top = append(top, a)
		}
	}
	if len(top) >= 2 && differ[ij{top[0], top[1]}] {
		r.Winner = r.Methods[top[0]].Method
	}
	return r, true
}

// seedSums is each input's values summed over seeds, NaN where a seed
// lacks it: on a grid, exact counts, so that the Wilcoxon test sees the
// ties there are.
func seedSums(data [][]float64) []float64 {
	if len(data) == 0 {
		return nil
	}
	out := make([]float64, len(data[0]))
	for _, d := range data {
		for i, v := range d {
			out[i] += v
		}
	}
	return out
}

// seedMeans is each input's value averaged over seeds (NaN left out).
func seedMeans(data [][]float64) []float64 {
	if len(data) == 0 {
		return nil
	}
	out := make([]float64, len(data[0]))
	for i := range out {
		var s float64
		var n int
		for _, d := range data {
			if !math.IsNaN(d[i]) {
				s, n = s+d[i], n+1
			}
		}
		out[i] = math.NaN()
		if n > 0 {
			out[i] = s / float64(n)
		}
	}
	return out
}

// unitRanks is each method's rank among the methods (1: best; ties share
// their mean rank) on each input of each seed where every method has a
// value, averaged: the mean ranks of a critical-difference diagram.
func unitRanks(data [][][]float64, better protocol.Better) []float64 {
	k := len(data)
	sum := make([]float64, k)
	units := 0
	v := make([]float64, k)
	for s := range data[0] {
	inputs:
		for i := range data[0][s] {
			for m := range data {
				v[m] = -oriented(data[m][s][i], better) // rank 1 for the best
				if math.IsNaN(v[m]) {
					continue inputs
				}
			}
			for m, r := range midRanks(v) {
				sum[m] += r
			}
			units++
		}
	}
	for m := range sum {
		if units == 0 {
			sum[m] = math.NaN()
		} else {
			sum[m] /= float64(units)
		}
	}
	return sum
}

// midRanks are v's 1-based ranks, ascending, ties sharing their mean rank.
func midRanks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	r := make([]float64, len(v))
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && v[idx[hi]] == v[idx[lo]] {
			hi++
		}
		for k := lo; k < hi; k++ {
			r[idx[k]] = float64(lo+hi+1) / 2
		}
		lo = hi
	}
	return r
}

// agreement compares the rankings of each dataset's protocol settings over
// the methods they share (at least three): the methods each ranks (not
// weak, with a score), a setting ranking two left out and named, and one
// whose methods all score the same (no ranking to compare: saturated)
// left out and named — where that leaves no τ to compute (fewer than two
// settings, or fewer than three methods shared), an Agreement with no
// protocols says why. A setting that tells none of its pairs apart stays
// in, named: its τ with the others is within its noise. The orders two
// settings flip are Contradictions, whatever the number of methods.
func agreement(rankings []Ranking, seed uint64) []Agreement {
	var out []Agreement
	var datasets []string
	for _, r := range rankings {
		if !slices.Contains(datasets, r.Dataset) {
			datasets = append(datasets, r.Dataset)
		}
	}
	for _, ds := range datasets {
		var rs, two []Ranking // settings ranking three methods or more, and two
		var noisy []string
		var left leftSettings
		for _, r := range rankings {
			if r.Dataset != ds || !left.keep(r) {
				continue
			}
			r = r.rankedOnly()
			switch {
			case len(r.Methods) == 2:
				two = append(two, r)
			default:
				rs = append(rs, r)
				if !slices.ContainsFunc(r.Pairs, func(p Pair) bool { return p.Differ }) {
					noisy = append(noisy, r.Protocol)
				}
			}
		}
		// The methods every setting ranks, in the first's order.
		var methods []string
		if len(rs) >= 2 {
			methods = shared(rs)
		}
		if len(methods) < 3 {
			// Nothing for τ: say why where there were settings to compare
			// (the orders they flip are Contradictions, for any number).
			switch all := append(slices.Clone(rs), two...); {
			case len(all) >= 2:
				out = append(out, Agreement{Dataset: ds, W: math.NaN(), P: math.NaN(),
					Words: fmt.Sprintf("Kendall's τ between the protocols is not computed: the %d protocols share %s, and a rank correlation needs three or more%s",
						len(all), Count(len(shared(all)), "method"), left.words()), Left: left.named()})
			case len(all)+len(left.tied)+len(left.unlearned) >= 2:
				out = append(out, Agreement{Dataset: ds, W: math.NaN(), P: math.NaN(),
					Words: "the protocols cannot be compared: " + left.sentence(), Left: left.named()})
			}
			continue
		}
		a := Agreement{Dataset: ds, Methods: methods, Left: left.named()}
		scores := make([][]float64, len(rs))
		for p, r := range rs {
			a.Protocols = append(a.Protocols, r.Protocol)
			for _, m := range methods {
				i := slices.IndexFunc(r.Methods, func(x RankedMethod) bool { return x.Method == m })
				scores[p] = append(scores[p], oriented(r.Methods[i].CI.Estimate, r.Better))
			}
		}
		a.Tau = make([][]float64, len(rs))
		for i := range rs {
			a.Tau[i] = make([]float64, len(rs))
			for j := range rs {
				a.Tau[i][j] = stats.KendallTau(scores[i], scores[j])
			}
		}
		var p stats.PValue
		a.W, p = stats.KendallW(scores, seed, []float64{Alpha})
		a.P, a.PExact, a.PError = p.P, p.Exact, p.Error
		chance := "beyond chance"
		if !(a.P < Alpha) {
			chance = "but no more than chance would (with this few methods and protocols)"
		}
		a.Words = fmt.Sprintf("the %d protocols %s on the %d methods they share (Kendall's W = %.2f), %s: permutation p %s", len(rs), concordance(a.W), len(methods), a.W, chance, pWords(a.P, a.PExact, a.PError))
		if len(noisy) > 0 {
			a.Words += fmt.Sprintf("; %s %s none of %s pairs apart, so %s τ with the others is within the noise",
				strings.Join(noisy, ", "), pickWord(len(noisy) > 1, "tell", "tells"), pickWord(len(noisy) > 1, "their", "its"), pickWord(len(noisy) > 1, "their", "its"))
		}
		a.Words += left.words()
		if len(two) > 0 {
			var names []string
			for _, r := range two {
				names = append(names, r.Protocol)
			}
			a.Words += fmt.Sprintf("; left out of τ: %s, which %s only two methods", strings.Join(names, ", "), pickWord(len(two) > 1, "rank", "ranks"))
		}
		out = append(out, a)
	}
	return out
}

// shared lists the methods every ranking ranks, in the first's order.
func shared(rs []Ranking) []string {
	var methods []string
	for _, m := range rs[0].Methods {
		all := true
		for _, r := range rs[1:] {
			all = all && slices.ContainsFunc(r.Methods, func(x RankedMethod) bool { return x.Method == m.Method })
		}
		if all {
			methods = append(methods, m.Method)
		}
	}
	return methods
}

// leftSettings are the settings of two or more methods that rank no two
// of them: every method scores the same (tied), or fewer than two
// methods' retrained models learned or have a score (unlearned).
type leftSettings struct{ tied, unlearned []string }

// Why a setting is left out, in the agreement's words.
const (
	whyTied      = "every method scores the same"
	whyUnlearned = "fewer than two methods' retrained models learned or have a score"
)

// keep reports whether r ranks two methods or more, noting it as left
// out where it had two or more to rank and ranks fewer.
func (l *leftSettings) keep(r Ranking) bool {
	if len(r.Methods) < 2 {
		return false
	}
	switch ranked := r.rankedOnly(); {
	case len(ranked.Methods) < 2:
		l.unlearned = append(l.unlearned, r.Protocol)
	case ranked.allEqual():
		l.tied = append(l.tied, r.Protocol)
	default:
		return true
	}
	return false
}

// groups are the settings left out, each group with why.
func (l leftSettings) groups() [][2]string {
	var out [][2]string
	for _, g := range []struct {
		names []string
		why   string
	}{{l.tied, whyTied}, {l.unlearned, whyUnlearned}} {
		if len(g.names) > 0 {
			out = append(out, [2]string{strings.Join(g.names, ", "), g.why})
		}
	}
	return out
}

// words says which settings are left out and why ("; left out: …").
func (l leftSettings) words() string {
	var w string
	for _, g := range l.groups() {
		w += fmt.Sprintf("; left out: %s, where %s", g[0], g[1])
	}
	return w
}

// sentence says which settings are left out and why, as a clause.
func (l leftSettings) sentence() string {
	var parts []string
	for _, g := range l.groups() {
		parts = append(parts, fmt.Sprintf("%s left out, where %s", g[0], g[1]))
	}
	return strings.Join(parts, "; ")
}

// named lists each setting left out with why, for a figure's title.
func (l leftSettings) named() []string {
	var out []string
	for _, p := range l.tied {
		out = append(out, p+" ("+whyTied+")")
	}
	for _, p := range l.unlearned {
		out = append(out, p+" (its retrained models learned nothing)")
	}
	return out
}

// concordance words Kendall's W (Schmidt 1997's reading: 0.1 very weak,
// 0.3 weak, 0.5 moderate, 0.7 strong).
func concordance(w float64) string {
	switch {
	case math.IsNaN(w):
		return "cannot be compared"
	case w < 0.1:
		return "do not agree"
	case w < 0.3:
		return "agree very weakly"
	case w < 0.5:
		return "agree weakly"
	case w < 0.7:
		return "agree moderately"
	}
	return "agree strongly"
}

// pValue writes a p-value with its relation: "= 0.042", "< 0.001".
func pValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p < 0.001:
		return "< 0.001"
	}
	return "= " + strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", p), "0"), ".")
}

// pWords writes a p-value with how it was had: "= 0.049 (exact)", "=
// 0.052 ± 0.002 (Monte Carlo)" with its standard error, "< 0.001 (Monte
// Carlo)" below what its draws resolve.
func pWords(p float64, exact bool, mcError float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case exact:
		return pValue(p) + " (exact)"
	case p < 0.001:
		return pValue(p) + " (Monte Carlo)"
	}
	return pValue(p) + " ± " + strconv.FormatFloat(mcError, 'g', 1, 64) + " (Monte Carlo)"
}

// add records an interval.
func (c *Confidence) add(s ScoreCI) {
	if c.byKey == nil {
		c.byKey = map[string]int{}
	}
	c.byKey[ciKey(s.Dataset, s.Protocol, s.Method, s.Metric, s.Seed)] = len(c.Intervals)
	c.Intervals = append(c.Intervals, s)
}

func ciKey(parts ...string) string { return strings.Join(parts, "\x00") }

// Interval finds the interval of a method's score under a protocol
// setting for one seed, or pooled over several (AllSeeds), if the run has
// one.
func (c Confidence) Interval(dataset, setting, method, metric, seed string) (stats.Interval, bool) {
	i, ok := c.byKey[ciKey(dataset, setting, method, metric, seed)]
	if !ok {
		return stats.Interval{}, false
	}
	return c.Intervals[i].Interval, true
}

// Ranking finds a protocol setting's ranking.
func (c Confidence) Ranking(dataset, setting string) (Ranking, bool) {
	for _, r := range c.Rankings {
		if r.Dataset == dataset && r.Protocol == setting {
			return r, true
		}
	}
	return Ranking{}, false
}

// JSON has no NaN: the types below write an undefined number as null.

// MarshalJSON implements json.Marshaler: what the score is, then its
// interval's fields (the embedded Interval's own MarshalJSON would
// otherwise stand for the whole and drop what it is of).
func (s ScoreCI) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(struct {
		Dataset  string `json:"dataset"`
		Protocol string `json:"protocol"`
		Method   string `json:"method"`
		Metric   string `json:"metric"`
		Seed     string `json:"seed"`
	}{s.Dataset, s.Protocol, s.Method, s.Metric, s.Seed})
	if err != nil {
		return nil, err
	}
	iv, err := json.Marshal(s.Interval)
	if err != nil {
		return nil, err
	}
	return append(append(head[:len(head)-1], ','), iv[1:]...), nil
}

// MarshalJSON implements json.Marshaler.
func (m RankedMethod) MarshalJSON() ([]byte, error) {
	type plain RankedMethod
	return json.Marshal(struct {
		plain
		PFirst   *float64 `json:"p_first"`
		MeanRank *float64 `json:"mean_rank"`
	}{plain(m), stats.Null(m.PFirst), stats.Null(m.MeanRank)})
}

// MarshalJSON implements json.Marshaler.
func (p Pair) MarshalJSON() ([]byte, error) {
	type plain Pair
	return json.Marshal(struct {
		plain
		P         *float64 `json:"p"`
		PHolm     *float64 `json:"p_holm"`
		PWilcoxon *float64 `json:"p_wilcoxon"`
	}{plain(p), stats.Null(p.P), stats.Null(p.PHolm), stats.Null(p.PWilcoxon)})
}

// MarshalJSON implements json.Marshaler.
func (a Agreement) MarshalJSON() ([]byte, error) {
	type plain Agreement
	tau := make([][]*float64, len(a.Tau))
	for i, row := range a.Tau {
		for _, v := range row {
			tau[i] = append(tau[i], stats.Null(v))
		}
	}
	return json.Marshal(struct {
		plain
		Tau [][]*float64 `json:"tau"`
		W   *float64     `json:"w"`
		P   *float64     `json:"p"`
	}{plain(a), tau, stats.Null(a.W), stats.Null(a.P)})
}
