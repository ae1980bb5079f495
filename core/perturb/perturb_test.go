package perturb

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestOrderBreaksTiesByIndex(t *testing.T) {
	s := []float32{1, 3, 3, 0, 1}
	for _, tc := range []struct {
		morf bool
		want []int
	}{
		{true, []int{1, 2, 0, 4, 3}},
		{false, []int{3, 0, 4, 1, 2}},
	} {
		if got := Order(s, tc.morf); !slices.Equal(got, tc.want) {
			t.Errorf("morf=%v: order %v, want %v", tc.morf, got, tc.want)
		}
	}
}

// OrderInto sorts integers that carry each score and index; it must give
// exactly the stable sort by score it replaces, on ties, ±0, negative and
// infinite scores, in both orders (and with a NaN, where it falls back).
func TestOrderIsTheStableSortByScore(t *testing.T) {
	stable := func(s []float32, morf bool) []int { return orderStable(make([]int, len(s)), s, morf) }
	rng := rand.New(rand.NewPCG(3, 4))
	negZero := float32(math.Copysign(0, -1))
	special := []float32{0, negZero, 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)), math.SmallestNonzeroFloat32, -math.MaxFloat32}
	for trial := range 300 {
		n := 1 + rng.IntN(700)
		s := make([]float32, n)
		for i := range s {
			switch rng.IntN(4) {
			case 0:
				s[i] = special[rng.IntN(len(special))]
			case 1:
				s[i] = float32(rng.IntN(5) - 2) // many ties
			default:
				s[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
			}
		}
		if trial%50 == 0 {
			s[rng.IntN(n)] = float32(math.NaN())
		}
		for _, morf := range []bool{true, false} {
			if got, want := Order(s, morf), stable(s, morf); !slices.Equal(got, want) {
				t.Fatalf("trial %d, morf=%v, %d scores: order differs from the stable sort's", trial, morf, n)
			}
		}
	}
}

func TestFeaturesAndKeep(t *testing.T) {
	f, err := NewFeatures(4, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	m := make([]float32, 16)
	m[0], m[15] = 5, 2 // patch 0 (top-left) and patch 3 (bottom-right)
	s, err := f.Scores(m)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s, []float32{5, 0, 0, 2}) {
		t.Fatalf("patch scores %v", s)
	}
	keep := make([]float32, 16)
	f.Keep(keep, Order(s, true), 2) // remove patches 0 and 3
	want := []float32{0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0}
	if !slices.Equal(keep, want) {
		t.Fatalf("keep %v, want %v", keep, want)
	}
	if _, err := f.Scores([]float32{float32(math.NaN())}); err == nil {
		t.Error("short map accepted")
	}
	m[3] = float32(math.NaN())
	if _, err := f.Scores(m); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN map: %v", err)
	}
	for _, r := range []float64{0, 1, -0.1, math.NaN()} {
		if _, err := Count(r, 10); err == nil {
			t.Errorf("drop rate %g accepted", r)
		}
	}
	if _, err := NewFeatures(4, 4, 5); err == nil {
		t.Error("5×5 grid on 4×4 image accepted")
	}
}

// neighbourMean is the ROAD definition: the renormalised weighted mean of
// pixel p's in-image 8-neighbours in channel plane img.
func neighbourMean(img []float32, H, W, p int) float64 {
	var s, ws float64
	y, x := p/W, p%W
	for _, nb := range roadNeighbours {
		yy, xx := y+nb.dy, x+nb.dx
		if yy >= 0 && yy < H && xx >= 0 && xx < W {
			s += nb.w * float64(img[yy*W+xx])
			ws += nb.w
		}
	}
	return s / ws
}

func randomImage(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = rng.Float32()
	}
	return x
}

func randomMask(rng *rand.Rand, hw int, frac float64) []float32 {
	k := make([]float32, hw)
	for i := range k {
		if rng.Float64() >= frac {
			k[i] = 1
		}
	}
	return k
}

// TestROADResidual checks every imputed pixel against the definition, on
// random masks of every density (borders and corners included) and colour.
func TestROADResidual(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		C, H, W int
		frac    float64
	}{
		{1, 28, 28, 0.1}, {1, 28, 28, 0.5}, {1, 28, 28, 0.9}, {1, 28, 28, 0.99},
		{3, 32, 32, 0.5}, {3, 7, 11, 0.7}, {1, 1, 5, 0.5}, {2, 5, 1, 0.6},
		{3, 224, 224, 0.5}, // the iterative solver's
	} {
		hw := tc.H * tc.W
		img := randomImage(rng, tc.C*hw)
		keep := randomMask(rng, hw, tc.frac)
		keep[rng.IntN(hw)] = 1
		out := slices.Clone(img)
		if err := (ROAD{}).Fill(out, []int{tc.C, tc.H, tc.W}, keep, nil); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for c := 0; c < tc.C; c++ {
			plane := out[c*hw : (c+1)*hw]
			for p, k := range keep {
				if k == 1 {
					if plane[p] != img[c*hw+p] {
						t.Fatalf("%v: kept pixel %d changed", tc, p)
					}
					continue
				}
				worst = max(worst, math.Abs(float64(plane[p])-neighbourMean(plane, tc.H, tc.W, p)))
			}
		}
		if worst > 1e-5 {
			t.Errorf("%dx%dx%d at %.0f%% removed: worst residual %g > 1e-5", tc.C, tc.H, tc.W, 100*tc.frac, worst)
		}
	}
}

func TestROADHandSolved(t *testing.T) {
	img := []float32{
		1, 2, 3,
		4, 5, 6,
		7, 8, 9,
	}
	for _, tc := range []struct {
		name    string
		removed []int
		want    map[int]float64
	}{
		// Centre: (1/6)(2+4+6+8) + (1/12)(1+3+7+9) = 20/6 + 20/12 = 5.
		{"centre", []int{4}, map[int]float64{4: 5}},
		// Corner: ((1/6)(2+4) + (1/12)·5) / (5/12) = (2·2 + 2·4 + 5)/5 = 17/5.
		{"corner", []int{0}, map[int]float64{0: 17.0 / 5}},
		// Edge: neighbours 1, 3 (direct), 5, 4 (5 direct, 4 and 6 diagonal).
		// ((1/6)(1+3+5) + (1/12)(4+6)) / (3/6 + 2/12) = (18+10)/8 = 3.5.
		{"edge", []int{1}, map[int]float64{1: 3.5}},
		// Everything but pixel 4 removed: the only solution is constant.
		{"one kept", []int{0, 1, 2, 3, 5, 6, 7, 8}, map[int]float64{0: 5, 1: 5, 2: 5, 3: 5, 5: 5, 6: 5, 7: 5, 8: 5}},
	} {
		keep := slices.Repeat([]float32{1}, 9)
		for _, p := range tc.removed {
			keep[p] = 0
		}
		out := slices.Clone(img)
		if err := (ROAD{}).Fill(out, []int{1, 3, 3}, keep, nil); err != nil {
			t.Fatal(err)
		}
		for p, v := range tc.want {
			if math.Abs(float64(out[p])-v) > 1e-5 {
				t.Errorf("%s: pixel %d = %g, want %g", tc.name, p, out[p], v)
			}
		}
	}
	if err := (ROAD{}).Fill(slices.Clone(img), []int{1, 3, 3}, make([]float32, 9), nil); err == nil {
		t.Error("all pixels removed: no error")
	}
	if err := (ROAD{}).Fill(slices.Clone(img), []int{1, 3, 3}, make([]float32, 8), nil); err == nil {
		t.Error("mask of the wrong size accepted")
	}
	bad := slices.Repeat([]float32{1}, 9)
	bad[2] = 0.5
	if err := (ROAD{}).Fill(slices.Clone(img), []int{1, 3, 3}, bad, nil); err == nil {
		t.Error("mask value 0.5 accepted")
	}
}

func TestROADNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	shape := []int{1, 28, 28}
	img := randomImage(rng, 784)
	keep := randomMask(rng, 784, 0.5)
	clean, noisy := slices.Clone(img), slices.Clone(img)
	if err := (ROAD{}).Fill(clean, shape, keep, nil); err != nil {
		t.Fatal(err)
	}
	if err := (ROAD{Noise: 0.1}).Fill(noisy, shape, keep, rand.New(rand.NewPCG(3, 3))); err != nil {
		t.Fatal(err)
	}
	var ss float64
	n := 0
	for p, k := range keep {
		d := float64(noisy[p] - clean[p])
		if k == 1 && d != 0 {
			t.Fatalf("noise on kept pixel %d", p)
		}
		if k == 0 {
			ss += d * d
			n++
		}
	}
	if sd := math.Sqrt(ss / float64(n)); math.Abs(sd-0.1) > 0.015 {
		t.Errorf("noise sd %g, want 0.1", sd)
	}
}

func TestFillAllDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	shape := []int{3, 9, 9}
	imgs := randomImage(rng, 20*243)
	keeps := make([]float32, 0, 20*81)
	for range 20 {
		keeps = append(keeps, randomMask(rng, 81, 0.4)...)
	}
	for _, ref := range []Reference{Zero{}, ChannelMean{}, DatasetMean{Mean: []float32{1, 2, 3}}, Blur{Sigma: 1}, ROAD{Noise: 0.01}, Uniform{}} {
		a, b := slices.Clone(imgs), slices.Clone(imgs)
		if err := FillAll(context.Background(), ref, a, shape, keeps, 7, 0); err != nil {
			t.Fatal(ref.Name(), err)
		}
		if err := FillAll(context.Background(), ref, b, shape, keeps, 7, 0); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Errorf("%s: two runs differ", ref.Name())
		}
		for i, k := range keeps {
			for c := 0; c < 3; c++ {
				j := (i/81)*243 + c*81 + i%81
				if k == 1 && a[j] != imgs[j] {
					t.Fatalf("%s changed a kept pixel", ref.Name())
				}
				if k == 0 && ref.Name() == "dataset-mean" && a[j] != float32(c+1) {
					t.Fatalf("dataset-mean filled %g in channel %d", a[j], c)
				}
				if im := imgs[(i/81)*243 : (i/81+1)*243]; k == 0 && ref.Name() == "uniform" && (a[j] < slices.Min(im) || a[j] > slices.Max(im)) {
					t.Fatalf("uniform filled %g outside the image's range [%g, %g]", a[j], slices.Min(im), slices.Max(im))
				}
			}
		}
	}
	if err := FillAll(context.Background(), Zero{}, imgs, shape, keeps[:10], 0, 0); err == nil {
		t.Error("mask count mismatch accepted")
	}
}

// TestROADMatchesPeer compares with the published algorithm as the PyTorch
// peer script implements it (scipy spsolve), when Debian's python3 has it.
func TestROADMatchesPeer(t *testing.T) {
	peer, _ := filepath.Abs("../../../shared/bench/torch_peer.py")
	if _, err := os.Stat(peer); err != nil {
		t.Skip("no peer script:", err)
	}
	if exec.Command("/usr/bin/python3", "-c", "import scipy, numpy, torch").Run() != nil {
		t.Skip("no scipy or torch in /usr/bin/python3")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	type tcase struct {
		Img  []float32 `json:"img"`
		Keep []float32 `json:"keep"`
		C    int       `json:"c"`
	}
	var cases []tcase
	for _, c := range []struct {
		C    int
		frac float64
	}{{1, 0.1}, {1, 0.5}, {1, 0.9}, {3, 0.6}} {
		cases = append(cases, tcase{randomImage(rng, c.C*28*28), randomMask(rng, 784, c.frac), c.C})
	}
	in, _ := json.Marshal(cases)
	script := `
import json, sys, importlib.util
import numpy as np
spec = importlib.util.spec_from_file_location("peer", sys.argv[1])
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)
out = []
for c in json.load(sys.stdin):
    img = np.array(c["img"], dtype=np.float32).reshape(c["c"], 28, 28)
    mask = np.array(c["keep"], dtype=np.float32).reshape(28, 28)
    out.append(peer.road_impute(img, mask).reshape(-1).tolist())
json.dump(out, sys.stdout)
`
	cmd := exec.Command("/usr/bin/python3", "-c", script, peer)
	cmd.Stdin = strings.NewReader(string(in))
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("peer: %v", err)
	}
	var want [][]float64
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		got := slices.Clone(c.Img)
		if err := (ROAD{}).Fill(got, []int{c.C, 28, 28}, c.Keep, nil); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for j := range got {
			worst = max(worst, math.Abs(float64(got[j])-want[i][j]))
		}
		if worst > 1e-5 {
			t.Errorf("case %d: max difference from the peer %g > 1e-5", i, worst)
		}
	}
}

// blobMask removes the frac of an H×W image's pixels where a smooth map of
// a few Gaussian blobs is highest, as MoRF removes by a smooth attribution
// map: large holes, the iterative solver's hard case.
func blobMask(rng *rand.Rand, H, W int, frac float64) []float32 {
	m := make([]float64, H*W)
	sigma := float64(max(H, W)) / 7
	for range 5 {
		cy, cx := rng.Float64()*float64(H), rng.Float64()*float64(W)
		for y := range H {
			for x := range W {
				dy, dx := float64(y)-cy, float64(x)-cx
				m[y*W+x] += math.Exp(-(dy*dy + dx*dx) / (2 * sigma * sigma))
			}
		}
	}
	sorted := slices.Sorted(slices.Values(m))
	thr := sorted[len(sorted)-1-int(frac*float64(len(sorted)-1))]
	keep := make([]float32, H*W)
	for i, v := range m {
		if v < thr {
			keep[i] = 1
		}
	}
	return keep
}

// TestROADMultigridMatchesCholesky checks the iterative solver against the
// exact one (the envelope Cholesky factor) to 1e-4 of the image's range, with
// the noise drawn as the factor's path draws it, on masks of every kind:
// scattered pixels, large holes, half the image, one pixel kept, a kept
// border or stripes; on one and on two goroutines, which must agree bit for
// bit.
func TestROADMultigridMatchesCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	type tcase struct {
		name    string
		C, H, W int
		keep    []float32
	}
	var cases []tcase
	for _, sz := range []struct{ C, H, W int }{{1, 33, 47}, {3, 64, 64}, {2, 97, 130}} {
		hw := sz.H * sz.W
		half := make([]float32, hw)
		for p := hw / 2; p < hw; p++ {
			half[p] = 1
		}
		one := make([]float32, hw)
		one[rng.IntN(hw)] = 1
		border, stripes := make([]float32, hw), make([]float32, hw)
		for y := range sz.H {
			for x := range sz.W {
				if y == 0 || x == 0 || y == sz.H-1 || x == sz.W-1 {
					border[y*sz.W+x] = 1
				}
				if y%8 == 0 {
					stripes[y*sz.W+x] = 1
				}
			}
		}
		for _, m := range []struct {
			name string
			keep []float32
		}{
			{"random 10%", randomMask(rng, hw, 0.1)}, {"random 50%", randomMask(rng, hw, 0.5)},
			{"random 99%", randomMask(rng, hw, 0.99)}, {"blobs 50%", blobMask(rng, sz.H, sz.W, 0.5)},
			{"blobs 90%", blobMask(rng, sz.H, sz.W, 0.9)}, {"top half", half}, {"one kept", one},
			{"border kept", border}, {"stripes kept", stripes},
		} {
			cases = append(cases, tcase{m.name, sz.C, sz.H, sz.W, m.keep})
		}
	}
	cases = append(cases, tcase{"blobs 50%", 3, 224, 224, blobMask(rng, 224, 224, 0.5)},
		tcase{"random 90%", 3, 224, 224, randomMask(rng, 224*224, 0.9)})
	for _, tc := range cases {
		if !slices.Contains(tc.keep, 1) {
			tc.keep[0] = 1
		}
		shape := []int{tc.C, tc.H, tc.W}
		img := randomImage(rng, tc.C*tc.H*tc.W)
		for i := range img {
			img[i] = 5*img[i] - 2 // standardised values, range 5
		}
		exact := slices.Clone(img)
		cholesky := roadSolver{exact: true}
		if err := cholesky.fill(exact, shape, tc.keep, 0.01, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatalf("%v %s: %v", shape, tc.name, err)
		}
		var outs [2][]float32
		for threads := 1; threads <= 2; threads++ {
			out := slices.Clone(img)
			var mg roadMG
			if !mg.fill(out, tc.C, tc.H, tc.W, tc.keep, 0.01, rand.New(rand.NewPCG(1, 2)), threads) {
				t.Fatalf("%v %s: no convergence", shape, tc.name)
			}
			outs[threads-1] = out
		}
		if !slices.Equal(outs[0], outs[1]) {
			t.Errorf("%v %s: one goroutine and two disagree", shape, tc.name)
		}
		worst := 0.0
		for i := range exact {
			worst = max(worst, math.Abs(float64(outs[0][i])-float64(exact[i])))
		}
		if worst > 1e-4*5 {
			t.Errorf("%v %s: worst difference from the factor's solution %g > 5e-4 (1e-4 of the range)", shape, tc.name, worst)
		}
	}
}

// TestROADPicksTheCheaperSolver: the factor for images up to CIFAR's size
// at any mask (their results stay those of the published algorithm's exact
// solve), the iterative solver for ImageNet-sized images with holes.
func TestROADPicksTheCheaperSolver(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		C, H, W int
		keep    []float32
		mg      bool
	}{
		{1, 28, 28, randomMask(rng, 784, 0.99), false},
		{3, 32, 32, blobMask(rng, 32, 32, 0.9), false},
		{3, 224, 224, randomMask(rng, 224*224, 0.05), false},
		{3, 224, 224, randomMask(rng, 224*224, 0.5), true},
		{3, 224, 224, blobMask(rng, 224, 224, 0.2), true},
	} {
		var s roadSolver
		img := randomImage(rng, tc.C*tc.H*tc.W)
		if err := s.fill(img, []int{tc.C, tc.H, tc.W}, tc.keep, 0, nil); err != nil {
			t.Fatal(err)
		}
		if used := len(s.mg.levels) > 0; used != tc.mg {
			t.Errorf("%d×%d×%d: multigrid used %v, want %v", tc.C, tc.H, tc.W, used, tc.mg)
		}
	}
}

// BenchmarkImpute224 imputes one 3×224×224 image (faithlab-cli impute's
// work, on all cores) at 50 % and 90 % removed by a smooth map, with the
// solver ROAD picks and with the Cholesky factor alone, and a 28×28 image
// for comparison.
func BenchmarkImpute224(b *testing.B) {
	for _, tc := range []struct {
		C, H, W int
		frac    float64
		exact   bool
	}{{3, 224, 224, 0.5, false}, {3, 224, 224, 0.5, true}, {3, 224, 224, 0.9, false}, {3, 224, 224, 0.9, true}, {1, 28, 28, 0.5, false}} {
		solver := "picked"
		if tc.exact {
			solver = "factor"
		}
		b.Run(fmt.Sprintf("%dx%dx%d-%.0f%%-%s", tc.C, tc.H, tc.W, 100*tc.frac, solver), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(6, 6))
			img := randomImage(rng, tc.C*tc.H*tc.W)
			keep := blobMask(rng, tc.H, tc.W, tc.frac)
			buf := make([]float32, len(img))
			s := roadSolver{threads: runtime.GOMAXPROCS(0), exact: tc.exact}
			for b.Loop() {
				copy(buf, img)
				if err := s.fill(buf, []int{tc.C, tc.H, tc.W}, keep, 0.01, rng); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkROAD imputes 28×28 images, one core, one image per iteration.
func BenchmarkROAD(b *testing.B) {
	for _, frac := range []float64{0.1, 0.5, 0.9} {
		b.Run(fmt.Sprint(frac), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(6, 6))
			img := randomImage(rng, 784)
			keep := randomMask(rng, 784, frac)
			buf := make([]float32, 784)
			var s roadSolver
			for b.Loop() {
				copy(buf, img)
				if err := s.fill(buf, []int{1, 28, 28}, keep, 0.01, rng); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFillAllROAD50(b *testing.B) {
	rng := rand.New(rand.NewPCG(6, 6))
	imgs := randomImage(rng, 256*784)
	var keeps []float32
	for range 256 {
		keeps = append(keeps, randomMask(rng, 784, 0.5)...)
	}
	buf := make([]float32, len(imgs))
	for b.Loop() {
		copy(buf, imgs)
		if err := FillAll(context.Background(), ROAD{Noise: 0.01}, buf, []int{1, 28, 28}, keeps, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(256*float64(b.N)/b.Elapsed().Seconds(), "img/s")
}

// A keep-mask from ranks is the keep-mask from the order they were set
// from, at every count, for pixels and for patches.
func TestKeepRankedIsKeep(t *testing.T) {
	for _, grid := range []int{0, 3} {
		f, err := NewFeatures(6, 5, grid)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, uint64(grid)))
		r := NewRanks(4, f.N())
		orders := make([][]int, 4)
		for i := range orders {
			s := make([]float32, f.N())
			for j := range s {
				s[j] = float32(rng.IntN(4)) // ties
			}
			orders[i] = Order(s, i%2 == 0)
			r.Set(i, orders[i])
		}
		a, b := make([]float32, 30), make([]float32, 30)
		for i := range orders {
			for k := 0; k <= f.N(); k++ {
				f.Keep(a, orders[i], k)
				f.KeepRanked(b, r, i, k)
				if !slices.Equal(a, b) {
					t.Fatalf("grid %d image %d k %d: %v from ranks, %v from the order", grid, i, k, b, a)
				}
			}
		}
	}
}

// BenchmarkOrder ranks a CIFAR-sized map's 1 024 pixels (ROAR's masks).
func BenchmarkOrder(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := make([]float32, 1024)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	idx := make([]int, len(s))
	for b.Loop() {
		OrderInto(idx, s, true)
	}
}

// heldBytes is what the solver's buffers hold, by their capacities.
func (s *roadSolver) heldBytes() int64 {
	b := 8*(cap(s.diag)+cap(s.kv)+cap(s.l)+cap(s.inv)+cap(s.b)+cap(s.off)) + 4*(cap(s.idx)+cap(s.px)+cap(s.pix)+cap(s.first))
	m := &s.mg
	b += 8*(cap(m.x)+cap(m.r)+cap(m.p)+cap(m.q)+cap(m.scalars)) + cap(m.done)
	for _, l := range m.levels {
		b += 8 * (cap(l.a) + cap(l.d) + cap(l.inv) + cap(l.x) + cap(l.b) + cap(l.r))
		for _, c := range l.colour {
			b += 4 * cap(c)
		}
	}
	return int64(b)
}

// The memory plan counts ROADSolverBytes per core: it must bound what a
// solver holds after imputing images of every removal rate, with random
// and blocky (ranked-map-like) masks, and not by more than half again
// where it matters (images of 112×112 and more).
func TestROADSolverBytesBoundsWhatItHolds(t *testing.T) {
	for _, size := range []int{32, 64, 112, 224} {
		for _, C := range []int{1, 3} {
			rng := rand.New(rand.NewPCG(1, uint64(size)))
			img := make([]float32, C*size*size)
			keep := make([]float32, size*size)
			var s roadSolver
			for _, rate := range []float64{0.1, 0.3, 0.5, 0.7, 0.9} {
				for _, blocky := range []bool{false, true} {
					kept := 0
					for i := range keep {
						v := rng.Float64()
						if blocky { // 8×8 blocks in a scrambled order
							v = float64((i/size/8*131+i%size/8*71)%97) / 97
						}
						keep[i] = 0
						if v >= rate {
							keep[i], kept = 1, kept+1
						}
					}
					if kept == 0 {
						continue
					}
					for i := range img {
						img[i] = rng.Float32()
					}
					if err := s.fill(img, []int{C, size, size}, keep, 0.01, rng); err != nil {
						t.Fatal(err)
					}
				}
			}
			held, bound := s.heldBytes(), ROADSolverBytes(C, size*size)
			if held > bound {
				t.Errorf("%d×%d×%d: the solver holds %d bytes, over ROADSolverBytes's %d", C, size, size, held, bound)
			}
			if size >= 112 && float64(bound) > 1.5*float64(held) {
				t.Errorf("%d×%d×%d: ROADSolverBytes says %d bytes, more than half again the %d held", C, size, size, bound, held)
			}
		}
	}
}
