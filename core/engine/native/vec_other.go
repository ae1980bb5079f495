//go:build !amd64 || purego

package native

// Off amd64, and under the purego build tag, the kernels are the scalar
// ones of vec.go and unetvec.go.

// Kernels names the kernels this build runs.
func Kernels() string { return "scalar" }

func pool2(y, top, bot []float32, w, c int, floor float32) { pool2Scalar(y, top, bot, w, c, floor) }

func route2(dtop, dbot, top, bot, y, g []float32, w, c int, floor float32, gate bool) {
	route2Scalar(dtop, dbot, top, bot, y, g, w, c, floor, gate)
}

func addTo(dst, src []float32) { addToScalar(dst, src) }

func winoIn(v []float32, plane int, x []float32, row, c int) { winoInScalar(v, plane, x, row, c) }

func winoInAdj(dx []float32, row int, dv []float32, plane, c int) {
	winoInAdjScalar(dx, row, dv, plane, c)
}

func winoOut(y []float32, row int, m []float32, plane int, bias, res []float32, c, rows, cols int) {
	winoOutScalar(y, row, m, plane, bias, res, c, rows, cols)
}

func winoOutAdj(dm []float32, plane int, dy []float32, row, c, rows, cols int) {
	winoOutAdjScalar(dm, plane, dy, row, c, rows, cols)
}

func chanSums(sum, x []float32, c int) { chanSumsScalar(sum, x, c) }

func chanSqDevs(sq, x, mean []float32, c int) { chanSqDevsScalar(sq, x, mean, c) }

func affineSiLU(y, sig, x, scale, shift []float32, c int) {
	affineSiLUScalar(y, sig, x, scale, shift, c)
}

func siluGrad(da, dy, x, sig, scale, shift, mean, inv, sda, sdax []float32, c int) {
	siluGradScalar(da, dy, x, sig, scale, shift, mean, inv, sda, sdax, c)
}

func affine3(dx, da, x, p, q, r []float32, c int) { affine3Scalar(dx, da, x, p, q, r, c) }

func im2colRows(dst, src []float32, k, run, srcRow, step, count int) {
	im2colRowsScalar(dst, src, k, run, srcRow, step, count)
}

func col2imRows(dst, src []float32, k, run, dstRow, step, count int) {
	col2imRowsScalar(dst, src, k, run, dstRow, step, count)
}

// useAVX512 is gemm16's choice of AVX-512 tiles: none here.
var useAVX512 = false

func gemm16(c, a, b []float32, m, n, k, ars, aks, ldb, ldc int, add bool) {
	gemm16Scalar(c, a, b, m, n, k, ars, aks, ldb, ldc, add)
}

func geluVec(y, x []float32, c float32) { geluScalar(y, x, c) }

func geluGradVec(dx, dy, x []float32, c float32) { geluGradScalar(dx, dy, x, c) }

func expSumVec(y, x []float32, m float32, s *[8]float64) { expSumScalar(y, x, m, s) }

func scaleVec(y []float32, a float32) { scaleScalar(y, a) }

func sums64Vec(x []float32, s *[8]float64) { sums64Scalar(x, s) }

func sqDevs64Vec(x []float32, m float64, s *[8]float64) { sqDevs64Scalar(x, m, s) }

func normAffineVec(y, xh, x, w, b []float32, m, rs float64) { normAffineScalar(y, xh, x, w, b, m, rs) }

func dots64Vec(x, y []float32, s *[8]float64) { dots64Scalar(x, y, s) }

func softmaxGradVec(dx, dy, y []float32, s float32) { softmaxGradScalar(dx, dy, y, s) }
