package attr

import (
	"math"
	"slices"
	"testing"

	"faithlab/core/perturb"
)

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
			for _, j := range perturb.Order(maps.Map(i), true)[:block] {
				if maps.Map(i)[j] < 1 {
					t.Fatalf("rate %g map %d: pixel %d ranks within the rectangle's area but is outside it", rate, i, j)
				}
			}
		}
	}
}

func TestNormalize(t *testing.T) {
	n := []float32{2, 4, 6}
	Normalize(n)
	if !slices.Equal(n, []float32{0, 0.5, 1}) {
		t.Errorf("normalised %v", n)
	}
}
