package protocol

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
)

// handMap is the 4×4 map of the hand-solved cases, row by row,
//
//	0.1  0.2  0.0  0.0
//	0.3  0.9  0.4  0.0
//	0.0  0.5  0.8  0.0
//	0.0  0.0  0.0 -0.2
//
// and handMask marks its centre 2×2 (pixels 5, 6, 9, 10):
//
//	0 0 0 0
//	0 1 1 0
//	0 1 1 0
//	0 0 0 0
var (
	handMap  = []float64{0.1, 0.2, 0, 0, 0.3, 0.9, 0.4, 0, 0, 0.5, 0.8, 0, 0, 0, 0, -0.2}
	handMask = []float32{0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0}
)

// On the hand map: the largest value 0.9 sits on the mask (a hit;
// weighted 1 − 4/16 = 0.75); the mass on the mask is 0.9 + 0.4 + 0.5 +
// 0.8 = 2.6 of a total 3.0 (0.8667); the 4 largest pixels are 0.9, 0.8,
// 0.5, 0.4, all on the mask (rank accuracy 1); the 2 largest are on it
// (top-2 intersection 1, concept influence ×16/4 = 4); every mask pixel
// (0.4 … 0.9) outscores every pixel off it (≤ 0.3): AUC 1.
func TestLocalisationHandSolved(t *testing.T) {
	flipped := slices.Clone(handMap) // the largest value moved off the mask
	flipped[0] = 1
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"pointing game hit", PointingGameScore(handMap, handMask, false), 1},
		{"pointing game weighted hit", PointingGameScore(handMap, handMask, true), 0.75},
		{"pointing game miss", PointingGameScore(flipped, handMask, false), 0},
		{"pointing game weighted miss", PointingGameScore(flipped, handMask, true), 0},
		// 2.6 / (3.0 + 1e-9), weighted × 4/16.
		{"attribution localisation", AttributionLocalisationScore(handMap, handMask, false), 2.6 / (3.0 + 1e-9)},
		{"attribution localisation weighted", AttributionLocalisationScore(handMap, handMask, true), 2.6 / (3.0 + 1e-9) / 4},
		{"relevance mass accuracy", RelevanceMassAccuracyScore(handMap, handMask), 2.6 / 3.0},
		{"relevance rank accuracy", RelevanceRankAccuracyScore(handMap, handMask), 1},
		// The 4 largest of flipped: 1.0 (off), 0.9, 0.8, 0.5: 3 of 4.
		{"relevance rank accuracy flipped", RelevanceRankAccuracyScore(flipped, handMask), 0.75},
		{"top-2 intersection", TopKIntersectionScore(handMap, handMask, 2, false), 1},
		{"top-2 intersection concept influence", TopKIntersectionScore(handMap, handMask, 2, true), 4},
		// The 5 largest: 0.9, 0.8, 0.5, 0.4 on, 0.3 off.
		{"top-5 intersection", TopKIntersectionScore(handMap, handMask, 5, false), 0.8},
		{"AUC separated", LocalisationAUCScore(handMap, handMask), 1},
		// flipped: of the 4×12 pairs, the mask's 0.5, 0.8, 0.9 lose to
		// the 1.0 off it, 0.4 too: 4 pairs lost of 48.
		{"AUC flipped", LocalisationAUCScore(flipped, handMask), 44.0 / 48},
		// A constant map: the ROC curve is the diagonal, ties count half.
		{"AUC constant", LocalisationAUCScore(make([]float64, 16), handMask), 0.5},
		// Every tied pixel counts: a constant map hits any mask.
		{"pointing game constant", PointingGameScore(make([]float64, 16), handMask, false), 1},
	} {
		if math.Abs(tc.got-tc.want) > 1e-12 {
			t.Errorf("%s: %g, want %g", tc.name, tc.got, tc.want)
		}
	}
	for name, f := range map[string]func(a []float64, s []float32) float64{
		"pointing game":            func(a []float64, s []float32) float64 { return PointingGameScore(a, s, false) },
		"attribution localisation": func(a []float64, s []float32) float64 { return AttributionLocalisationScore(a, s, false) },
		"top-k":                    func(a []float64, s []float32) float64 { return TopKIntersectionScore(a, s, 2, false) },
		"mass":                     RelevanceMassAccuracyScore,
		"rank":                     RelevanceRankAccuracyScore,
		"AUC":                      LocalisationAUCScore,
	} {
		if v := f(handMap, make([]float32, 16)); !math.IsNaN(v) {
			t.Errorf("%s of an empty mask: %g, want NaN", name, v)
		}
	}
}

// Quantus prepares a map by normalising, then taking magnitudes: by
// normalise_by_negative, [3, −6, 1, 0] is [1, −1, 1/3, 0], so its
// magnitudes tie the 3 and the −6 at 1.
func TestMapPreparedAsQuantus(t *testing.T) {
	m := []float32{3, -6, 1, 0}
	for _, tc := range []struct {
		normalise string
		magnitude bool
		want      []float64
	}{
		{normaliseNegative, false, []float64{1, -1, 1.0 / 3, 0}},
		{normaliseNegative, true, []float64{1, 1, 1.0 / 3, 0}},
		{normaliseMax, false, []float64{0.5, -1, 1.0 / 6, 0}},
		{normaliseMax, true, []float64{0.5, 1, 1.0 / 6, 0}},
		{normaliseNone, true, []float64{3, 6, 1, 0}},
	} {
		got := prepared(m, tc.normalise, tc.magnitude)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-15 {
				t.Errorf("%s magnitude %v: %v, want %v", tc.normalise, tc.magnitude, got, tc.want)
				break
			}
		}
	}
	if got := prepared([]float32{-2, -1}, normaliseNegative, false); got[0] != -1 || got[1] != -0.5 {
		t.Errorf("a negative map by normalise_by_negative: %v, want [-1 -0.5]", got)
	}
	if got := prepared(make([]float32, 3), normaliseMax, true); slices.ContainsFunc(got, func(v float64) bool { return v != 0 }) {
		t.Errorf("a blank map: %v, want it left blank", got)
	}
}

// quantusGoldens are testdata/quantus/goldens.json, which reference.py
// writes from its own restatement of Quantus 0.6's definitions.
type quantusGoldens struct {
	Localisation []struct {
		H, W                            int
		Map                             []float64
		Mask                            []float32
		PointingGame                    *float64 `json:"pointing_game"`
		PointingGameWeighted            *float64 `json:"pointing_game_weighted"`
		AttributionLocalisation         *float64 `json:"attribution_localisation"`
		AttributionLocalisationWeighted *float64 `json:"attribution_localisation_weighted"`
		TopK5                           *float64 `json:"top_k_intersection_5"`
		TopK5Concept                    *float64 `json:"top_k_intersection_5_concept"`
		Mass                            *float64 `json:"relevance_mass_accuracy"`
		Rank                            *float64 `json:"relevance_rank_accuracy"`
		AUC                             *float64 `json:"auc"`
	}
	Focus []struct {
		H, W     int
		Map      []float32
		QuantusP [4]int `json:"quantus_p"`
		Focus    *float64
	}
	Completeness   axiomaticGolden[struct{ Complete, Gap float64 }]
	NonSensitivity axiomaticGolden[int] `json:"non_sensitivity"`
	Invariance     []struct {
		A, B        []float32
		Same, Error float64
	} `json:"input_invariance"`
}

// axiomaticGolden is a linear model (classes×d weights, bias), inputs,
// their maps and each input's expected score.
type axiomaticGolden[T any] struct {
	D, Classes int
	Weight     []float32
	Bias       []float32
	X, Maps    [][]float32
	Expected   []T
}

func readGoldens(t *testing.T) quantusGoldens {
	t.Helper()
	b, err := os.ReadFile("testdata/quantus/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g quantusGoldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// agree says whether got is want (nil: NaN) to within 1e-5 (relative
// beyond 1).
func agree(got float64, want *float64) bool {
	if want == nil {
		return math.IsNaN(got)
	}
	return math.Abs(got-*want) <= 1e-5*math.Max(1, math.Abs(*want))
}

// Every localisation metric equals reference.py's restatement of Quantus
// 0.6 on every input (13 maps and masks: signed and one-signed maps, maps
// that find the evidence, an empty mask, a mask of every pixel, ties at
// the top) to 1e-5, with Quantus's default preparation of each.
func TestLocalisationMatchesQuantusReference(t *testing.T) {
	g := readGoldens(t)
	if len(g.Localisation) < 10 {
		t.Fatalf("%d localisation goldens", len(g.Localisation))
	}
	for i, c := range g.Localisation {
		m := make([]float32, len(c.Map))
		for q, v := range c.Map {
			m[q] = float32(v)
		}
		// The reference's maps are float64, Faithlab's float32: the
		// scores move by about 1e-8, and no two values of a map are so
		// close that their order would.
		prep := func(normalise string, magnitude bool) []float64 { return prepared(m, normalise, magnitude) }
		for _, tc := range []struct {
			name string
			got  float64
			want *float64
		}{
			{"pointing game", PointingGameScore(prep(normaliseNegative, false), c.Mask, false), c.PointingGame},
			{"pointing game weighted", PointingGameScore(prep(normaliseNegative, false), c.Mask, true), c.PointingGameWeighted},
			{"attribution localisation", AttributionLocalisationScore(prep(normaliseMax, true), c.Mask, false), c.AttributionLocalisation},
			{"attribution localisation weighted", AttributionLocalisationScore(prep(normaliseMax, true), c.Mask, true), c.AttributionLocalisationWeighted},
			{"top-5 intersection", TopKIntersectionScore(prep(normaliseMax, false), c.Mask, 5, false), c.TopK5},
			{"top-5 intersection concept", TopKIntersectionScore(prep(normaliseMax, false), c.Mask, 5, true), c.TopK5Concept},
			{"relevance mass accuracy", RelevanceMassAccuracyScore(prep(normaliseMax, false), c.Mask), c.Mass},
			{"relevance rank accuracy", RelevanceRankAccuracyScore(prep(normaliseMax, false), c.Mask), c.Rank},
			{"AUC", LocalisationAUCScore(prep(normaliseMax, false), c.Mask), c.AUC},
		} {
			if !agree(tc.got, tc.want) {
				t.Errorf("input %d %s: %g, reference %v", i, tc.name, tc.got, deref(tc.want))
			}
		}
	}
	for i, c := range g.Focus {
		// Quantus's tuple (its top left, "top right", "bottom left",
		// bottom right) slices rows h:, columns :w as its second: the
		// bottom left here, and its third the top right.
		target := [4]bool{c.QuantusP[0] == 1, c.QuantusP[2] == 1, c.QuantusP[1] == 1, c.QuantusP[3] == 1}
		if got := FocusScore(prepared(c.Map, normaliseMax, false), c.H, c.W, target); !agree(got, c.Focus) {
			t.Errorf("focus %d: %g, reference %v", i, got, deref(c.Focus))
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return "NaN"
	}
	return *p
}

// maskEnv is n 1×4×4 inputs, each with the hand mask, and their maps: the
// hand map, or its flip (the largest value off the mask) for odd inputs.
func maskEnv(n int, masks bool) *Env {
	ds := &data.Dataset{Name: "masked", Shape: []int{1, 4, 4}, Classes: []string{"a", "b"}, X: make([]float32, n*16), Y: make([]int, n)}
	maps := make([]float32, 0, n*16)
	for i := range n {
		m := make([]float32, 16)
		for q, v := range handMap {
			m[q] = float32(v)
		}
		if i%2 == 1 {
			m[0] = 1
		}
		maps = append(maps, m...)
		ds.Masks = append(ds.Masks, handMask...)
	}
	env := &Env{Test: ds, Method: "m", Maps: func(context.Context, string) ([]float32, error) { return maps, nil }}
	if masks {
		env.Masks = func(context.Context, string) ([]float32, error) { return ds.Masks, nil }
	} else {
		ds.Masks = nil
	}
	return env
}

// The mask metrics run on a dataset's masks and keep every input's score;
// without masks each is refused before any work, at run time and by
// AppliesTo (the campaign's check), saying why.
func TestLocalisationMetricsReadMasksAndRefuseDataWithout(t *testing.T) {
	// Each metric on the hand map and its flip (0.1 at pixel 0 made 1.0),
	// with its defaults: Attribution Localisation takes magnitudes, so
	// the −0.2 adds to the total (3.4; flipped 4.3); Relevance Mass
	// Accuracy keeps the sign (3.0; flipped 3.9).
	want := map[string][2]float64{
		"PointingGame":            {1, 0},
		"AttributionLocalisation": {2.6 / 3.4, 2.6 / 4.3},
		"RelevanceMassAccuracy":   {2.6 / 3.0, 2.6 / 3.9},
		"RelevanceRankAccuracy":   {1, 0.75},
		"LocalisationAUC":         {1, 44.0 / 48},
		"TopKIntersection":        {1, 0}, // k = round(2 % of 16) = 0 → 1: the largest pixel
	}
	for _, p := range All() {
		info := p.Info()
		if !info.Masks {
			continue
		}
		w, ok := want[info.Name]
		if !ok {
			t.Errorf("%s reads masks but has no expected scores here", info.Name)
			continue
		}
		delete(want, info.Name)
		res, err := p.Run(context.Background(), maskEnv(4, true))
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		head, _ := info.Headline()
		per := res.Units.Of(head.Name)
		for i, v := range per {
			if math.Abs(float64(v)-w[i%2]) > 1e-6 {
				t.Errorf("%s input %d: %g, want %g", info.Name, i, v, w[i%2])
			}
		}
		if got, _ := res.Scalar(head.Name); math.Abs(got-(w[0]+w[1])/2) > 1e-6 {
			t.Errorf("%s: mean %g, want %g", info.Name, got, (w[0]+w[1])/2)
		}
		checkDescribed(t, p, res)
		env := maskEnv(4, false)
		if _, err := p.Run(context.Background(), env); err == nil || !strings.Contains(err.Error(), "carries none") {
			t.Errorf("%s without masks: %v, want a refusal naming the missing masks", info.Name, err)
		}
		if err := AppliesTo(p, env.Test); err == nil || !strings.Contains(err.Error(), "masks") {
			t.Errorf("%s: AppliesTo a dataset without masks: %v", info.Name, err)
		}
		if err := AppliesTo(p, maskEnv(1, true).Test); err != nil {
			t.Errorf("%s: AppliesTo a dataset with masks: %v", info.Name, err)
		}
	}
	for name := range want {
		t.Errorf("%s is not among All()'s protocols that read masks", name)
	}
}

// focusEnv is a test set whose images of class y hold y+1 at every
// pixel, with an oracle Explain whose map is 1 where the input holds the
// explained class's value (the mosaic's quadrants of that class) or a
// map that ignores the input.
func focusEnv(oracle bool) *Env {
	const n, side = 40, 4
	ds := &data.Dataset{Name: "flat", Shape: []int{1, side, side}, Classes: []string{"a", "b", "c"}, X: make([]float32, n*side*side), Y: make([]int, n)}
	for i := range n {
		ds.Y[i] = i % 3
		for q := range side * side {
			ds.X[i*side*side+q] = float32(ds.Y[i] + 1)
		}
	}
	explain := func(_ context.Context, _ engine.Network, x []float32, n int, target []int) ([]float32, error) {
		out := make([]float32, len(x))
		for i := range n {
			for q := range side * side {
				v := &out[i*side*side+q]
				if oracle {
					if x[i*side*side+q] == float32(target[i]+1) {
						*v = 1
					}
				} else {
					*v = float32((q*7+i*3)%5) + 0.5 // the same for any input at i
				}
			}
		}
		return out, nil
	}
	return &Env{Test: ds, Method: "m", Explain: explain, Seed: 9}
}

// A map on the explained class's quadrants alone scores Focus 1 on every
// mosaic; mosaics are drawn from the seed alone (the same for every
// method), each two images of its class and two of others.
func TestFocusOfAnOracleIsOne(t *testing.T) {
	res, err := Focus{Samples: 20}.Run(context.Background(), focusEnv(true))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.Units.Of("focus") {
		if v != 1 {
			t.Errorf("mosaic %d: focus %g, want 1", i, v)
		}
	}
	checkDescribed(t, Focus{}, res)
	ctrl, err := Focus{Samples: 200}.Run(context.Background(), focusEnv(false))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := ctrl.Scalar("focus"); math.Abs(v-0.5) > 0.1 {
		t.Errorf("a map that ignores the input: focus %g, want about 0.5", v)
	}
	ds := focusEnv(true).Test
	a, _ := Mosaics(ds.Y, 30, 9)
	b, _ := Mosaics(ds.Y, 30, 9)
	if !slices.Equal(a, b) {
		t.Error("mosaics differ between two draws from one seed")
	}
	for i, m := range a {
		on := 0
		for q, img := range m.Images {
			if (ds.Y[img] == m.Class) != m.Target[q] {
				t.Errorf("mosaic %d: quadrant %d holds class %d, marked %v for class %d", i, q, ds.Y[img], m.Target[q], m.Class)
			}
			if m.Target[q] {
				on++
			}
		}
		if on != 2 || m.Images[0] == m.Images[1] && m.Images[2] == m.Images[3] {
			t.Errorf("mosaic %d: %+v", i, m)
		}
	}
	if err := (Focus{}).CheckShape([]int{1, 5, 4}); err == nil {
		t.Error("odd sides accepted")
	}
}
