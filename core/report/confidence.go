package report

import (
	"cmp"
	"hash/fnv"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

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
	// Trust is each dataset's answer to "which method should I trust on
	// this model?", from the settings the card admits (trust.go).
	Trust   []Answer       `json:"which_method_to_trust,omitempty"`
	Missing []MissingUnits `json:"missing_units,omitempty"`
	byKey   map[string]int // Intervals by ciKey
	cache   map[string]stats.Interval
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
	Dataset  string          `json:"dataset"`
	Protocol string          `json:"protocol"`
	Metric   string          `json:"metric"`
	Better   protocol.Better `json:"better"`
	Methods  []RankedMethod  `json:"methods"`          // best first
	Pairs    []Pair          `json:"pairs"`            // between the methods it ranks (RankedMethod.Ranked)
	Winner   string          `json:"winner,omitempty"` // the best method, when the runner-up differs from it and the report card does not find the setting cannot rank them; "" for none
	// Withheld is the best method, told apart from the runner-up, where
	// the report card finds the setting cannot rank these methods here
	// (Outcome DoesNotHold): no winner is named beside that verdict.
	Withheld string                 `json:"winner_withheld,omitempty"`
	Outcome  Outcome                `json:"outcome"` // of "the ranking names a best method" (Verdict says why)
	Says     string                 `json:"verdict"` // Verdict, for diagnostics.json
	Units    int                    `json:"units"`   // inputs per seed the methods share
	Seeds    int                    `json:"seeds"`
	Values   map[string][]float64   `json:"-"` // each method's per-input values, averaged over seeds (the report card's split halves)
	PerSeed  map[string][][]float64 `json:"-"` // each method's per-input values of each seed (seeds × inputs; the combined ranking's bootstrap)
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
	PTest     string         `json:"p_test"`     // the test whose p it is (stats.PValue.Test): over seeds, "t over seeds"
	PHolm     float64        `json:"p_holm"`     // Holm-corrected over the setting's pairs of ranked methods
	PWilcoxon float64        `json:"p_wilcoxon"` // Wilcoxon signed-rank on the inputs' values summed over seeds (shown, not decided on)
	Differ    bool           `json:"differ"`     // PHolm < Alpha
	// Outcome of "A and B are told apart": Holds where Differ, else
	// Inconclusive (NotEvaluated without a p), with what the run could
	// have told (pairs.go).
	Outcome Outcome `json:"outcome"`
	// Level is the level Holm reads P against: Alpha/(m − j + 1), P the
	// j-th smallest of the setting's m.
	Level float64 `json:"level"`
	// Detectable is the smallest true |A − B| a paired test at Level
	// finds 80 % of the time on a run like this one (stats.Detectable;
	// stats.DetectableSeeds over seeds), NaN where not said.
	Detectable float64 `json:"detectable"`
	// Needed is about how many Unit (of which the run has Diff.Units, or
	// Diff.Groups seeds) would find the observed difference so
	// (stats.UnitsFor, stats.SeedsFor); 0 where not said.
	Needed int    `json:"needed,omitempty"`
	Unit   string `json:"unit"`  // "inputs", or "seeds" where the seed is the unit
	Words  string `json:"words"` // the outcome in words
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
		all := map[string]map[string]series{} // metric → method → series
		for _, m := range g.info.Metrics {
			all[m.Name] = map[string]series{}
			for _, meth := range methods {
				if s, ok := seriesOf(by[meth], m.Name); ok {
					all[m.Name][meth] = s
				}
			}
		}
		for _, meth := range methods {
			for _, m := range g.info.Metrics {
				s, ok := all[m.Name][meth]
				if !ok {
					continue
				}
				anyUnits = true
				skew := othersSkewness(all[m.Name], meth)
				for k, seed := range s.seeds {
					conf.add(ScoreCI{Dataset: g.dataset, Protocol: g.title, Method: meth, Metric: m.Name, Seed: strconv.FormatUint(seed, 10),
						Interval: conf.interval(o, g, meth, m, s.pick(k), skew)})
				}
				if len(s.seeds) > 1 {
					conf.add(ScoreCI{Dataset: g.dataset, Protocol: g.title, Method: meth, Metric: m.Name, Seed: AllSeeds, Interval: conf.interval(o, g, meth, m, s, skew)})
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
	conf.judgeAgreement()
	for i := range conf.Rankings {
		conf.Rankings[i].judge()
	}
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
// setting, in the metric's own units, inside its range, flagged
// (Interval.Few) by the skewness of the score in the setting's other
// methods (othersSkewness): computed once per (setting, method, metric,
// seeds) and shared by every table and figure that shows it.
func (c *Confidence) interval(o ConfidenceOptions, g *group, method string, m protocol.Metric, s series, skew float64) stats.Interval {
	key := ciKey(g.dataset, g.title, method, m.Name, s.seedList(), strconv.FormatFloat(s.den, 'g', -1, 64))
	if iv, ok := c.cache[key]; ok {
		return iv
	}
	b := boot(o, g.dataset, g.title, m.Name, s.seedList())
	b.Range = s.scaled(m.Value.Range)
	b.Skewness = &skew
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
	r := Ranking{Dataset: g.dataset, Protocol: g.title, Metric: h.Name, Better: h.Better, Units: n, Seeds: len(data[0]), Values: map[string][]float64{}, PerSeed: map[string][][]float64{}}
	cis := make([]stats.Interval, len(names))
	all := map[string]series{}
	for m, name := range names {
		all[name] = ss[m]
	}
	for m, name := range names {
		cis[m] = c.interval(o, g, name, h, ss[m], othersSkewness(all, name))
		v := seedMeans(data[m])
		for i := range v {
			v[i] /= den
		}
		r.Values[name] = v
		per := make([][]float64, len(data[m]))
		for k, d := range data[m] {
			per[k] = make([]float64, len(d))
			for i, x := range d {
				per[k][i] = x / den
			}
		}
		r.PerSeed[name] = per
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
	levels := holmLevelsFor(len(contenders) * (len(contenders) - 1) / 2)
	seeds := ss[0].seedList()
	var diffSeries [][][]float64 // each pair's differences, for their skewness
	for x, a := range contenders {
		for _, b := range contenders[x+1:] {
			i, j := order[a], order[b]
			d := make([][]float64, len(data[i]))
			for k := range d {
				d[k] = make([]float64, len(data[i][k]))
				for u := range d[k] {
					d[k][u] = data[i][k][u] - data[j][k][u]
				}
			}
			diffSeries = append(diffSeries, d)
		}
	}
	for x, a := range contenders {
		for _, b := range contenders[x+1:] {
			idx = append(idx, ij{a, b})
		}
	}
	// Each pair's interval and tests are its own (their draws seeded
	// alike, whatever the order), so the pairs run on every core: a
	// setting of 26 methods has 325 pairs, each drawing until its p is
	// settled against Holm's levels.
	r.Pairs, ps = make([]Pair, len(idx)), make([]float64, len(idx))
	var wg sync.WaitGroup
	work := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(idx)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				i, j := order[idx[k].i], order[idx[k].j]
				bt := boot(o, g.dataset, g.title, h.Name, seeds, "pair")
				bt.Range = ss[0].scaled(h.Value.Range)
				skew := pairsSkewness(diffSeries, k)
				bt.Skewness = &skew
				d, p, pw := compare(bt, data[i], data[j], levels)
				r.Pairs[k], ps[k] = Pair{A: names[i], B: names[j], Diff: ss[0].unscale(d), P: p.P, PExact: p.Exact, PError: p.Error, PTest: p.Test, PWilcoxon: pw}, p.P
			}
		}()
	}
	for k := range idx {
		work <- k
	}
	close(work)
	wg.Wait()
	differ := map[ij]bool{}
	for k, ph := range stats.Holm(ps) {
		r.Pairs[k].PHolm = ph
		r.Pairs[k].Differ = ph < Alpha
		differ[idx[k]] = r.Pairs[k].Differ
	}
	for k, level := range holmLevels(ps) {
		r.Pairs[k].Level = level
		r.Pairs[k].judge(c.Level)
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
