package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"faithlab/core/protocol"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// The answer's two checks (MetaQuantus's, Hedström et al. 2023), from the
// values each admitted setting's tasks keep of their headline on the
// first inputs with the maps of a perturbed and of a randomised copy of
// the model (protocol.Result.Checks, core/job):
//
//   - noise resilience holds where, on the weights perturbed by 1 %, the
//     combined ranking names the same method first and keeps its order
//     (Kendall's τ with the model's own, on the same inputs, above
//     minResilience, 0.5: at most one swap in four methods);
//   - reactivity holds where, on a model with every layer drawn afresh,
//     the combined ranking changes as much (another method first, or τ at
//     most minResilience): an answer that a model which learned nothing
//     leaves much as it was rests on the image as much as on what the
//     model learned.

// minResilience is the Kendall τ the perturbed model's combined ranking
// must exceed against the model's own, and the randomised model's must
// not.
const minResilience = 0.5

// AnswerCheck is one of the answer's checks.
type AnswerCheck struct {
	Model   string   `json:"model"`  // protocol.CheckPerturbed or protocol.CheckRandomised
	Inputs  int      `json:"inputs"` // the first inputs both rankings rest on
	Over    []string `json:"over"`   // the admitted settings whose tasks ran it
	Agree   float64  `json:"agree"`  // the share of them on which the copy predicts the model's class
	Tau     float64  `json:"tau"`    // Kendall's τ between the two combined rankings' mean ranks
	First   string   `json:"first"`  // the first method (not a control) on the model
	Then    string   `json:"then"`   // and on the copy
	Outcome Outcome  `json:"outcome"`
	Words   string   `json:"words"`
}

// answerChecks compares the combined ranking of the admitted settings on
// the model with those on its perturbed and randomised copies.
func (a *Answer) answerChecks(admitted []Ranking, methods []string, c *campaign) {
	for _, kind := range []string{protocol.CheckPerturbed, protocol.CheckRandomised} {
		ac := AnswerCheck{Model: kind, Tau: math.NaN(), Agree: math.NaN()}
		own, copied, agree, n, why := checkRankings(admitted, methods, c, kind)
		if why != "" {
			ac.Outcome, ac.Words = NotEvaluated, map[string]string{protocol.CheckPerturbed: "noise resilience", protocol.CheckRandomised: "reactivity"}[kind]+" not evaluated: "+why
			a.Checks = append(a.Checks, ac)
			continue
		}
		ac.Inputs, ac.Agree = n, agree
		var over []string
		for _, r := range own {
			over = append(over, r.Protocol)
		}
		ac.Over = over
		mo := meanRanks(rankTable(own, methods, n, 1), len(methods))
		mc := meanRanks(rankTable(copied, methods, n, 1), len(methods))
		ac.Tau = stats.KendallTau(mo, mc)
		ac.First, ac.Then = firstOf(methods, mo), firstOf(methods, mc)
		same := ac.First == ac.Then
		switch kind {
		case protocol.CheckPerturbed:
			ac.Outcome = DoesNotHold
			if same && ac.Tau > minResilience {
				ac.Outcome = Holds
			}
			ac.Words = fmt.Sprintf("noise resilience %s: with the weights perturbed by %.0f %% (the same class predicted on %.0f %% of the first %d inputs) the combined ranking over %s %s (τ %s; %s)",
				ac.Outcome, 100*protocol.CheckNoise, 100*agree, n, andList(over), pickWord(ac.Outcome == Holds, "keeps its order", "changes"), Fixed2(ac.Tau), firstWords(ac.First, ac.Then))
		case protocol.CheckRandomised:
			ac.Outcome = DoesNotHold
			if !same || ac.Tau <= minResilience {
				ac.Outcome = Holds
			}
			ac.Words = fmt.Sprintf("reactivity %s: on a model with randomised weights it %s (τ %s; %s)",
				ac.Outcome, pickWord(ac.Outcome == Holds, "changes", "stays much as it was"), Fixed2(ac.Tau), firstWords(ac.First, ac.Then))
		}
		a.Checks = append(a.Checks, ac)
	}
	var line []string
	for _, ac := range a.Checks {
		line = append(line, ac.Words)
	}
	a.CheckLine = capital(strings.Join(line, "; "))
}

func firstWords(first, then string) string {
	if first == then {
		return first + " first in both"
	}
	return fmt.Sprintf("%s first, then %s", first, then)
}

// firstOf is the method (not a control) of the lowest mean rank.
func firstOf(methods []string, ranks []float64) string {
	best := -1
	for m, name := range methods {
		if !isControl(name) && !ignoresModel(name) && !math.IsNaN(ranks[m]) && (best < 0 || ranks[m] < ranks[best]) {
			best = m
		}
	}
	if best < 0 {
		return ""
	}
	return methods[best]
}

// checkRankings are the admitted settings' rankings cut to the inputs a
// check kept, on the model (own) and on its copy (copied): each method's
// values averaged over seeds; why says what is missing where it cannot.
func checkRankings(admitted []Ranking, methods []string, c *campaign, kind string) (own, copied []Ranking, agree float64, n int, why string) {
	n = math.MaxInt
	var agrees []float64
	var kept []Ranking // the settings whose tasks ran the checks
	for _, r := range admitted {
		g := c.groupOf(r.Dataset, r.Protocol)
		if g == nil || slices.ContainsFunc(g.recs, func(rec store.Record) bool { return rec.Result == nil || len(rec.Result.Checks) == 0 }) {
			continue // a retraining or ground-truth protocol, or a run from before the checks
		}
		_, by := c.methodsOf(g.recs)
		o, cp := r, r
		o.Values, cp.Values = map[string][]float64{}, map[string][]float64{}
		for _, m := range methods {
			var per [][]float64
			for _, rec := range by[m] {
				k := slices.IndexFunc(rec.Result.Checks, func(ch protocol.Check) bool { return ch.Model == kind })
				if k < 0 {
					return nil, nil, 0, 0, fmt.Sprintf("%s, %s keeps no %s check", r.Protocol, m, kind)
				}
				ch := rec.Result.Checks[k]
				v := ch.Units.Of(r.Metric)
				if v == nil {
					return nil, nil, 0, 0, fmt.Sprintf("%s, %s: %s", r.Protocol, m, strings.TrimPrefix(ch.Note, "not run: "))
				}
				f := make([]float64, len(v))
				for i, x := range v {
					f[i] = float64(x)
				}
				per = append(per, f)
				agrees = append(agrees, ch.Agree)
			}
			if len(per) == 0 {
				return nil, nil, 0, 0, "no records of " + m
			}
			cp.Values[m] = seedMeans(per)
			n = min(n, len(per[0]), len(r.Values[m]))
		}
		own, copied, kept = append(own, o), append(copied, cp), append(kept, r)
	}
	if len(kept) == 0 {
		return nil, nil, 0, 0, "no admitted protocol ran it (it runs with the faithfulness protocols that evaluate a fixed model, in runs made since it was added)"
	}
	for i, r := range kept {
		for _, m := range methods {
			own[i].Values[m] = r.Values[m][:n]
			copied[i].Values[m] = copied[i].Values[m][:n]
		}
	}
	mean, _ := meanSD(agrees)
	return own, copied, mean, n, ""
}

// MarshalJSON implements json.Marshaler, writing an undefined value as null.
func (c AnswerCheck) MarshalJSON() ([]byte, error) {
	type plain AnswerCheck
	return json.Marshal(struct {
		plain
		Agree *float64 `json:"agree"`
		Tau   *float64 `json:"tau"`
	}{plain(c), stats.Null(c.Agree), stats.Null(c.Tau)})
}
