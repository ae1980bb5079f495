// Package perturb removes features from images: it ranks the pixels or
// square patches of an attribution map, turns a ranking and a count into a
// keep-mask, and fills the removed pixels from a reference (zero, channel
// mean, dataset mean, Gaussian blur, or ROAD's noisy linear imputation).
// The removal protocols and TRACE share it, so every protocol removes the
// same features for the same map.
package perturb

import (
	"fmt"
	"math"
	"slices"
)

// Features partitions an H×W image into the units that are removed
// together: single pixels (Grid 0) or the patches of a Grid×Grid grid, rows
// and columns split as evenly as the size allows (TRACE's patches).
type Features struct {
	H, W, Grid int
	of         []int // pixel → feature
}

// NewFeatures partitions an H×W image; grid 0 means one feature per pixel.
func NewFeatures(H, W, grid int) (Features, error) {
	if H < 1 || W < 1 {
		return Features{}, fmt.Errorf("image %d×%d: need positive sides", H, W)
	}
	if grid < 0 || grid > H || grid > W {
		return Features{}, fmt.Errorf("patch grid %d×%d does not fit %d×%d images", grid, grid, H, W)
	}
	f := Features{H: H, W: W, Grid: grid, of: make([]int, H*W)}
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			if grid == 0 {
				f.of[y*W+x] = y*W + x
			} else {
				f.of[y*W+x] = (y*grid/H)*grid + x*grid/W
			}
		}
	}
	return f, nil
}

// N is the number of features.
func (f Features) N() int {
	if f.Grid == 0 {
		return f.H * f.W
	}
	return f.Grid * f.Grid
}

// Of is the feature that pixel p (row-major) belongs to.
func (f Features) Of(p int) int { return f.of[p] }

// Scores sums an H×W map over each feature. A NaN or infinite value is an
// error: it would rank arbitrarily.
func (f Features) Scores(m []float32) ([]float32, error) {
	return f.ScoresInto(make([]float32, f.N()), m)
}

// ScoresInto is Scores into s (of N values), which it returns.
func (f Features) ScoresInto(s, m []float32) ([]float32, error) {
	if len(m) != f.H*f.W {
		return nil, fmt.Errorf("map of %d values, want %d×%d", len(m), f.H, f.W)
	}
	clear(s)
	for p, v := range m {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("map value %g at pixel (%d, %d)", v, p/f.W, p%f.W)
		}
		s[f.of[p]] += v
	}
	return s, nil
}

// Order ranks features: the most important first when morf (MoRF), the
// least important first otherwise (LeRF). Ties keep the lower index first in
// both orders (TRACE, Appendix B.1), so the two orders are not reverses of
// each other when scores tie.
func Order(scores []float32, morf bool) []int {
	return OrderInto(make([]int, len(scores)), scores, morf)
}

// OrderInto is Order into idx (of len(scores)), which it returns.
func OrderInto(idx []int, scores []float32, morf bool) []int {
	if math.MaxInt == math.MaxInt64 && uint64(len(scores)) <= math.MaxUint32 && !slices.ContainsFunc(scores, isNaN) {
		// Each feature's score and index in one integer, ordered as the
		// comparison below orders them (ties by index), so that a plain
		// sort of integers does the stable sort's work in a fraction of
		// its time, in place.
		for i, v := range scores {
			k := sortable(v)
			if morf {
				k = ^k
			}
			idx[i] = int(uint64(k)<<32 | uint64(i) ^ 1<<63) // the top bit flipped: unsigned order as signed
		}
		slices.Sort(idx)
		for i, k := range idx {
			idx[i] = int(uint32(k))
		}
		return idx
	}
	return orderStable(idx, scores, morf)
}

// orderStable is OrderInto by its definition: a stable sort of the
// indices by score.
func orderStable(idx []int, scores []float32, morf bool) []int {
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		sa, sb := scores[a], scores[b]
		if morf {
			sa, sb = sb, sa
		}
		switch {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return 0
	})
	return idx
}

// sortable maps a float32 to a uint32 in the same order, −0 and +0 to the
// same value (NaN excepted).
func sortable(v float32) uint32 {
	if v == 0 {
		v = 0 // −0 too
	}
	b := math.Float32bits(v)
	if b&(1<<31) != 0 {
		return ^b
	}
	return b | 1<<31
}

func isNaN(v float32) bool { return v != v }

// Count is the number of the n features that a drop rate removes, rounded
// to the nearest; the rate must lie in (0, 1).
func Count(rate float64, n int) (int, error) {
	if !(rate > 0 && rate < 1) {
		return 0, fmt.Errorf("drop rate %g outside (0, 1)", rate)
	}
	return int(math.Round(rate * float64(n))), nil
}

// Keep writes the H×W keep-mask (1 kept, 0 removed: ROAD's convention) that
// removes the first k features of order into dst.
func (f Features) Keep(dst []float32, order []int, k int) {
	removed := make([]bool, f.N())
	for _, j := range order[:k] {
		removed[j] = true
	}
	for p := range dst[:f.H*f.W] {
		if removed[f.of[p]] {
			dst[p] = 0
		} else {
			dst[p] = 1
		}
	}
}

// Ranks hold, for each of many images, each feature's place in the image's
// removal order (0: removed first): all a keep-mask needs, in two bytes a
// feature where features are fewer than 65 536 — a quarter of what the
// orders take as ints, which for a 60 000-image training set is 280 MB.
type Ranks struct {
	n   int // features per image
	r16 []uint16
	r32 []int32
}

// NewRanks holds the ranks of images images of n features each.
func NewRanks(images, n int) Ranks {
	if n <= math.MaxUint16+1 {
		return Ranks{n: n, r16: make([]uint16, images*n)}
	}
	return Ranks{n: n, r32: make([]int32, images*n)}
}

// Set records image i's order (features, first removed first).
func (r Ranks) Set(i int, order []int) {
	for place, j := range order {
		if r.r16 != nil {
			r.r16[i*r.n+j] = uint16(place)
		} else {
			r.r32[i*r.n+j] = int32(place)
		}
	}
}

// rank is feature j's place in image i's order.
func (r Ranks) rank(i, j int) int {
	if r.r16 != nil {
		return int(r.r16[i*r.n+j])
	}
	return int(r.r32[i*r.n+j])
}

// KeepRanked writes image i's H×W keep-mask that removes the first k
// features of its order into dst: Keep of the order r was Set from.
func (f Features) KeepRanked(dst []float32, r Ranks, i, k int) {
	for p := range dst[:f.H*f.W] {
		if r.rank(i, f.of[p]) < k {
			dst[p] = 0
		} else {
			dst[p] = 1
		}
	}
}
