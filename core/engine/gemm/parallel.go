package gemm

import (
	"fmt"
	"runtime"
	"sync"
)

// Parallel splits each GEMM over Workers goroutines and runs the pieces on a
// single-threaded kernel. Splitting ourselves, rather than letting OpenBLAS
// start its own threads, matters: OpenBLAS's idle threads spin for up to
// ~0.1 s after every call and steal the cores that the engine's elementwise
// work needs between GEMMs.
//
// C is split by rows when m is large, by columns when n is, and otherwise
// along k (the case of weight gradients, m×n small and k the batch), where
// each worker sums into its own scratch matrix and the parts are added in a
// fixed order, so results do not depend on scheduling. They do depend on
// Workers: which split a product takes, and where its pieces end, follow
// it, and OpenBLAS's sums follow the pieces' shapes (a k split, and even
// narrow column blocks, change the last bits), so one product can differ in
// its last bits between machines of different core counts. The engine's
// per-core replicas run on Serial and do not have this property.
type Parallel struct {
	Kernel  Kernel
	Workers int
	scratch *sync.Pool
}

// NewParallel wraps k, single-threaded, to run on workers goroutines (≤0: one
// per core).
func NewParallel(k Kernel, workers int) Parallel {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return Parallel{Kernel: k, Workers: workers, scratch: &sync.Pool{}}
}

// Name implements Kernel.
func (p Parallel) Name() string { return fmt.Sprintf("%s ×%d workers", p.Kernel.Name(), p.Workers) }

const minRowsPerWorker = 64

// Sgemm implements Kernel.
func (p Parallel) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	w := p.Workers
	flops := 2 * m * n * k
	if w <= 1 || flops < 1<<20 {
		p.Kernel.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	var wg sync.WaitGroup
	run := func(f func(i int)) {
		for i := 0; i < w; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); f(i) }()
		}
		wg.Wait()
	}
	switch {
	case m >= w*minRowsPerWorker:
		run(func(i int) {
			r0, r1 := i*m/w, (i+1)*m/w
			aOff := r0 * lda
			if transA {
				aOff = r0
			}
			p.Kernel.Sgemm(transA, transB, r1-r0, n, k, alpha, a[aOff:], lda, b, ldb, beta, c[r0*ldc:], ldc)
		})
	case n >= w*minRowsPerWorker:
		run(func(i int) {
			c0, c1 := i*n/w, (i+1)*n/w
			bOff := c0
			if transB {
				bOff = c0 * ldb
			}
			p.Kernel.Sgemm(transA, transB, m, c1-c0, k, alpha, a, lda, b[bOff:], ldb, beta, c[c0:], ldc)
		})
	default:
		// Split the sum over k; worker 0 writes C itself, the others scratch.
		parts := make([][]float32, w)
		for i := 1; i < w; i++ {
			parts[i] = p.get(m * n)
		}
		run(func(i int) {
			k0, k1 := i*k/w, (i+1)*k/w
			aOff, bOff := k0, k0*ldb
			if transA {
				aOff = k0 * lda
			}
			if transB {
				bOff = k0
			}
			if i == 0 {
				p.Kernel.Sgemm(transA, transB, m, n, k1-k0, alpha, a[aOff:], lda, b[bOff:], ldb, beta, c, ldc)
				return
			}
			p.Kernel.Sgemm(transA, transB, m, n, k1-k0, alpha, a[aOff:], lda, b[bOff:], ldb, 0, parts[i], n)
		})
		for i := 1; i < w; i++ {
			for r := 0; r < m; r++ {
				dst, src := c[r*ldc:r*ldc+n], parts[i][r*n:(r+1)*n]
				for j, v := range src {
					dst[j] += v
				}
			}
			p.scratch.Put(&parts[i])
		}
	}
}

func (p Parallel) get(size int) []float32 {
	if v, ok := p.scratch.Get().(*[]float32); ok && cap(*v) >= size {
		return (*v)[:size]
	}
	return make([]float32, size)
}

// Serial returns the single-threaded kernel under k: the kernel a Parallel
// splits its work over, or k itself. Callers that already keep every core
// busy with their own goroutines run on it.
func Serial(k Kernel) Kernel {
	if p, ok := k.(Parallel); ok {
		return p.Kernel
	}
	return k
}
