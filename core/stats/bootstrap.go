package stats

import (
	"encoding/json"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Interval is an estimate with its confidence interval.
type Interval struct {
	Estimate float64 `json:"estimate"` // the mean (over several groups, the mean of the groups' means)
	Lo       float64 `json:"lo"`       // the interval's ends; NaN when it cannot be had
	Hi       float64 `json:"hi"`
	Units    int     `json:"units"`  // values that are not NaN, over all groups
	Groups   int     `json:"groups"` // groups (seeds) with at least one value
}

// Bootstrap is a seeded percentile bootstrap. Zero fields take the
// defaults: 2 000 resamples, a 95 % level.
type Bootstrap struct {
	Resamples int
	Level     float64
	Seed      uint64
}

func (b Bootstrap) resamples() int {
	if b.Resamples <= 0 {
		return 2000
	}
	return b.Resamples
}

func (b Bootstrap) level() float64 {
	if b.Level <= 0 || b.Level >= 1 {
		return 0.95
	}
	return b.Level
}

// design is data cleaned for resampling: per group with values, the
// units (indices) where every series has one.
type design struct {
	groups [][]int
}

func (d design) units() int {
	n := 0
	for _, u := range d.groups {
		n += len(u)
	}
	return n
}

// resampler draws the design's resamples: groups with replacement, then
// units with replacement within each drawn group (one group: units only).
type resampler struct {
	d   design
	rng *rand.Rand
	// the draw: for each drawn group, its data index and its units
	gs []int
	us [][]int
}

func newResampler(d design, seed uint64) *resampler {
	r := &resampler{d: d, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	r.gs = make([]int, len(d.groups))
	r.us = make([][]int, len(d.groups))
	return r
}

// intN is a uniform draw from [0, n) by Lemire's multiply-shift (its bias,
// below n/2⁶⁴, is far below what a bootstrap can see), twice as fast as
// rand.IntN's rejection.
func (r *resampler) intN(n int) int {
	hi, _ := bits.Mul64(r.rng.Uint64(), uint64(n))
	return int(hi)
}

// draw makes the next resample.
func (r *resampler) draw() {
	k := len(r.d.groups)
	for j := range k {
		g := j
		if k > 1 {
			g = r.intN(k)
		}
		r.gs[j] = g
		units := r.d.groups[g]
		us := r.us[j][:0]
		for range units {
			us = append(us, units[r.intN(len(units))])
		}
		r.us[j] = us
	}
}

// meanOf is the mean of the group means of series s (data[g][i]) under
// the current draw, gidx mapping design groups to data groups.
func (r *resampler) meanOf(s [][]float64, gidx []int) float64 {
	var sum float64
	for j, g := range r.gs {
		row := s[gidx[g]]
		var t float64
		for _, i := range r.us[j] {
			t += row[i]
		}
		sum += t / float64(len(r.us[j]))
	}
	return sum / float64(len(r.gs))
}

// diffOf is meanOf of a − b under the current draw.
func (r *resampler) diffOf(a, b [][]float64, gidx []int) float64 {
	var sum float64
	for j, g := range r.gs {
		ra, rb := a[gidx[g]], b[gidx[g]]
		var t float64
		for _, i := range r.us[j] {
			t += ra[i] - rb[i]
		}
		sum += t / float64(len(r.us[j]))
	}
	return sum / float64(len(r.gs))
}

// pointMean is the mean over the design's groups of the mean of f over
// each group's units.
func pointMean(d design, gidx []int, f func(g, i int) float64) float64 {
	var sum float64
	for k, units := range d.groups {
		var t float64
		for _, i := range units {
			t += f(gidx[k], i)
		}
		sum += t / float64(len(units))
	}
	return sum / float64(len(d.groups))
}

// designOf builds the design of paired series and the map from its groups
// to the data's.
func designOf(series ...[][]float64) (design, []int) {
	d := design{}
	var gidx []int
	for g := range series[0] {
		var units []int
	unit:
		for i := range series[0][g] {
			for _, s := range series {
				if g >= len(s) || i >= len(s[g]) || math.IsNaN(s[g][i]) {
					continue unit
				}
			}
			units = append(units, i)
		}
		if len(units) > 0 {
			d.groups = append(d.groups, units)
			gidx = append(gidx, g)
		}
	}
	return d, gidx
}

// percentile returns the level's interval of sorted replicates.
func percentile(reps []float64, level float64) (lo, hi float64) {
	slices.Sort(reps)
	q := func(p float64) float64 {
		// Linear interpolation between order statistics (type 7).
		h := p * float64(len(reps)-1)
		l := math.Floor(h)
		if int(l)+1 >= len(reps) {
			return reps[len(reps)-1]
		}
		return reps[int(l)] + (h-l)*(reps[int(l)+1]-reps[int(l)])
	}
	a := (1 - level) / 2
	return q(a), q(1 - a)
}

// Mean is the mean of data with its percentile interval: data[g][i] is
// unit i of group g (a seed's run; units are test inputs), NaN left out.
// One group: units are resampled with replacement. Several: groups are
// resampled with replacement, then units within each drawn group — the
// two-level bootstrap, so that the variation between groups counts; the
// estimate is then the mean of the group means. A series of one unit
// has no interval (NaN ends); a constant one, a zero-width interval.
func (b Bootstrap) Mean(data [][]float64) Interval {
	d, gidx := designOf(data)
	iv := Interval{Estimate: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Units: d.units(), Groups: len(d.groups)}
	if iv.Units == 0 {
		return iv
	}
	iv.Estimate = pointMean(d, gidx, func(g, i int) float64 { return data[g][i] })
	if iv.Units < 2 {
		return iv
	}
	r := newResampler(d, b.Seed)
	reps := make([]float64, b.resamples())
	for k := range reps {
		r.draw()
		reps[k] = r.meanOf(data, gidx)
	}
	iv.Lo, iv.Hi = percentile(reps, b.level())
	return iv
}

// Diff is the paired difference a − b2: a[g][i] and b2[g][i] are the same
// unit (input i of seed g) under two methods; units where either is NaN
// are dropped. It resamples as Mean does, the same units for both. p is
// the two-sided bootstrap p-value of no difference — twice the smaller
// share of resampled differences on either side of zero, at most 1 — and
// 1 where the difference is identically zero.
func (b Bootstrap) Diff(a, b2 [][]float64) (Interval, float64) {
	d, gidx := designOf(a, b2)
	iv := Interval{Estimate: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Units: d.units(), Groups: len(d.groups)}
	if iv.Units == 0 {
		return iv, 1
	}
	iv.Estimate = pointMean(d, gidx, func(g, i int) float64 { return a[g][i] - b2[g][i] })
	if iv.Units < 2 {
		return iv, 1
	}
	zero := true
	for k, units := range d.groups {
		for _, i := range units {
			if a[gidx[k]][i] != b2[gidx[k]][i] {
				zero = false
			}
		}
	}
	if zero {
		iv.Lo, iv.Hi = 0, 0
		return iv, 1
	}
	r := newResampler(d, b.Seed)
	reps := make([]float64, b.resamples())
	below, above := 0, 0
	for k := range reps {
		r.draw()
		v := r.diffOf(a, b2, gidx)
		reps[k] = v
		if v <= 0 {
			below++
		}
		if v >= 0 {
			above++
		}
	}
	iv.Lo, iv.Hi = percentile(reps, b.level())
	p := 2 * float64(min(below, above)) / float64(len(reps))
	return iv, min(1, p)
}

// Replicates returns, for several series measured on the same units
// (series[m][g][i]), each series' mean in each bootstrap resample, every
// series under the same resampled units: out[r][m]. Units where any
// series is NaN are left out of all.
func (b Bootstrap) Replicates(series [][][]float64) [][]float64 {
	if len(series) == 0 {
		return nil
	}
	d, gidx := designOf(series...)
	if d.units() < 1 {
		return nil
	}
	r := newResampler(d, b.Seed)
	out := make([][]float64, b.resamples())
	flat := make([]float64, len(out)*len(series))
	for k := range out {
		r.draw()
		out[k] = flat[k*len(series) : (k+1)*len(series)]
		for m, s := range series {
			out[k][m] = r.meanOf(s, gidx)
		}
	}
	return out
}

// HalfWidthBound is the largest half-width a 95 % interval of the mean of
// n values within [lo, hi] can have by the normal approximation, with the
// largest variance such values allow ((hi − lo)²/4, half of them at each
// end): 1.96·(hi − lo)/(2√n). For accuracies (0/1) it is the worst-case
// binomial bound 0.98/√n.
func HalfWidthBound(n int, lo, hi float64) float64 {
	if n < 1 {
		return math.Inf(1)
	}
	return 1.959963984540054 * (hi - lo) / (2 * math.Sqrt(float64(n)))
}

// MarshalJSON implements json.Marshaler: JSON has no NaN, so an undefined
// estimate or end is written as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Estimate *float64 `json:"estimate"`
		Lo       *float64 `json:"lo"`
		Hi       *float64 `json:"hi"`
		Units    int      `json:"units"`
		Groups   int      `json:"groups"`
	}{Null(iv.Estimate), Null(iv.Lo), Null(iv.Hi), iv.Units, iv.Groups})
}

// UnmarshalJSON implements json.Unmarshaler, reading null as NaN.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var v struct {
		Estimate, Lo, Hi *float64
		Units, Groups    int
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	nan := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*iv = Interval{Estimate: nan(v.Estimate), Lo: nan(v.Lo), Hi: nan(v.Hi), Units: v.Units, Groups: v.Groups}
	return nil
}

// Null is x for JSON: nil (null) where x is NaN or infinite, which JSON
// cannot hold.
func Null(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
