package stats

import (
	"math/bits"
	"math/rand/v2"
)

// streamSalt is the PCG's second seed word: every function of the package
// draws from NewPCG(seed, streamSalt), so one seed names one stream.
const streamSalt = 0x9e3779b97f4a7c15

// newRNG is the package's one generator. The PCG's output (PCG-DXSM) is
// fixed by Go; the draws below are this package's own, so the same seed
// gives the same numbers on every Go version, not only on this one.
func newRNG(seed uint64) *rand.PCG { return rand.NewPCG(seed, streamSalt) }

// below returns a uniform integer in [0, n), n > 0, by Lemire's
// multiply-and-reject (exactly uniform; the rejection is taken with
// probability below n/2⁶⁴).
func below(r *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n { // rare
		hi = belowRetry(r, n, hi, lo)
	}
	return hi
}

func belowRetry(r *rand.PCG, n, hi, lo uint64) uint64 {
	thresh := -n % n
	for lo < thresh {
		hi, lo = bits.Mul64(r.Uint64(), n)
	}
	return hi
}

// Index pairs. The bootstrap's hot loops (sample.replicate) turn one PCG
// output x into two uniform integers in [0, n), 0 < n < 2³², by Lemire's
// method on its 32-bit halves — half the generator's work of one output
// per index, which is most of a bootstrap's time — written out there
// because no function doing it inlines:
//
//	lo, hi := (x&(1<<32-1))*n, (x>>32)*n
//	if uint32(lo) < n || uint32(hi) < n { // rare: below n/2³¹
//		lo, hi = rejectPair(r, n, lo, hi)
//	}
//	// lo>>32 and hi>>32 are the two integers.

// rejectPair is the rare path of an index pair: each product redrawn
// until Lemire's method accepts it.
func rejectPair(r *rand.PCG, n uint32, lo, hi uint64) (uint64, uint64) {
	return reject32(r, n, lo), reject32(r, n, hi)
}

// one returns a uniform integer in [0, n), 0 < n < 2³², from one output's
// low half.
func one(r *rand.PCG, n uint32) uint32 {
	return uint32(reject32(r, n, uint64(uint32(r.Uint64()))*uint64(n)) >> 32)
}

// reject32 returns the product m = x·n of uniform 32 bits x, or of fresh
// ones in the rare case Lemire's method rejects it (its low half below
// 2³² mod n), so that m's high half is uniform in [0, n).
func reject32(r *rand.PCG, n uint32, m uint64) uint64 {
	if uint32(m) >= n {
		return m
	}
	thresh := -n % n
	for uint32(m) < thresh {
		m = uint64(uint32(r.Uint64())) * uint64(n)
	}
	return m
}

// shuffle permutes x uniformly in place (Fisher–Yates).
func shuffle[T any](r *rand.PCG, x []T) {
	for i := len(x) - 1; i > 0; i-- {
		j := below(r, uint64(i+1))
		x[i], x[j] = x[j], x[i]
	}
}
