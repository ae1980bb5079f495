//go:build goexperiment.simd && amd64

package native

import "simd/archsimd"

// pool2 is pool2Scalar eight channels at a time.
func pool2(y, top, bot []float32, w, c int, floor float32) {
	if c%8 != 0 || !archsimd.X86.AVX2() {
		pool2Scalar(y, top, bot, w, c, floor)
		return
	}
	f := archsimd.BroadcastFloat32x8(floor)
	for ox := range w {
		i, j := 2*ox*c, (2*ox+1)*c
		for ch := 0; ch < c; ch += 8 {
			a := archsimd.LoadFloat32x8Slice(top[i+ch:])
			b := archsimd.LoadFloat32x8Slice(top[j+ch:])
			p := archsimd.LoadFloat32x8Slice(bot[i+ch:])
			q := archsimd.LoadFloat32x8Slice(bot[j+ch:])
			a.Max(b).Max(p.Max(q)).Max(f).StoreSlice(y[ox*c+ch:])
		}
	}
}

// route2 is route2Scalar eight channels at a time: each input in turn takes
// what gradient is left where it equals the maximum, and leaves none.
func route2(dtop, dbot, top, bot, y, g []float32, w, c int, floor float32, gate bool) {
	if c%8 != 0 || !archsimd.X86.AVX2() {
		route2Scalar(dtop, dbot, top, bot, y, g, w, c, floor, gate)
		return
	}
	f := archsimd.BroadcastFloat32x8(floor)
	var zero archsimd.Float32x8
	for ox := range w {
		i, j := 2*ox*c, (2*ox+1)*c
		for ch := 0; ch < c; ch += 8 {
			m := archsimd.LoadFloat32x8Slice(y[ox*c+ch:])
			left := archsimd.LoadFloat32x8Slice(g[ox*c+ch:])
			if gate {
				left = left.Masked(m.Greater(zero))
			}
			hit := archsimd.LoadFloat32x8Slice(top[i+ch:]).Max(f).Equal(m)
			left.Masked(hit).StoreSlice(dtop[i+ch:])
			left = zero.Merge(left, hit)
			hit = archsimd.LoadFloat32x8Slice(top[j+ch:]).Max(f).Equal(m)
			left.Masked(hit).StoreSlice(dtop[j+ch:])
			left = zero.Merge(left, hit)
			hit = archsimd.LoadFloat32x8Slice(bot[i+ch:]).Max(f).Equal(m)
			left.Masked(hit).StoreSlice(dbot[i+ch:])
			left = zero.Merge(left, hit)
			left.StoreSlice(dbot[j+ch:]) // the last input takes what is left
		}
	}
}

// addTo is addToScalar eight floats at a time.
func addTo(dst, src []float32) {
	n := len(src)
	i := 0
	if archsimd.X86.AVX2() {
		for ; i+8 <= n; i += 8 {
			archsimd.LoadFloat32x8Slice(dst[i:]).Add(archsimd.LoadFloat32x8Slice(src[i:])).StoreSlice(dst[i:])
		}
	}
	addToScalar(dst[i:n], src[i:])
}
