package native

import (
	"runtime"
	"sync"
	"sync/atomic"

	"faithlab/core/engine"
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

// fillRows sets every row of the m×k matrix dst to row: each core copies row
// once into its range and then doubles what it has written, so that a range
// of many short rows takes a few long copies.
func fillRows(dst, row []float32, m int) {
	k := len(row)
	parallel(m, func(lo, hi int) {
		d := dst[lo*k : hi*k]
		for n := copy(d, row); n < len(d); {
			n += copy(d[n:], d[:n])
		}
	})
}

// eachPiece runs fn(w, p) for pieces p = 0 … pieces−1 on workers
// goroutines w = 0 … workers−1, each taking the next piece when it is done,
// and returns the first error; a worker stops at its first error.
func eachPiece(pieces, workers int, fn func(w, p int) error) error {
	var next atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				p := int(next.Add(1)) - 1
				if p >= pieces {
					return
				}
				if errs[w] = fn(w, p); errs[w] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// addSlots adds to the parameters' gradients the pieces' gradients held in
// slots (size values per piece, in params' order), summing the pieces in
// piece order whatever the core count; sum is scratch.
func addSlots(params []*engine.Param, slots []float32, pieces, size int, sum *[]float32) {
	total := grow(sum, size)
	parallel(size, func(lo, hi int) {
		acc := total[lo:hi]
		copy(acc, slots[lo:hi])
		for p := 1; p < pieces; p++ {
			for j, v := range slots[p*size+lo : p*size+hi] {
				acc[j] += v
			}
		}
	})
	for _, q := range params {
		addToScalar(q.Grad, total[:len(q.Grad)])
		total = total[len(q.Grad):]
	}
}
