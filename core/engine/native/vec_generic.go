//go:build !goexperiment.simd || !amd64

package native

func pool2(y, top, bot []float32, w, c int, floor float32) { pool2Scalar(y, top, bot, w, c, floor) }

func route2(dtop, dbot, top, bot, y, g []float32, w, c int, floor float32, gate bool) {
	route2Scalar(dtop, dbot, top, bot, y, g, w, c, floor, gate)
}

func addTo(dst, src []float32) { addToScalar(dst, src) }
