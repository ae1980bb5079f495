package report

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// twoMethods is a campaign of gradient and ig under Deletion (higher
// lerf_minus_morf is better) on n inputs and the given seeds: a
// difficulty the two share (s.d. 0.2) plus ig's small edge (diff) plus
// noise of each's own (s.d. noise).
func twoMethods(n int, seeds []uint64, diff, noise float64) []store.Record {
	var recs []store.Record
	for _, seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 77))
		base := make([]float64, n)
		for i := range base {
			base[i] = 0.3 + 0.2*rng.NormFloat64()
		}
		for _, meth := range []string{"gradient", "ig"} {
			u := make([]float32, n)
			var sum float64
			for i := range u {
				v := base[i] + noise*rng.NormFloat64()
				if meth == "ig" {
					v += diff
				}
				u[i], sum = float32(v), sum+v
			}
			res := &protocol.Result{Protocol: "Deletion", Method: meth, Config: map[string]any{},
				Scalars: []protocol.Scalar{{Name: "lerf_minus_morf", Value: sum / float64(n), Better: protocol.Higher}},
				Units:   protocol.Units{N: n, Names: []string{"lerf_minus_morf"}, Values: [][]float32{u}}}
			recs = append(recs, store.Record{Dataset: "d", Model: "m", Method: meth, Protocol: "Deletion", Seed: seed, Result: res})
		}
	}
	return recs
}

// aboutN finds "about N inputs would tell them apart" and returns N.
var aboutN = regexp.MustCompile(`about ([0-9 ]+) (inputs|seeds) would tell them apart`)

// A user's own campaign of 20 inputs whose two methods differ by a little:
// the paired test cannot tell them apart, so the pair, the ranking and
// the report card are inconclusive — not "no" — and say the smallest
// difference this run finds 80 % of the time and about how many inputs
// would tell them apart: in diagnostics.json, on the card, in REPORT.md
// and in the summary the CLI prints.
func TestTwentyInputsAreInconclusiveAndSayHowManyWouldTell(t *testing.T) {
	recs := twoMethods(20, []uint64{1}, 0.01, 0.05)
	d := Diagnose(recs)
	rk, ok := d.Confidence.Ranking("d", "Deletion")
	if !ok || len(rk.Pairs) != 1 {
		t.Fatalf("ranking %+v", rk)
	}
	p := rk.Pairs[0]
	if p.Differ || p.Outcome != Inconclusive || p.Unit != "inputs" || !(p.Detectable > 0) || p.Needed <= 20 || p.Needed > 1e6 {
		t.Fatalf("pair %+v; want inconclusive, a detectable difference and more than 20 inputs needed", p)
	}
	// The planning formula by hand: the interval's standard error, z's
	// for 5 % and 80 %.
	se := (p.Diff.Hi - p.Diff.Lo) / (2 * 1.959964)
	if want := (1.959964 + 0.841621) * se; math.Abs(p.Detectable-want) > 1e-4 {
		t.Errorf("detectable %v; want %v", p.Detectable, want)
	}
	needed := strconv.Itoa(p.Needed)
	if rk.Outcome != Inconclusive || !strings.Contains(rk.Verdict(), "about "+needed+" inputs would tell them apart") {
		t.Errorf("ranking %s: %q", rk.Outcome, rk.Verdict())
	}
	var row CardRow
	for _, r := range d.Confidence.Card {
		row = r
	}
	if row.Outcome != Inconclusive || row.CanRank || !strings.HasPrefix(row.Verdict, "Inconclusive: Deletion cannot yet rank these methods here") ||
		!strings.Contains(row.Verdict, "about "+needed+" inputs would tell them apart") || !strings.Contains(row.Verdict, "this run finds a difference between two methods of "+small(p.Detectable)) {
		t.Errorf("card %s: %q", row.Outcome, row.Verdict)
	}
	md := Markdown("t", recs, d, Left{})
	for _, want := range []string{
		"| Deletion | d | Inconclusive: Deletion cannot yet rank these methods here",
		"Inconclusive: no clear winner — the best, ig, cannot be told apart from the runner-up, gradient; this run finds a difference of",
		"inconclusive: this run finds a difference of " + small(p.Detectable) + " or more 80 % of the time (at Holm's level 0.05); about " + needed + " inputs would tell them apart |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("REPORT.md lacks %q:\n%s", want, md)
		}
	}
	if s := flat(Summary(recs, d)); !strings.Contains(s, "inconclusive: no clear winner") || !strings.Contains(s, "about "+needed+" inputs would tell them apart") {
		t.Errorf("summary:\n%s", s)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"outcome":"inconclusive"`, `"needed":` + needed, `"unit":"inputs"`, `"verdict":"inconclusive: no clear winner`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("diagnostics.json lacks %s", want)
		}
	}
	if m := aboutN.FindStringSubmatch(rk.Verdict()); m == nil {
		t.Errorf("no number of inputs in %q", rk.Verdict())
	}
	// Many inputs tell the difference apart: the pair holds.
	big := Diagnose(twoMethods(3000, []uint64{1}, 0.01, 0.05))
	if r, _ := big.Confidence.Ranking("d", "Deletion"); r.Outcome != Holds || r.Pairs[0].Outcome != Holds || !strings.HasPrefix(r.Pairs[0].Words, "holds: told apart") {
		t.Errorf("at 3 000 inputs: %s, pair %+v", r.Outcome, r.Pairs[0])
	}
}

// Over several seeds the seed is the unit: the pair's p is Student's t
// over the seeds (as REPORT.md says), and an inconclusive pair says about
// how many seeds would tell the methods apart.
func TestSeedsAreTheUnitOfAnInconclusivePair(t *testing.T) {
	recs := twoMethods(50, []uint64{1, 2, 3}, 0.004, 0.05)
	d := Diagnose(recs)
	rk, _ := d.Confidence.Ranking("d", "Deletion")
	p := rk.Pairs[0]
	if p.Unit != "seeds" || p.Diff.Method != stats.MethodSeeds || p.Outcome != Inconclusive || p.Needed <= 3 || !strings.Contains(p.Words, "seeds would tell them apart") {
		t.Fatalf("pair %+v", p)
	}
	md := Markdown("t", recs, d, Left{})
	if p.PTest == stats.TestSeeds && !strings.Contains(md, "(t over 3 seeds)") {
		t.Errorf("REPORT.md does not say the p is t over 3 seeds:\n%s", md)
	}
	if !strings.Contains(md, "With 3 seeds, Student's t over the seeds has 2 degrees of freedom") {
		t.Errorf("REPORT.md does not say what 3 seeds cost:\n%s", md)
	}
}

// Two methods that score the same on every input: the pair says "no
// input differs" in place of the interval [0, 0], and is inconclusive
// (other inputs might tell them apart), with no number of inputs.
func TestNoInputDiffersInsteadOfAnInterval(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	same, other := make([]float64, 60), make([]float64, 60)
	for i := range same {
		same[i] = 0.5 + 0.1*r.NormFloat64()
		other[i] = same[i] - 0.2 + 0.01*r.NormFloat64()
	}
	recs := unitRecordsOf("Deletion", "lerf_minus_morf", protocol.Higher, 0, map[string][]float64{"gradient": same, "ig": same, "random": other})
	d := Diagnose(recs)
	rk, _ := d.Confidence.Ranking("d", "Deletion")
	p, ok := pairOf(rk, "gradient", "ig")
	if !ok || p.Outcome != Inconclusive || p.Diff.Method != stats.MethodNoneDiffer || p.Needed != 0 || !strings.Contains(p.Words, NoneDiffer) {
		t.Fatalf("pair %+v", p)
	}
	md := Markdown("t", recs, d, Left{})
	if !strings.Contains(md, "| "+NoneDiffer+" |") || strings.Contains(md, "0.000 [0.000, 0.000]") {
		t.Errorf("REPORT.md:\n%s", md)
	}
}

// No report card says its setting cannot rank the methods while the
// ranking stars a winner: where a check finds evidence against the
// ranking (the random control ranks above a method, told apart from it)
// the card's outcome is "does not hold" and the winner, though told apart
// from the runner-up, is withheld — no star in the summary, the ranking's
// verdict says why; where only the noise blocks it, the card is
// inconclusive and names the winner rather than saying it cannot rank.
func TestNoCardSaysItCannotRankBesideAStar(t *testing.T) {
	// PixelFlipping: lower is better; random beats smoothgrad, told apart.
	recs := scoreRecords(t, "PixelFlipping", shifted(map[string]float64{"gradient": 0, "ig": 0.1, "smoothgrad": 0.5, "random": 0.3}))
	d := Diagnose(recs)
	row := d.Confidence.Card[0]
	rk, _ := d.Confidence.Ranking("d", row.Protocol)
	if row.Outcome != DoesNotHold || !strings.Contains(row.Verdict, "cannot rank") || rk.Winner != "" || rk.Withheld != "gradient" || rk.Outcome != DoesNotHold {
		t.Fatalf("card %s %q; ranking winner %q, withheld %q, %s", row.Outcome, row.Verdict, rk.Winner, rk.Withheld, rk.Outcome)
	}
	if s := Summary(recs, d); strings.Contains(s, " *\n") || !strings.Contains(flat(s), "does not hold: gradient is told apart from the runner-up, but the report card finds") {
		t.Errorf("summary:\n%s", s)
	}
	// Only the noise blocks: inconclusive, naming the winner.
	noisy := CardRow{Protocol: "ROAD", Separation: Finding{Flag: true, Noise: true, Short: "most of the methods' differences lie within the noise (1 of 6 pairs told apart)"}}
	r := Ranking{Protocol: "ROAD", Winner: "ig", Methods: []RankedMethod{{Method: "ig"}, {Method: "gradient"}}}
	can, o, v := verdict(noisy, r, 0)
	if can || o != Inconclusive || strings.Contains(v, "cannot rank") || strings.Contains(v, "cannot yet rank") || !strings.Contains(v, "names a best method, ig") {
		t.Errorf("noise only, a winner: %v %s %q", can, o, v)
	}
	// Every campaign the package's tests build keeps the rule.
	for _, recs := range [][]store.Record{unitRecords(), twoMethods(20, []uint64{1}, 0.01, 0.05), recs} {
		d := Diagnose(recs)
		for _, row := range d.Confidence.Card {
			if rk, _ := d.Confidence.Ranking(row.Dataset, row.Protocol); rk.Winner != "" && strings.Contains(row.Verdict, "rank these methods here") && !row.CanRank {
				t.Errorf("%s: %q beside the winner %s", row.Protocol, row.Verdict, rk.Winner)
			}
		}
	}
}

// The protocols' agreement has an outcome too: where two protocols order
// two methods oppositely, each told apart, it does not hold, whatever
// their concordance.
func TestAgreementHasAnOutcome(t *testing.T) {
	d := Diagnose(unitRecords())
	if len(d.Confidence.Agreement) != 1 || len(d.Confidence.Contradictions) == 0 {
		t.Fatalf("agreement %+v, contradictions %d", d.Confidence.Agreement, len(d.Confidence.Contradictions))
	}
	a := d.Confidence.Agreement[0]
	if a.Outcome != DoesNotHold || !strings.HasPrefix(a.Says(), "does not hold: ") {
		t.Errorf("agreement %s: %q", a.Outcome, a.Says())
	}
	for _, c := range []struct {
		a    Agreement
		want Outcome
	}{
		{Agreement{Protocols: []string{"A", "B", "C"}, P: 0.01}, Holds},
		{Agreement{Protocols: []string{"A", "B"}, P: 0.4}, Inconclusive},
		{Agreement{P: 0.01}, NotEvaluated},
	} {
		conf := Confidence{Agreement: []Agreement{c.a}}
		conf.judgeAgreement()
		if got := conf.Agreement[0].Outcome; got != c.want {
			t.Errorf("%+v: %s, want %s", c.a, got, c.want)
		}
	}
}

// A setting's pairs are tested on every core, each with draws of its own:
// the numbers are the same on one core as on several.
func TestPairsAreTheSameOnOneCoreAsOnMany(t *testing.T) {
	recs := withSeeds(records())
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, _ := json.Marshal(Confident(recs, ConfidenceOptions{}))
	runtime.GOMAXPROCS(4)
	many, _ := json.Marshal(Confident(recs, ConfidenceOptions{}))
	if !bytes.Equal(one, many) {
		t.Error("the pairs' numbers differ between one core and four")
	}
}
