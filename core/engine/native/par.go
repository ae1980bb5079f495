package native

import (
	"runtime"
	"sync"
)

// parallel splits [0,n) into contiguous ranges, one per core, and runs fn on
// each; small n runs inline. Ranges are fixed for a given n and core count, so
// any reduction done per range and combined in range order is deterministic.
func parallel(n int, fn func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if w > n {
		w = n
	}
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < w; i++ {
		lo, hi := i*n/w, (i+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// grow returns buf resliced to n elements, reallocating only when it is too small.
func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// fillRows sets every row of the m×k matrix dst to row.
func fillRows(dst, row []float32, m int) {
	k := len(row)
	parallel(m, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			copy(dst[r*k:r*k+k], row)
		}
	})
}
