package reproduce

import (
	"strings"
	"testing"
)

// Every claim's rule, applied to the paper's own printed numbers (its
// PaperValues, taken as exact), finds that the claim holds: a rule the
// paper's own data fails is stricter than the paper. A claim whose paper
// prints no numbers says why.
func TestEveryRuleHoldsOnThePapersOwnNumbers(t *testing.T) {
	all, err := List()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range all {
		for _, c := range r.Claims {
			pv := c.PaperValues
			switch {
			case pv == nil:
				t.Errorf("%s %s: no paper_values (the paper's numbers, or none: why)", r.Name, c.ID)
				continue
			case pv.None != "":
				if len(pv.Parts)+len(pv.Scores)+len(pv.X)+len(pv.Rankings) > 0 {
					t.Errorf("%s %s: paper_values both none and numbers", r.Name, c.ID)
				}
				continue
			}
			parts, err := paperParts(c.Check, *pv)
			if err != nil {
				t.Errorf("%s %s: %v", r.Name, c.ID, err)
				continue
			}
			checked++
			if o, words := c.Check.ruleOf().decide(parts); o != Holds {
				t.Errorf("%s %s: the rule finds %s on the paper's own numbers (%d parts): %s", r.Name, c.ID, o, len(parts), words)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d claims carry the paper's numbers", checked)
	}
	t.Logf("%d claims checked against the paper's own numbers", checked)
}

// The rules say "does not hold" only where the evidence excludes a claim:
// a run too small to tell is inconclusive, for every kind of rule.
func TestARunTooSmallToTellIsInconclusive(t *testing.T) {
	wide := part{name: "p", est: 0.1, lo: -0.5, hi: 0.7}
	for _, tc := range []struct {
		name string
		r    rule
		p    part
	}{
		{"directional", rule{}, wide},
		{"tested, not told apart", rule{}, part{name: "p", est: 0.1, lo: -0.5, hi: 0.7, tested: true}},
		{"equivalence", rule{equiv: true, margin: 0.2}, wide},
		{"a share above one half", rule{bound: 0.5}, sharePart("post", 4, 6)},
		{"R² reaching 0.5", rule{bound: 0.5}, part{name: "rate", est: 0.52, lo: 0.17, hi: 1}},
		{"most", rule{combine: "most", quorum: 5.0 / 6}, wide},
		{"any", rule{combine: "any"}, part{name: "a and b", tested: true}},
	} {
		if o, _ := tc.r.decide([]part{tc.p, tc.p}); o != Inconclusive {
			t.Errorf("%s: %s, want inconclusive", tc.name, o)
		}
	}
	// And it says what would decide it: a standard error of 0.06/3.92, so
	// 2.80 of them (0.043) found with 80 % power; 20·(0.043/0.02)² inputs.
	p := part{name: "A − B", est: 0.02, lo: -0.01, hi: 0.05, n: 20, unit: "input"}
	p.iv.Lo, p.iv.Hi = p.lo, p.hi
	_, words := rule{}.decide([]part{p})
	if !strings.Contains(words, "this run could have found a difference of") || !strings.Contains(words, "about 92 inputs would decide it") {
		t.Errorf("what would decide it: %q", words)
	}
}
