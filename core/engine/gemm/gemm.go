package gemm

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Kernel multiplies row-major float32 matrices.
type Kernel interface {
	// Sgemm computes C = alpha·op(A)·op(B) + beta·C with op(A) m×k, op(B) k×n.
	Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	// Name says which implementation runs, e.g. "openblas SkylakeX (2 threads)".
	Name() string
}

// Gonum is the pure-Go kernel of gonum.org/v1/gonum/blas/gonum.
type Gonum struct{}

// Sgemm implements Kernel.
func (Gonum) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	gonum.Implementation{}.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Name implements Kernel.
func (Gonum) Name() string { return "gonum (pure Go)" }

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// Best returns the fastest kernel available on this machine: single-threaded
// OpenBLAS split over all cores when it loads, gonum otherwise. The error, if
// any, says why OpenBLAS was not used; the returned kernel is always usable.
func Best() (Kernel, error) {
	k, err := LoadOpenBLAS()
	if err != nil {
		return Gonum{}, err
	}
	SetThreads(1)
	return NewParallel(k, 0), nil
}
