package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// unitRecords is a campaign with per-input values, two seeds: under
// "Deletion" (higher lerf_minus_morf is better), gradient and gradxinput
// score alike (0.30 ± noise) and well above random (0.05); under "ROAR"
// (lower mean accuracy is better) ig is clearly the best, then the same
// two, random last. The protocols agree on random being last, not on ig.
func unitRecords() []store.Record {
	var recs []store.Record
	means := map[string]map[string]float64{
		"Deletion": {"gradient": 0.30, "gradxinput": 0.30, "ig": 0.20, "random": 0.05},
		"ROAR":     {"gradient": 0.60, "gradxinput": 0.60, "ig": 0.40, "random": 0.85},
	}
	for _, seed := range []uint64{1, 2} {
		for _, proto := range []string{"Deletion", "ROAR"} {
			rng := rand.New(rand.NewPCG(seed, 7))
			base := make([]float64, 400) // each input's difficulty, shared by the methods: the pairing
			for i := range base {
				base[i] = 0.2 * rng.NormFloat64()
			}
			for _, meth := range []string{"gradient", "gradxinput", "ig", "random"} {
				mu := means[proto][meth]
				per := make([]float64, len(base))
				u := make([]float32, len(base))
				var sum float64
				for i := range per {
					per[i] = mu + base[i] + 0.02*rng.NormFloat64()
					if proto == "ROAR" { // correctness averaged over rates: in [0, 1]
						per[i] = math.Max(0, math.Min(1, per[i]))
					}
					u[i] = float32(per[i])
					sum += per[i]
				}
				name, better := "lerf_minus_morf", protocol.Higher
				if proto == "ROAR" {
					name, better = "mean_accuracy", protocol.Lower
				}
				res := &protocol.Result{Protocol: proto, Method: meth, Config: map[string]any{},
					Scalars: []protocol.Scalar{{Name: name, Value: sum / float64(len(per)), Better: better}},
					Units:   protocol.Units{N: len(per), Names: []string{name}, Values: [][]float32{u}}}
				recs = append(recs, store.Record{Dataset: "mix", Model: "m", Method: meth, Protocol: proto, Seed: seed, Result: res})
			}
		}
	}
	return recs
}

func TestConfidenceCallsOnlyRealDifferences(t *testing.T) {
	recs := unitRecords()
	d := Diagnose(recs)
	del, ok := d.Confidence.Ranking("mix", "Deletion")
	if !ok {
		t.Fatalf("no Deletion ranking: %+v", d.Confidence.Rankings)
	}
	// gradient and gradxinput are the same: no winner, one group.
	if del.Winner != "" {
		t.Errorf("Deletion winner %q among equals", del.Winner)
	}
	letters := map[string]string{}
	for _, m := range del.Methods {
		letters[m.Method] = m.Letters
	}
	if letters["gradient"] != letters["gradxinput"] || letters["gradient"] == letters["ig"] || strings.ContainsAny(letters["random"], letters["gradient"]) {
		t.Errorf("Deletion letters %v", letters)
	}
	if p := del.Methods[0].PFirst + del.Methods[1].PFirst; p < 0.99 || del.Methods[0].PFirst > 0.95 {
		t.Errorf("the two equals should share the first place: %+v", del.Methods[:2])
	}
	roar, _ := d.Confidence.Ranking("mix", "ROAR")
	if roar.Winner != "ig" || roar.Methods[0].Method != "ig" || roar.Methods[0].PFirst < 0.99 {
		t.Errorf("ROAR: winner %q, first %+v", roar.Winner, roar.Methods[0])
	}
	if roar.Methods[len(roar.Methods)-1].Method != "random" || roar.Seeds != 2 || roar.Units != 400 {
		t.Errorf("ROAR ranking %+v", roar)
	}
	for _, m := range roar.Methods {
		if !(m.CI.Lo <= m.CI.Estimate && m.CI.Estimate <= m.CI.Hi) || m.CI.Groups != 2 || m.CI.Units != 800 {
			t.Errorf("%s: interval %+v", m.Method, m.CI)
		}
	}
	// Two protocols: W = (1 + Spearman's ρ)/2; four methods cannot show
	// agreement beyond chance.
	if len(d.Confidence.Agreement) != 1 {
		t.Fatalf("agreement %+v", d.Confidence.Agreement)
	}
	a := d.Confidence.Agreement[0]
	var x, y []float64
	for _, m := range a.Methods {
		for k, r := range []Ranking{del, roar} {
			for _, rm := range r.Methods {
				if rm.Method == m {
					v := oriented(rm.CI.Estimate, r.Better)
					if k == 0 {
						x = append(x, v)
					} else {
						y = append(y, v)
					}
				}
			}
		}
	}
	if want := (1 + stats.Spearman(x, y)) / 2; math.Abs(a.W-want) > 1e-12 || a.P < 0.05 || !strings.Contains(a.Words, "no more than chance") {
		t.Errorf("W %g (want %g), p %g: %s", a.W, want, a.P, a.Words)
	}
	// The report card: random is below and apart under both.
	for _, row := range d.Confidence.Card {
		if row.Random.Flag || !row.CanRank || math.IsNaN(row.Reliability.Value) {
			t.Errorf("%s card: %+v", row.Protocol, row)
		}
	}
	// Same records, same intervals.
	again := Diagnose(recs)
	if again.Confidence.Rankings[0].Methods[0].CI != d.Confidence.Rankings[0].Methods[0].CI {
		t.Error("the same records gave another interval")
	}
}

// flat is s with its line breaks and runs of spaces as single spaces: a
// summary's notes as words, wherever they wrap.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// The summary prints intervals and letters, stars only a winner told
// apart from the runner-up, says "no clear winner" otherwise, and whether
// the protocols agree; the CSV carries the intervals, per seed and over
// seeds.
func TestSummaryAndCSVCarryTheIntervals(t *testing.T) {
	recs := unitRecords()
	d := Diagnose(recs)
	s := Summary(recs, d)
	for _, want := range []string{"no clear winner", "[95% interval over 2 seeds' means, the seed the unit]", "Kendall's W", " *"} {
		if !strings.Contains(flat(s), want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if starred := strings.Count(s, " *\n"); starred != 1 {
		t.Errorf("one winner (ig under ROAR) should be starred:\n%s", s)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, "run", recs, d.Confidence); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var perSeed, pooled int
	for _, r := range rows[1:] {
		if r[10] == "" || r[11] == "" {
			t.Errorf("row without an interval: %v", r)
			continue
		}
		switch r[6] {
		case AllSeeds:
			pooled++
			if r[12] != "800" || r[13] != "2" {
				t.Errorf("pooled row %v", r)
			}
		default:
			perSeed++
			if r[12] != "400" || r[13] != "1" {
				t.Errorf("per-seed row %v", r)
			}
		}
	}
	if perSeed != 16 || pooled != 8 {
		t.Errorf("%d per-seed and %d pooled rows, want 16 and 8", perSeed, pooled)
	}
}

// A run from before per-input values were kept opens and exports as
// before, and says that its intervals need a re-run.
func TestOldRunsSayIntervalsNeedARerun(t *testing.T) {
	recs := records()
	d := Diagnose(recs)
	if len(d.Confidence.Missing) == 0 || len(d.Confidence.Rankings) != 0 {
		t.Errorf("missing %+v, rankings %d", d.Confidence.Missing, len(d.Confidence.Rankings))
	}
	if s := Summary(recs, d); !strings.Contains(flat(s), "intervals need a re-run") {
		t.Errorf("summary:\n%s", s)
	}
}

// diagnostics.json holds undefined numbers as null.
func TestDiagnosticsWithUndefinedNumbersAreJSON(t *testing.T) {
	recs := unitRecords()
	for i := range recs {
		if recs[i].Method == "random" { // no values: NaN everywhere
			v := recs[i].Result.Units.Values[0]
			for j := range v {
				v[j] = float32(math.NaN())
			}
		}
	}
	d := Diagnose(recs)
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "null") {
		t.Errorf("no null in %s", b[:200])
	}
	// Each interval says what it is of, and how it was had.
	var back struct {
		Confidence struct {
			Intervals []map[string]any `json:"intervals"`
		} `json:"confidence"`
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Confidence.Intervals) == 0 {
		t.Fatalf("diagnostics.json's intervals: %v", err)
	}
	for _, key := range []string{"dataset", "protocol", "method", "metric", "seed", "estimate", "lo", "hi", "ci_method"} {
		if _, ok := back.Confidence.Intervals[0][key]; !ok {
			t.Errorf("an interval in diagnostics.json lacks %q: %v", key, back.Confidence.Intervals[0])
		}
	}
}

// BenchmarkConfidence1000x5x10 is the confidence analysis of a campaign
// of 5 methods scored by 10 metrics on 1 000 inputs — Deletion's five
// per-input scores under two settings (zero and blur references) —:
// per-metric intervals, each setting's ranking with its paired tests, rank
// probabilities, the agreement and the report card. The budget:
// under 5 % of the campaign's time.
func BenchmarkConfidence1000x5x10(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	var recs []store.Record
	names := []string{"auc_morf", "auc_lerf", "lerf_minus_morf", "tau_morf", "tau_lerf"}
	for _, ref := range []string{"zero", "blur"} {
		for m, meth := range []string{"gradient", "ig", "smoothgrad", "gradxinput", "random"} {
			res := &protocol.Result{Protocol: "Deletion", Method: meth, Config: map[string]any{"reference": ref}, Units: protocol.Units{N: 1000}}
			for _, name := range names {
				v := make([]float32, 1000)
				var sum float64
				for i := range v {
					v[i] = float32(0.1*float64(m) + rng.NormFloat64())
					sum += float64(v[i])
				}
				res.Scalars = append(res.Scalars, protocol.Scalar{Name: name, Value: sum / 1000, Better: protocol.Higher})
				res.Units.Names, res.Units.Values = append(res.Units.Names, name), append(res.Units.Values, v)
			}
			recs = append(recs, store.Record{Dataset: "fashion-mnist", Method: meth, Protocol: "Deletion", Seed: 1, Result: res})
		}
	}
	b.ResetTimer()
	for b.Loop() {
		d := Diagnose(recs)
		if len(d.Confidence.Rankings) != 2 || len(d.Confidence.Intervals) != 50 {
			b.Fatalf("%d rankings, %d intervals", len(d.Confidence.Rankings), len(d.Confidence.Intervals))
		}
	}
}

// Where every method's retrained models learned little, the summary names
// no winner and says why, rather than that the best is within noise.
func TestSummaryNamesNoWinnerWhenNoRetrainedModelLearned(t *testing.T) {
	recs := unitRecords()
	for i := range recs {
		if r := recs[i].Result; r.Protocol == "ROAR" {
			r.Chance, r.Base = 0.1, 0.9
			r.Curves = []protocol.Curve{{Name: "accuracy", X: protocol.Values{0.1, 0.5, 0.9}, Y: protocol.Values{0.3, 0.2, 0.1}}}
		}
	}
	s := Summary(recs, Diagnose(recs))
	if !strings.Contains(flat(s), "drop rates; not evaluated: no winner named, as no method's retrained models learned in this setting (!)") {
		t.Errorf("summary:\n%s", s)
	}
}

// Where no method's retrained models learned, the retraining cannot tell
// the methods apart: no method of the setting is ranked — each keeps its
// interval but has no letter, no chance of ranking first, no mean rank
// and no pair — and the protocols' agreement, the figures and the summary
// leave the setting's ranking out. Where one method's models sit at chance
// but another's learned, the retraining works and that method removed what
// the models learn from: ROAR ranks it like any other (here, first).
func TestSettingsWhoseRetrainingLearnedNothingRankNoMethod(t *testing.T) {
	weaken := func(recs []store.Record, methods ...string) []store.Record {
		for i := range recs {
			r := recs[i].Result
			if r.Protocol != "ROAR" {
				continue
			}
			r.Chance, r.Base = 0.1, 0.9
			best := 0.8 // learned
			if slices.Contains(methods, r.Method) {
				best = 0.12 // within the margin of chance
			}
			r.Curves = []protocol.Curve{{Name: "accuracy", X: protocol.Values{0.1, 0.5, 0.9}, Y: protocol.Values{best, 0.11, 0.1}}}
		}
		return recs
	}
	all := []string{"gradient", "gradxinput", "ig", "random"}
	recs := weaken(unitRecords(), all...)
	d := Diagnose(recs)
	if len(d.Weak) != 2*len(all) { // each method, each seed
		t.Errorf("%d weak runs, want %d: %+v", len(d.Weak), 2*len(all), d.Weak)
	}
	roar, _ := d.Confidence.Ranking("mix", "ROAR")
	for _, m := range roar.Methods {
		if !m.Weak || m.Ranked() || m.Letters != "" || !math.IsNaN(m.PFirst) || !math.IsNaN(m.MeanRank) || !(m.CI.Lo <= m.CI.Estimate && m.CI.Estimate <= m.CI.Hi) {
			t.Errorf("%s ranked where no retraining learned: %+v", m.Method, m)
		}
	}
	if roar.Winner != "" || len(roar.Pairs) != 0 {
		t.Errorf("winner %q, %d pairs where no retraining learned", roar.Winner, len(roar.Pairs))
	}
	if a := d.Confidence.Agreement; len(a) != 1 || len(a[0].Protocols) != 0 ||
		a[0].Words != "the protocols cannot be compared: ROAR left out, where fewer than two methods' retrained models learned or have a score" {
		t.Errorf("agreement with a ROAR that ranks nothing: %+v", d.Confidence.Agreement)
	}
	figs, err := Figures(recs, d.Confidence)
	if err != nil {
		t.Fatal(err)
	}
	first := slices.IndexFunc(figs, func(f Figure) bool { return strings.HasSuffix(f.Name, "rank_probability") })
	if first < 0 || !strings.Contains(figs[first].Plot.Title.Text, "not shown: ROAR (its retrained models learned nothing)") {
		t.Errorf("the ranks-first figure does not name the ROAR it leaves out (found: %v)", first >= 0 && figs[first].Plot != nil)
	}
	table := Summary(recs, d)
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "ig ") && !strings.HasSuffix(strings.TrimSpace(line), "] !") {
			t.Errorf("ig's ROAR cell has a letter or no mark: %q", line)
		}
	}
	if lines := d.Summary(); len(lines) == 0 || !strings.Contains(lines[0], "no method's retrained models learned") || strings.Count(strings.Join(lines, "\n"), "retrained models learned") != 1 {
		t.Errorf("want one warning for the setting, got %q", lines)
	}
	for _, row := range d.Confidence.Card {
		if row.Protocol == "ROAR" && !strings.Contains(row.Random.Words, "no method's retrained models learned") {
			t.Errorf("ROAR's card where no retraining learned: %q", row.Random.Words)
		}
	}

	// One method's models at chance, the others' learning: IG removed what
	// they learn from, and ROAR (lower is better) ranks it first.
	d = Diagnose(weaken(unitRecords(), "ig"))
	roar, _ = d.Confidence.Ranking("mix", "ROAR")
	if len(d.Weak) != 0 {
		t.Errorf("weak runs where the retraining learned: %+v", d.Weak)
	}
	for _, m := range roar.Methods {
		if m.Weak || !m.Ranked() || m.Letters == "" || math.IsNaN(m.MeanRank) {
			t.Errorf("%s not ranked: %+v", m.Method, m)
		}
	}
	if len(roar.Pairs) != 6 {
		t.Errorf("%d pairs among four ranked methods, want 6", len(roar.Pairs))
	}
}

// The verdict names a winner only when told apart, says when every method
// scores the same, and says why it names none otherwise, each beginning
// with its outcome; one the report card withholds is named as such.
func TestRankingVerdictSaysWhyNoWinner(t *testing.T) {
	m := func(name string, v float64) RankedMethod {
		return RankedMethod{Method: name, CI: stats.Interval{Estimate: v}}
	}
	weak := m("ig", 0.1)
	weak.Weak = true
	for _, c := range []struct {
		name string
		r    Ranking
		want string
	}{
		{"told apart", Ranking{Methods: []RankedMethod{m("ig", 0.3), m("random", 0.1)}, Winner: "ig"}, "holds: best ig, told apart from the runner-up"},
		{"withheld", Ranking{Protocol: "ROAD", Methods: []RankedMethod{m("ig", 0.3), m("random", 0.1)}, Withheld: "ig"},
			"does not hold: ig is told apart from the runner-up, but the report card finds that ROAD cannot rank these methods here, so no best is named"},
		{"all the same", Ranking{Methods: []RankedMethod{m("ig", 0), m("gradient", 0), m("random", 0)}}, "does not hold: no winner, as every method scores the same (0.000)"},
		{"within the noise", Ranking{Methods: []RankedMethod{m("ig", 0.3), m("random", 0.29)}}, "inconclusive: no clear winner — the best, ig, cannot be told apart from the runner-up, random"},
		{"within the noise, with the pair's plan", Ranking{Methods: []RankedMethod{m("ig", 0.3), m("random", 0.29)},
			Pairs: []Pair{{A: "ig", B: "random", Outcome: Inconclusive, Words: "inconclusive: about 80 inputs would tell them apart"}}},
			"inconclusive: no clear winner — the best, ig, cannot be told apart from the runner-up, random; about 80 inputs would tell them apart"},
		{"one scored", Ranking{Methods: []RankedMethod{m("ig", 0.3), m("random", math.NaN())}}, "not evaluated: no winner named, as fewer than two methods have a score"},
		{"no learner", Ranking{Methods: []RankedMethod{weak, m("random", 0.2)}}, "not evaluated: no winner named, as no method's retrained models learned in this setting (!)"},
		{"one method", Ranking{Methods: []RankedMethod{m("ig", 0.3)}}, ""},
	} {
		if got := c.r.Verdict(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A setting where every method scores the same ranks nothing: the
// protocols' agreement leaves it out and says so, and it has no
// critical-difference or ranks-first figure.
func TestAgreementLeavesOutASaturatedSetting(t *testing.T) {
	recs := unitRecords()
	for _, r := range unitRecords() {
		if r.Protocol != "Deletion" {
			continue
		}
		res := *r.Result
		res.Config = map[string]any{"samples": 7} // another setting of Deletion
		res.Scalars = []protocol.Scalar{{Name: "lerf_minus_morf", Value: 1, Better: protocol.Higher}}
		u := make([]float32, res.Units.N)
		for i := range u {
			u[i] = 1
		}
		res.Units.Values = [][]float32{u}
		r.Result = &res
		recs = append(recs, r)
	}
	d := Diagnose(recs)
	if len(d.Confidence.Rankings) != 3 || len(d.Confidence.Agreement) != 1 {
		t.Fatalf("%d rankings, agreement %+v", len(d.Confidence.Rankings), d.Confidence.Agreement)
	}
	a := d.Confidence.Agreement[0]
	if len(a.Protocols) != 2 || !strings.Contains(a.Words, "; left out: Deletion") || !strings.HasSuffix(a.Words, ", where every method scores the same") {
		t.Errorf("a saturated setting in the agreement: %v, %q", a.Protocols, a.Words)
	}
	figs, err := Figures(recs, d.Confidence)
	if err != nil {
		t.Fatal(err)
	}
	var cd []string
	comparing := 0
	for _, f := range figs {
		if strings.HasSuffix(f.Name, "critical_difference") {
			cd = append(cd, f.Name)
		}
		// The figures comparing the settings name the one they leave out.
		if strings.HasSuffix(f.Name, "rank_probability") || strings.Contains(f.Plot.Title.Text, "Do the protocols agree?") {
			comparing++
			if !strings.Contains(f.Plot.Title.Text, "not shown: Deletion (samples=7) (every method scores the same)") {
				t.Errorf("%s does not say it leaves out the saturated setting: %q", f.Name, f.Plot.Title.Text)
			}
		}
	}
	if comparing != 2 {
		t.Errorf("%d figures compare the settings, want the ranks-first one and the agreement", comparing)
	}
	if len(cd) != 2 {
		t.Errorf("critical-difference figures %v: want those of the two settings that rank", cd)
	}

	// Without ROAR, one setting ranks: nothing to compare, and the
	// agreement says why, with no τ table or figure.
	recs = slices.DeleteFunc(recs, func(r store.Record) bool { return r.Protocol == "ROAR" })
	d = Diagnose(recs)
	if len(d.Confidence.Agreement) != 1 || d.Confidence.Agreement[0].Words != "the protocols cannot be compared: Deletion (samples=7) left out, where every method scores the same" {
		t.Errorf("agreement of one ranking and one saturated setting: %+v", d.Confidence.Agreement)
	}
	if _, err := json.Marshal(d); err != nil {
		t.Errorf("diagnostics with no agreement to measure: %v", err)
	}
	if md := Markdown("t", recs, d, Left{}); !strings.Contains(md, "the protocols cannot be compared") || strings.Contains(md, "Kendall's τ between the rankings") {
		t.Errorf("REPORT.md's agreement:\n%s", md)
	}
}

// A setting that tells none of its pairs apart stays in the agreement,
// named: its τ with the others is within its noise.
func TestAgreementNamesASettingThatTellsNoPairApart(t *testing.T) {
	rank := func(proto string, differ bool, vals ...float64) Ranking {
		r := Ranking{Dataset: "d", Protocol: proto, Better: protocol.Higher}
		for i, v := range vals {
			r.Methods = append(r.Methods, RankedMethod{Method: string(rune('a' + i)), CI: stats.Interval{Estimate: v}})
		}
		r.Pairs = []Pair{{A: "a", B: "b", Differ: differ}}
		return r
	}
	as := agreement([]Ranking{rank("GOAR", true, 3, 2, 1), rank("ROAD", false, 1, 3, 2)}, 1)
	if len(as) != 1 || !strings.HasSuffix(as[0].Words, "; ROAD tells none of its pairs apart, so its τ with the others is within the noise") {
		t.Errorf("%+v", as)
	}
}
