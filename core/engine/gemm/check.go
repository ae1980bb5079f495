package gemm

import "fmt"

// checkSizes panics, as gonum does, when a slice is too short for the matrix
// it is said to hold: C code must never read or write past a Go slice.
func checkSizes(transA, transB bool, m, n, k, la, lda, lb, ldb, lc, ldc int) {
	ra, ca := m, k
	if transA {
		ra, ca = k, m
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	need := func(name string, l, rows, cols, ld int) {
		if rows == 0 || cols == 0 {
			return
		}
		if ld < cols || l < (rows-1)*ld+cols {
			panic(fmt.Sprintf("gemm: %s is %d long, too short for %d×%d with stride %d", name, l, rows, cols, ld))
		}
	}
	need("A", la, ra, ca, lda)
	need("B", lb, rb, cb, ldb)
	need("C", lc, m, n, ldc)
}
