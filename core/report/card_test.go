package report

import (
	"math/rand/v2"
	"strings"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// scoreRecords is one seed's records of a protocol (by its name, with its
// defaults) on dataset "d": each method's per-input values of the
// protocol's headline score, as given.
func scoreRecords(t *testing.T, proto string, values map[string][]float64) []store.Record {
	t.Helper()
	p, err := protocol.New(proto, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := p.Info().Headline()
	if !ok {
		t.Fatalf("%s has no headline", proto)
	}
	var recs []store.Record
	for _, meth := range []string{"gradient", "ig", "smoothgrad", "gradxinput", "random", "blockrandom"} {
		v, ok := values[meth]
		if !ok {
			continue
		}
		u := make([]float32, len(v))
		var sum float64
		for i, x := range v {
			u[i], sum = float32(x), sum+x
		}
		res := &protocol.Result{Protocol: p.Info().Name, Method: meth, Config: map[string]any{},
			Scalars: []protocol.Scalar{{Name: h.Name, Value: sum / float64(len(v)), Better: h.Better}},
			Units:   protocol.Units{N: len(v), Names: []string{h.Name}, Values: [][]float32{u}}}
		recs = append(recs, store.Record{Dataset: "d", Model: "m", Method: meth, Protocol: p.Info().Name, Seed: 1, Result: res})
	}
	return recs
}

// shifted is, for each method, 200 inputs' values: a difficulty the
// methods share (sd 0.3, the pairing) plus the method's offset plus a
// little noise of its own (sd 0.005).
func shifted(offsets map[string]float64) map[string][]float64 {
	rng := rand.New(rand.NewPCG(5, 5))
	base := make([]float64, 200)
	for i := range base {
		base[i] = 1 + 0.3*rng.NormFloat64()
	}
	out := map[string][]float64{}
	for _, meth := range []string{"gradient", "ig", "smoothgrad", "gradxinput", "random", "blockrandom"} {
		off, ok := offsets[meth]
		if !ok {
			continue
		}
		v := make([]float64, len(base))
		for i := range v {
			v[i] = base[i] + off + 0.005*rng.NormFloat64()
		}
		out[meth] = v
	}
	return out
}

// cardOf is the report card of the records' one setting.
func cardOf(t *testing.T, recs []store.Record, proto string) CardRow {
	t.Helper()
	for _, row := range Diagnose(recs).Confidence.Card {
		if row.Protocol == proto {
			return row
		}
	}
	t.Fatalf("no card for %s", proto)
	return CardRow{}
}

// words is everything a card row says.
func words(row CardRow) string {
	s := row.Verdict
	for _, f := range row.Findings() {
		s += "\n" + f.Name + ": " + f.F.Words + " / " + f.F.Short
	}
	return s
}

// The inputs' shared difficulty widens each method's interval beyond the
// methods' spread, yet the paired tests tell 5 of the 6 pairs apart: the
// card must not say that the scores differ by less than the noise, and
// it ranks the methods. With no pair told apart it says they do.
func TestCardSeparationFollowsThePairedTests(t *testing.T) {
	// PixelFlipping: lower is better; random is the worst by far.
	row := cardOf(t, scoreRecords(t, "PixelFlipping", shifted(map[string]float64{
		"gradient": 0, "ig": 0, "smoothgrad": 0.04, "gradxinput": 0.06, "random": 0.3})), "PixelFlipping")
	if row.Separation.Flag || !row.CanRank || strings.Contains(words(row), "less than the noise") || !strings.Contains(row.Separation.Words, "5 of 6 pairs") {
		t.Errorf("5 of 6 pairs told apart:\n%s", words(row))
	}
	row = cardOf(t, scoreRecords(t, "PixelFlipping", shifted(map[string]float64{
		"gradient": 0, "ig": 0, "smoothgrad": 0, "gradxinput": 0, "random": 0.3})), "PixelFlipping")
	if !row.Separation.Flag || row.CanRank || !strings.Contains(row.Verdict, "0 of 6 pairs told apart") {
		t.Errorf("no pair told apart:\n%s", words(row))
	}
}

// Monotonicity is 0 on every input for every method, the control
// included (a per-input boolean never true at pixel resolution), beside a
// Complexity run whose sparseness differs: the card says the metric
// cannot tell the methods apart, orders none of them and prints no
// correlation (saying why there is none).
func TestCardOfTiedScoresOrdersNothing(t *testing.T) {
	zeros := map[string][]float64{}
	for _, meth := range []string{"gradient", "ig", "smoothgrad", "gradxinput", "random"} {
		zeros[meth] = make([]float64, 100)
	}
	recs := append(scoreRecords(t, "Monotonicity", zeros), scoreRecords(t, "Complexity", shifted(map[string]float64{
		"gradient": 0.1, "ig": 0.2, "smoothgrad": 0.3, "gradxinput": 0.4, "random": 0}))...)
	row := cardOf(t, recs, "Monotonicity")
	all := words(row)
	if row.CanRank || !strings.Contains(row.Verdict, "every method scores 0.000") || !strings.Contains(row.Verdict, "cannot tell") {
		t.Errorf("verdict %q", row.Verdict)
	}
	for _, order := range []string{"above", "below", "better", "worse", "NaN"} {
		if strings.Contains(all, order) {
			t.Errorf("the card says %q of tied scores:\n%s", order, all)
		}
	}
	if !strings.Contains(row.Complexity.Words, "every method scores the same") {
		t.Errorf("no reason for the missing correlation: %q", row.Complexity.Words)
	}
}

// A random control that scores the same as the one method beside it is
// flagged: the card does not say it ranks below them.
func TestCardFlagsAControlTiedWithTheOnlyMethod(t *testing.T) {
	same := make([]float64, 100)
	for i := range same {
		same[i] = 0.5 + 0.001*float64(i%7)
	}
	row := cardOf(t, scoreRecords(t, "PixelFlipping", map[string][]float64{"gradient": same, "random": same}), "PixelFlipping")
	if !row.Random.Flag || strings.Contains(row.Verdict, "ranks below them") {
		t.Errorf("a control tied with the only method: random %+v, verdict %q", row.Random, row.Verdict)
	}
}

// Where lower is better (PixelFlipping), the card words the control's
// place by rank: the highest value ranks below every method, the lowest
// above them; the same under a score where higher is better (Deletion).
func TestCardWordsTheControlByRank(t *testing.T) {
	methods := map[string]float64{"gradient": 0, "ig": 0.02, "smoothgrad": 0.04, "gradxinput": 0.06}
	for _, tc := range []struct {
		proto  string
		random float64
		want   string
	}{
		{"PixelFlipping", 0.3, "random ranks below every method"},
		{"PixelFlipping", -0.3, "random ranks above gradient, ig, smoothgrad, gradxinput"},
		{"Deletion", -0.3, "random ranks below every method"},
		{"Deletion", 0.3, "random ranks above gradxinput, smoothgrad, ig, gradient"}, // best first
	} {
		offsets := map[string]float64{"random": tc.random}
		for m, v := range methods {
			offsets[m] = v
		}
		row := cardOf(t, scoreRecords(t, tc.proto, shifted(offsets)), tc.proto)
		all := words(row)
		if !strings.Contains(row.Random.Words, tc.want) || strings.Contains(all, "scores above") || strings.Contains(all, "scores below") {
			t.Errorf("%s, random at %+g: want %q\n%s", tc.proto, tc.random, tc.want, all)
		}
	}
}

// A smoothing that wins ROAR's comparisons (lower accuracy is better)
// improves the score; it does not raise it.
func TestCardPostProcessingWordsByDirection(t *testing.T) {
	d := Diagnostics{Post: []PostComparison{{Dataset: "d", Protocol: "ROAR", Curve: "accuracy", Post: "blur", Better: 4, Total: 5}}}
	f := postFinding(d, Ranking{Dataset: "d", Protocol: "ROAR", Better: protocol.Lower})
	if !f.Flag || !strings.Contains(f.Short, "improves the score in 4 of 5") || strings.Contains(f.Short, "raises") {
		t.Errorf("%+v", f)
	}
}

// A random control that ranks first on a robustness, randomisation or
// complexity metric (a map that ignores the input stays put; one that
// ignores the model changes with every draw) is no sign that the metric
// fails: the card says why the check does not apply and ranks the
// methods. On a faithfulness metric the same values are.
func TestCardAppliesTheControlOnlyWhereChanceShouldLose(t *testing.T) {
	for _, tc := range []struct {
		proto   string
		applies bool
	}{
		{"MaxSensitivity", false},
		{"LocalLipschitzEstimate", false},
		{"MPRT", false},
		{"Complexity", false},
		{"PixelFlipping", true},
		{"IROF", true},
	} {
		p, err := protocol.New(tc.proto, nil)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := p.Info().Headline()
		best := -0.3 // random ranks first
		if h.Better == protocol.Higher {
			best = 0.3
		}
		row := cardOf(t, scoreRecords(t, tc.proto, shifted(map[string]float64{
			"gradient": 0, "ig": 0.02, "smoothgrad": 0.04, "gradxinput": 0.06, "random": best})), tc.proto)
		switch {
		case tc.applies && (!row.Random.Flag || row.CanRank):
			t.Errorf("%s: random ranks first, yet\n%s", tc.proto, words(row))
		case !tc.applies && (row.Random.Flag || !row.CanRank || !strings.Contains(row.Random.Words, "not applied") || strings.Contains(row.Verdict, "random")):
			t.Errorf("%s: the control's rank judged\n%s", tc.proto, words(row))
		}
	}
}

// A verdict that the setting ranks the methods names only the checks that
// ran and passed: no control below them where there is none or where the
// check does not apply, and no 'differences exceed the noise' where a
// pair is not told apart.
func TestCardVerdictClaimsOnlyWhatItChecked(t *testing.T) {
	spread := map[string]float64{"gradient": 0, "ig": 0.02, "smoothgrad": 0.04, "gradxinput": 0.06}
	for _, tc := range []struct {
		name, proto string
		offsets     map[string]float64
		want, not   string
	}{
		{"no control", "PixelFlipping", spread, "every pair of them is told apart", "control"},
		{"control not applied", "MaxSensitivity", map[string]float64{"gradient": 0, "ig": 0.02, "smoothgrad": 0.04, "gradxinput": 0.06, "random": -0.3},
			"every pair of them is told apart", "control"},
		{"5 of 6 pairs", "PixelFlipping", map[string]float64{"gradient": 0, "ig": 0, "smoothgrad": 0.04, "gradxinput": 0.06, "random": 0.3},
			"the random control ranks below them, half or more of their pairs are told apart", "exceed the noise"},
		{"two controls", "PixelFlipping", map[string]float64{"gradient": 0, "ig": 0.1, "random": 0.4, "blockrandom": 0.5},
			"the random controls rank below them, every pair of them is told apart", "control ranks"},
	} {
		row := cardOf(t, scoreRecords(t, tc.proto, shifted(tc.offsets)), tc.proto)
		if !row.CanRank || !strings.Contains(row.Verdict, tc.want) || strings.Contains(row.Verdict, tc.not) {
			t.Errorf("%s: want %q, not %q in\n%s", tc.name, tc.want, tc.not, words(row))
		}
	}
}

// Two protocols that order two methods oppositely, each order told apart
// by its own paired test, contradict each other: the report card of each,
// the summary and REPORT.md name the pair — with two methods too, where
// Kendall's τ is not defined, and they say that τ is not computed.
func TestContradictingProtocolsAreNamed(t *testing.T) {
	recs := scoreRecords(t, "Deletion", shifted(map[string]float64{"gradient": 0, "ig": 0.3}))
	recs = append(recs, scoreRecords(t, "ROAD", shifted(map[string]float64{"gradient": 0.3, "ig": 0}))...)
	d := Diagnose(recs)
	if len(d.Confidence.Rankings) != 2 {
		t.Fatalf("rankings %+v", d.Confidence.Rankings)
	}
	var first, second string
	for _, r := range d.Confidence.Rankings {
		if r.Protocol == "Deletion" {
			first = r.Methods[0].Method
		} else {
			second = r.Methods[0].Method
		}
	}
	if first == second {
		t.Fatalf("both rank %s first: the records do not flip", first)
	}
	cs := d.Confidence.Contradictions
	if len(cs) != 1 || cs[0].First != "Deletion" || cs[0].Second != "ROAD" || cs[0].A != first || !cs[0].InFirst.Differ || !cs[0].InSecond.Differ {
		t.Fatalf("contradictions %+v", cs)
	}
	for _, row := range d.Confidence.Card {
		other := map[string]string{"Deletion": "ROAD", "ROAD": "Deletion"}[row.Protocol]
		if f := row.Protocols; !f.Flag || f.Value != 1 || !strings.Contains(f.Words, other+" ranks") || !strings.Contains(row.Verdict, other+" orders") {
			t.Errorf("%s card: %+v, verdict %q", row.Protocol, f, row.Verdict)
		}
	}
	if len(d.Confidence.Agreement) != 1 || !strings.Contains(d.Confidence.Agreement[0].Words, "Kendall's τ between the protocols is not computed: the 2 protocols share 2 methods") {
		t.Errorf("agreement %+v", d.Confidence.Agreement)
	}
	sum := strings.Join(strings.Fields(Summary(recs, d)), " ")
	if !strings.Contains(sum, "Contradiction! Deletion and ROAD order") || !strings.Contains(sum, "is not computed") {
		t.Errorf("summary:\n%s", Summary(recs, d))
	}
	md := Markdown("t", recs, d, Left{})
	if !strings.Contains(md, "**They contradict each other on d**: Deletion and ROAD order") || !strings.Contains(md, "| Other protocols ⚠ | 1 pair flipped |") {
		t.Errorf("REPORT.md:\n%s", md)
	}

	// The same orders in both: nothing contradicts, and the card says so.
	recs = scoreRecords(t, "Deletion", shifted(map[string]float64{"gradient": 0, "ig": 0.3}))
	recs = append(recs, scoreRecords(t, "ROAD", shifted(map[string]float64{"gradient": 0, "ig": 0.3}))...)
	d = Diagnose(recs) // both higher is better: the same offsets, the same order
	if len(d.Confidence.Contradictions) != 0 || d.Confidence.Card[0].Protocols.Flag || d.Confidence.Card[0].Protocols.Value != 0 {
		t.Errorf("no flip, yet %+v, %+v", d.Confidence.Contradictions, d.Confidence.Card[0].Protocols)
	}
}
