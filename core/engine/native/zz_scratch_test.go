package native

import (
	"fmt"
	"syscall"
	"testing"

	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
)

func cpuSec() float64 {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return float64(r.Utime.Sec+r.Stime.Sec) + float64(r.Utime.Usec+r.Stime.Usec)/1e6
}

func BenchmarkZZCPUTrain(b *testing.B) {
	u, x, ts := benchUNet(b)
	g := func(first int, pred, d []float32) { copy(d, pred) }
	u.Gradient(x, ts, 64, engine.ParamGrad, g)
	c0 := cpuSec()
	for b.Loop() {
		u.Gradient(x, ts, 64, engine.ParamGrad, g)
	}
	b.ReportMetric(64*float64(b.N)/(cpuSec()-c0)*2, "img/2cpu-s")
}

func BenchmarkZZCPUFwd(b *testing.B) {
	u, x, ts := benchUNet(b)
	u.Forward(x, ts, 64)
	c0 := cpuSec()
	for b.Loop() {
		u.Forward(x, ts, 64)
	}
	b.ReportMetric(64*float64(b.N)/(cpuSec()-c0)*2, "img/2cpu-s")
}

func BenchmarkZZShapes(b *testing.B) {
	k0, _ := gemm.Best()
	k := gemm.Serial(k0)
	for _, s := range [][3]int{{256, 32, 32}, {128, 64, 64}, {64, 128, 64}, {512, 32, 32}, {256, 64, 64}, {1024, 32, 32}} {
		nt, cin, cout := s[0], s[1], s[2]
		V, U, M, dU := make([]float32, nt*cin), make([]float32, cin*cout), make([]float32, nt*cout), make([]float32, cin*cout)
		fl := float64(2 * nt * cin * cout)
		b.Run(fmt.Sprintf("fwd_%d_%d_%d", nt, cin, cout), func(b *testing.B) {
			for b.Loop() {
				k.Sgemm(false, false, nt, cout, cin, 1, V, cin, U, cout, 0, M, cout)
			}
			b.ReportMetric(fl*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("dU_%d_%d_%d", nt, cin, cout), func(b *testing.B) {
			for b.Loop() {
				k.Sgemm(true, false, cin, cout, nt, 1, V, cin, M, cout, 1, dU, cout)
			}
			b.ReportMetric(fl*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("dV_%d_%d_%d", nt, cin, cout), func(b *testing.B) {
			for b.Loop() {
				k.Sgemm(false, true, nt, cin, cout, 1, M, cout, U, cout, 0, V, cin)
			}
			b.ReportMetric(fl*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkZZWinoIn(b *testing.B) {
	c := 32
	nt := 256
	v := make([]float32, 16*nt*c)
	x := make([]float32, 30*30*c)
	for b.Loop() {
		for k := 0; k < nt; k++ {
			ty, tx := (k/14)%14, k%14
			winoIn(v[k*c:], nt*c, x[(2*ty*30+2*tx)*c:], 30*c, c)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nt), "ns/tile")
}

func BenchmarkZZWinoInScalar(b *testing.B) {
	c := 32
	nt := 256
	v := make([]float32, 16*nt*c)
	x := make([]float32, 30*30*c)
	for b.Loop() {
		for k := 0; k < nt; k++ {
			ty, tx := (k/14)%14, k%14
			winoInScalar(v[k*c:], nt*c, x[(2*ty*30+2*tx)*c:], 30*c, c)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nt), "ns/tile")
}

func BenchmarkZZWinoInPad(b *testing.B) {
	c := 32
	nt := 256
	plane := nt*c + 16
	v := make([]float32, 16*plane)
	x := make([]float32, 30*30*c)
	for b.Loop() {
		for k := 0; k < nt; k++ {
			ty, tx := (k/14)%14, k%14
			winoIn(v[k*c:], plane, x[(2*ty*30+2*tx)*c:], 30*c, c)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nt), "ns/tile")
}
