package report

import (
	"maps"
	"math"
	"strings"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/store"
)

// withOOD sets the energy AUROC of the records' perturbed inputs, as the
// protocols that perturb report it.
func withOOD(recs []store.Record, auroc float64) []store.Record {
	for _, r := range recs {
		r.Result.Scalars = append(r.Result.Scalars, protocol.Scalar{Name: "ood_auroc", Value: auroc, Better: protocol.Lower})
	}
	return recs
}

func answerOf(t *testing.T, recs []store.Record) Answer {
	t.Helper()
	as := Diagnose(recs).Confidence.Trust
	if len(as) != 1 {
		t.Fatalf("%d answers, want 1", len(as))
	}
	return as[0]
}

func admissionOf(t *testing.T, a Answer, proto string) Admission {
	t.Helper()
	for _, ad := range a.Admissions {
		if ad.Protocol == proto {
			return ad
		}
	}
	t.Fatalf("no admission of %s in %+v", proto, a.Admissions)
	return Admission{}
}

// Two protocols near the data that agree, ig best and random last, each
// pair told apart: the answer trusts ig, with both admitted and every
// method beating Random.
func TestTrustNamesTheMethodEveryAdmittedProtocolRanksFirst(t *testing.T) {
	v := shifted(map[string]float64{"ig": 0.3, "gradient": 0.2, "smoothgrad": 0.1, "random": 0})
	recs := append(withOOD(scoreRecords(t, "deletion", v), 0.6), scoreRecords(t, "irof", v)...)
	a := answerOf(t, recs)
	if a.Outcome != Holds || a.Trusted != "ig" || !strings.HasPrefix(a.Headline, "Trust ig") {
		t.Fatalf("outcome %s, trusted %q: %s", a.Outcome, a.Trusted, a.Headline)
	}
	if ad := admissionOf(t, a, "Deletion"); ad.Admit != Admitted {
		t.Errorf("Deletion %s: %s", ad.Admit, ad.Words)
	}
	// IROF reports no off-data distance: admitted, with that caveat.
	if ad := admissionOf(t, a, "IROF"); ad.Admit != AdmittedCaveat || !strings.Contains(ad.Words, "not measured") {
		t.Errorf("IROF %s: %s", ad.Admit, ad.Words)
	}
	var order []string
	for _, m := range a.Methods {
		order = append(order, m.Method)
		if !m.Control && m.BeatsRandom != Holds {
			t.Errorf("%s beats Random: %s (%s)", m.Method, m.BeatsRandom, m.Words)
		}
		if !(m.MeanRank.Lo <= m.MeanRank.Estimate && m.MeanRank.Estimate <= m.MeanRank.Hi) {
			t.Errorf("%s: mean rank %v outside its interval", m.Method, m.MeanRank)
		}
	}
	// Every input ranks them alike (the noise is 1/60 of the offsets): mean ranks 1, 2, 3, 4.
	if strings.Join(order, " ") != "ig gradient smoothgrad random" || a.Methods[0].MeanRank.Estimate != 1 || a.Methods[3].MeanRank.Estimate != 4 {
		t.Errorf("combined ranking %v", a.Methods)
	}
	for _, p := range a.Pairs {
		if p.Verdict != PairBetter {
			t.Errorf("%s, %s: %s", p.A, p.B, p.Words)
		}
	}
	md := Markdown("run", recs, Diagnose(recs), Left{})
	if i, j := strings.Index(md, "## Which method to trust"), strings.Index(md, "## Report card"); i < 0 || j < 0 || i > j {
		t.Errorf("REPORT.md does not open with the answer (at %d, card at %d)", i, j)
	}
}

// A protocol whose perturbed inputs lie off the data is set aside with the
// number and threshold that decided it; with no other, the answer says it
// cannot answer rather than name the winner that protocol ranks first.
func TestTrustCannotAnswerWithOnlyAnInadmissibleProtocol(t *testing.T) {
	v := shifted(map[string]float64{"ig": 0.3, "gradient": 0.2, "random": 0})
	a := answerOf(t, withOOD(scoreRecords(t, "deletion", v), 0.97))
	ad := admissionOf(t, a, "Deletion")
	if ad.Admit != SetAside || ad.Check != "Off the data" || math.Abs(ad.Value-0.97) > 1e-9 || !strings.Contains(ad.Threshold, "0.80") {
		t.Errorf("Deletion: %+v", ad)
	}
	if a.Outcome != NotEvaluated || a.Trusted != "" || !strings.HasPrefix(a.Headline, "Cannot answer") || len(a.Methods) != 0 {
		t.Errorf("outcome %s, trusted %q, %d methods ranked: %s", a.Outcome, a.Trusted, len(a.Methods), a.Headline)
	}
	// A protocol that cannot tell Random from any method is set aside too
	// (the positive control), and so is one where Random ranks first.
	flat := shifted(map[string]float64{"ig": 0, "gradient": 0, "random": 0})
	for name, vals := range map[string]map[string][]float64{"no control": flat, "random first": shifted(map[string]float64{"ig": 0, "gradient": 0.1, "random": 0.3})} {
		a := answerOf(t, withOOD(scoreRecords(t, "deletion", vals), 0.6))
		if ad := admissionOf(t, a, "Deletion"); ad.Admit != SetAside || a.Outcome != NotEvaluated {
			t.Errorf("%s: %s by %s (%s); answer %s", name, ad.Admit, ad.Check, ad.Words, a.Headline)
		}
	}
	// A family that does not judge faithfulness is no part of the answer.
	a = answerOf(t, scoreRecords(t, "complexity", v))
	if ad := admissionOf(t, a, "Complexity"); ad.Admit != NotAsked || a.Outcome != NotEvaluated {
		t.Errorf("Complexity: %s; answer %s", ad.Admit, a.Headline)
	}
}

// Two admitted protocols that tell ig and gradient apart in opposite
// orders: a contradiction, not a winner, with the input on which they
// part the most.
func TestTrustSaysContradictionWithItsEvidence(t *testing.T) {
	del := shifted(map[string]float64{"ig": 0.3, "gradient": 0.2, "random": 0})
	irof := maps.Clone(shifted(map[string]float64{"ig": 0.2, "gradient": 0.3, "random": 0}))
	irof["ig"] = append([]float64(nil), irof["ig"]...)
	irof["ig"][7] -= 0.2 // input 7: IROF's gap the widest
	a := answerOf(t, append(withOOD(scoreRecords(t, "deletion", del), 0.6), scoreRecords(t, "irof", irof)...))
	if a.Outcome != DoesNotHold || a.Trusted != "" || !strings.HasPrefix(a.Headline, "Contradiction") {
		t.Fatalf("outcome %s: %s", a.Outcome, a.Headline)
	}
	var found bool
	for _, p := range a.Pairs {
		if p.Verdict == PairContradiction {
			found = true
			if !strings.Contains(p.Words, "Deletion ranks ig above gradient, IROF the other way") && !strings.Contains(p.Words, "IROF ranks gradient above ig, Deletion the other way") {
				t.Errorf("contradiction in words: %s", p.Words)
			}
		}
	}
	if !found || a.Divergence == nil || a.Divergence.Input != 7 {
		t.Errorf("contradiction found %v, divergence %+v", found, a.Divergence)
	}
	for _, m := range a.Methods {
		if !m.Control && m.BeatsRandom != Holds {
			t.Errorf("%s: %s", m.Method, m.Words)
		}
	}
}

// withChecks gives every record the answer's checks: on the perturbed
// model its own first values, on the randomised one those of perm's
// method (the order the randomised model's maps would put them in).
func withChecks(recs []store.Record, values map[string][]float64, perm map[string]string) []store.Record {
	for _, r := range recs {
		h := r.Result.Units.Names[0]
		units := func(v []float64) protocol.Units {
			u := make([]float32, 32)
			for i := range u {
				u[i] = float32(v[i])
			}
			return protocol.Units{N: 32, Names: []string{h}, Values: [][]float32{u}}
		}
		r.Result.Checks = []protocol.Check{{Model: protocol.CheckPerturbed, Units: units(values[r.Method]), Agree: 1},
			{Model: protocol.CheckRandomised, Units: units(values[perm[r.Method]]), Agree: 0.1}}
	}
	return recs
}

// The answer's checks: a perturbed model that ranks the methods as the
// model does keeps the answer (noise resilience holds); a randomised one
// that reverses them changes it (reactivity holds), one that ranks them
// as before does not (reactivity does not hold); a run without the
// checks' values says so.
func TestTrustChecksResilienceAndReactivity(t *testing.T) {
	v := shifted(map[string]float64{"ig": 0.3, "gradient": 0.2, "random": 0})
	reversed := map[string]string{"ig": "random", "gradient": "gradient", "random": "ig"}
	same := map[string]string{"ig": "ig", "gradient": "gradient", "random": "random"}
	for _, tc := range []struct {
		perm       map[string]string
		reactivity Outcome
	}{{reversed, Holds}, {same, DoesNotHold}} {
		recs := withChecks(append(withOOD(scoreRecords(t, "deletion", v), 0.6), scoreRecords(t, "irof", v)...), v, tc.perm)
		a := answerOf(t, recs)
		if len(a.Checks) != 2 || a.Checks[0].Outcome != Holds || a.Checks[0].Tau != 1 || a.Checks[0].Inputs != 32 || a.Checks[1].Outcome != tc.reactivity {
			t.Errorf("checks %+v", a.Checks)
		}
		if !strings.HasPrefix(a.CheckLine, "Noise resilience holds") || !strings.Contains(a.CheckLine, "reactivity "+string(tc.reactivity)) {
			t.Errorf("check line %q", a.CheckLine)
		}
	}
	a := answerOf(t, append(withOOD(scoreRecords(t, "deletion", v), 0.6), scoreRecords(t, "irof", v)...))
	if len(a.Checks) != 2 || a.Checks[0].Outcome != NotEvaluated || !strings.HasPrefix(a.CheckLine, "Noise resilience not evaluated: no admitted protocol ran it") {
		t.Errorf("a run without the checks: %q", a.CheckLine)
	}
}

// An explained model near chance gets no answer, however well its maps
// are told apart: they explain a model that learned little.
func TestTrustCannotAnswerForAModelNearChance(t *testing.T) {
	v := shifted(map[string]float64{"ig": 0.3, "gradient": 0.2, "random": 0})
	recs := withOOD(scoreRecords(t, "deletion", v), 0.6)
	for _, r := range recs {
		r.Result.Chance, r.Result.Base = 0.1, 0.13
	}
	a := answerOf(t, recs)
	if a.Outcome != NotEvaluated || !strings.HasPrefix(a.Headline, "Cannot answer: the explained model scored 0.130") || len(a.Methods) != 0 {
		t.Errorf("%s: %s", a.Outcome, a.Headline)
	}
}

// A setting that ranks fewer than two methods (ROAR whose retrained
// models learned nothing) is set aside, with the count that decided it,
// rather than admitted and leaving the answer no method to compare.
func TestTrustSetsAsideASettingThatRanksTooFew(t *testing.T) {
	r := Ranking{Methods: []RankedMethod{{Method: "gradient", Weak: true}, {Method: "ig", Weak: true}, {Method: "random", Weak: true}}}
	row := CardRow{Random: Finding{Words: "no method's retrained models learned in this setting (!)"}}
	ad, few := ranksTooFew(Admission{Protocol: "ROAR", Admit: AdmittedCaveat}, r, row)
	if !few || ad.Admit != SetAside || ad.Value != 0 || ad.Words != "it ranks 0 methods here: no method's retrained models learned" {
		t.Errorf("%v %+v", few, ad)
	}
	r.Methods[0].Weak, r.Methods[1].Weak = false, false
	if _, few := ranksTooFew(Admission{Admit: Admitted}, r, row); few {
		t.Error("two methods ranked set aside")
	}
}
