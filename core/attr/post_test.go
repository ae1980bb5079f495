package attr

import (
	"math"
	"slices"
	"testing"
)

func TestBilinearMatchesTorch(t *testing.T) {
	// torch.nn.functional.interpolate([[0,1],[2,3]], size=4, mode="bilinear", align_corners=False)
	want := []float32{0, 0.25, 0.75, 1, 0.5, 0.75, 1.25, 1.5, 1.5, 1.75, 2.25, 2.5, 2, 2.25, 2.75, 3}
	got := make([]float32, 16)
	Bilinear(got, 4, 4, []float32{0, 1, 2, 3}, 2, 2)
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestGaussianBlur(t *testing.T) {
	const H, W = 15, 15
	img := make([]float32, H*W)
	img[7*W+7] = 1
	GaussianBlur(img, H, W, 1)
	var sum float64
	for _, v := range img {
		sum += float64(v)
	}
	if math.Abs(sum-1) > 1e-6 {
		t.Errorf("an impulse's mass is %g after blurring, want 1", sum)
	}
	// Separable Gaussian, normalised over ±3σ: ratio of neighbours is e^{-1/2}.
	if r := float64(img[7*W+8] / img[7*W+7]); math.Abs(r-math.Exp(-0.5)) > 1e-5 {
		t.Errorf("neighbour ratio %g, want e^-½", r)
	}
	flat := slices.Repeat([]float32{0.3}, H*W)
	GaussianBlur(flat, H, W, 2)
	for _, v := range flat {
		if math.Abs(float64(v)-0.3) > 1e-6 {
			t.Fatalf("a constant image changed to %g", v)
		}
	}
}

func TestFiltersTVAndMasks(t *testing.T) {
	m := []float32{
		0, 0, 0, 0,
		0, 5, 0, 0,
		0, 0, 0, 0,
		0, 0, 0, 1,
	}
	mf := slices.Clone(m)
	MaxFilter(mf, 4, 4, 3)
	want := []float32{5, 5, 5, 0, 5, 5, 5, 0, 5, 5, 5, 1, 0, 0, 1, 1}
	if !slices.Equal(mf, want) {
		t.Errorf("max filter %v, want %v", mf, want)
	}
	// The 5 has four neighbours (20); the 1 in the corner has two (2).
	if tv := TotalVariation(m, 4, 4); tv != 22 {
		t.Errorf("total variation %g, want 22", tv)
	}
	tie := []float32{1, 3, 3, 0}
	mask, err := TopMask(tie, 0.25)
	if err != nil || !slices.Equal(mask, []float32{0, 1, 0, 0}) {
		t.Errorf("top 25%% of %v: %v (%v); ties go to the lower index", tie, mask, err)
	}
	if _, err := TopMask(tie, 0); err == nil {
		t.Error("drop rate 0 accepted")
	}
	n := []float32{2, 4, 6}
	Normalize(n)
	if !slices.Equal(n, []float32{0, 0.5, 1}) {
		t.Errorf("normalised %v", n)
	}
}

func TestStepsAndChannelReduction(t *testing.T) {
	steps, err := ParseSteps("abs, gaussian:2, maxfilter, square, normalize")
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{steps[0].String(), steps[1].String(), steps[2].String()}; !slices.Equal(got, []string{"abs", "gaussian:2", "maxfilter:3"}) {
		t.Errorf("parsed %v", got)
	}
	for _, bad := range []string{"blur", "gaussian:-1", "abs:2", "maxfilter:x"} {
		if _, err := ParseSteps(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	m := Maps{Data: []float32{-1, 2, 3, -4, 5, -6, 7, 8}, Shape: []int{1, 2, 2, 2}}
	sq := Apply(Maps{Data: m.Data, Shape: m.Shape}, []Step{{Op: "abs"}, {Op: "square"}})
	if !slices.Equal(sq.Data, []float32{1, 4, 9, 16, 25, 36, 49, 64}) || m.Data[0] != -1 {
		t.Errorf("abs+square %v (input must stay unchanged: %v)", sq.Data, m.Data)
	}
	for _, tc := range []struct {
		how  string
		want []float32
	}{{"sum", []float32{4, -4, 10, 4}}, {"mean", []float32{2, -2, 5, 2}}, {"max", []float32{5, 2, 7, 8}}} {
		r, err := ReduceChannels(m, tc.how)
		if err != nil || !slices.Equal(r.Data, tc.want) || !slices.Equal(r.Shape, []int{1, 1, 2, 2}) {
			t.Errorf("%s: %v %v (%v), want %v", tc.how, r.Data, r.Shape, err, tc.want)
		}
	}
	if _, err := ReduceChannels(m, "median"); err == nil {
		t.Error("unknown reduction accepted")
	}
}

func TestBlockRandomCoversTheRate(t *testing.T) {
	in := Input{N: 20, Shape: []int{1, 28, 28}, X: make([]float32, 20*784), Target: make([]int, 20)}
	for _, rate := range []float64{0.1, 0.3, 0.5} {
		maps, err := BlockRandom{DropRate: rate, Seed: 1}.Attribute(nil, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < in.N; i++ {
			block := 0
			for _, v := range maps.Map(i) {
				if v >= 1 {
					block++
				}
			}
			if got := float64(block) / 784; math.Abs(got-rate) > 0.05 {
				t.Errorf("rate %g: map %d's rectangle covers %.3f", rate, i, got)
			}
			// The rectangle is the top of the ranking.
			mask, _ := TopMask(maps.Map(i), float64(block)/784)
			for j, v := range maps.Map(i) {
				if (v >= 1) != (mask[j] == 1) {
					t.Fatalf("rate %g map %d: top mask differs from the rectangle at %d", rate, i, j)
				}
			}
		}
	}
}
