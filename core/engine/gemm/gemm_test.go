package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func naive(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			c[i*ldc+j] = alpha*float32(s) + beta*c[i*ldc+j]
		}
	}
}

func TestKernelsAgreeWithNaive(t *testing.T) {
	kernels := []Kernel{Gonum{}, NewParallel(Gonum{}, 3)}
	if k, err := LoadOpenBLAS(); err == nil {
		kernels = append(kernels, k, NewParallel(k, 2))
	} else {
		t.Logf("only gonum: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kern := range kernels {
		for _, tc := range []struct {
			m, n, k  int
			ta, tb   bool
			alpha, b float32
		}{
			{1, 1, 1, false, false, 1, 0},
			{7, 5, 3, false, false, 1, 0},
			{7, 5, 3, true, false, 2, 1},
			{7, 5, 3, false, true, 1, 0.5},
			{64, 33, 25, true, true, 1, 0},
			{300, 32, 25, false, true, 1, 0},
			{300, 32, 25, true, false, 1, 1},
			{32, 300, 40, false, true, 0.5, 1},
			{32, 300, 40, true, true, 1, 0},
			{32, 25, 3000, true, false, 1, 1},
			{32, 25, 3000, false, true, 1, 0.5},
			{32, 25, 3000, true, true, 2, 0},
		} {
			ra, ca := tc.m, tc.k
			if tc.ta {
				ra, ca = tc.k, tc.m
			}
			rb, cb := tc.k, tc.n
			if tc.tb {
				rb, cb = tc.n, tc.k
			}
			a := randn(rng, ra*ca)
			b := randn(rng, rb*cb)
			c := randn(rng, tc.m*tc.n)
			want := append([]float32(nil), c...)
			naive(tc.ta, tc.tb, tc.m, tc.n, tc.k, tc.alpha, a, ca, b, cb, tc.b, want, tc.n)
			kern.Sgemm(tc.ta, tc.tb, tc.m, tc.n, tc.k, tc.alpha, a, ca, b, cb, tc.b, c, tc.n)
			for i := range c {
				// float32 sums of k products of unit normals err by about ε·√k.
				if d := math.Abs(float64(c[i] - want[i])); d > 1e-4*math.Abs(float64(want[i]))+1e-6*float64(tc.k) {
					t.Fatalf("%s %+v: c[%d]=%g want %g", kern.Name(), tc, i, c[i], want[i])
				}
			}
		}
	}
}

func randn(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

func BenchmarkSgemmConv2(b *testing.B) {
	// conv2 of goar-cnn over a batch of 256: M = 256·10·10, K = 32·9, N = 64.
	kern, err := Best()
	if err != nil {
		b.Log(err)
	}
	m, n, k := 25600, 64, 288
	A, B, C := make([]float32, m*k), make([]float32, n*k), make([]float32, m*n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		kern.Sgemm(false, true, m, n, k, 1, A, k, B, k, 0, C, n)
	}
	b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.Logf("kernel %s", kern.Name())
}
