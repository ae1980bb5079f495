package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Two protocols can each call an order of two methods real and the orders
// be opposite: Deletion ranks IG above Gradient, ROAD Gradient above IG,
// each told apart by its own paired test. Kendall's τ and W (Agreement)
// summarise whole rankings, need three methods or more and hide such a
// pair among the others; a Contradiction names it, for any number of
// methods, so that the report card, the summary and REPORT.md say it.

// Contradiction is two protocol settings on one dataset that order two
// methods oppositely, each order told apart by its own setting's paired
// test (Holm-corrected, Alpha): First ranks A above B, Second B above A.
type Contradiction struct {
	Dataset  string `json:"dataset"`
	First    string `json:"first"`     // the setting that ranks A above B
	Second   string `json:"second"`    // the setting that ranks B above A
	A        string `json:"a"`         //
	B        string `json:"b"`         //
	InFirst  Pair   `json:"in_first"`  // A − B under First
	InSecond Pair   `json:"in_second"` // B − A under Second
	Words    string `json:"words"`
}

// contradictions finds, on each dataset, every two settings and every two
// methods they both rank whose orders flip, each order told apart.
func contradictions(rankings []Ranking) []Contradiction {
	var out []Contradiction
	for i, first := range rankings {
		for _, second := range rankings[i+1:] {
			if second.Dataset != first.Dataset {
				continue
			}
			for _, p := range first.Pairs {
				if !p.Differ {
					continue
				}
				k := slices.IndexFunc(second.Pairs, func(q Pair) bool { return q.A == p.B && q.B == p.A && q.Differ })
				if k < 0 {
					continue
				}
				c := Contradiction{Dataset: first.Dataset, First: first.Protocol, Second: second.Protocol, A: p.A, B: p.B, InFirst: p, InSecond: second.Pairs[k]}
				c.Words = fmt.Sprintf("%s and %s order %s and %s oppositely, each order told apart by its own paired test: %s ranks %s above %s (%s), %s ranks %s above %s (%s)",
					c.First, c.Second, c.A, c.B, c.First, c.A, c.B, scoresOf(first, c.A, c.B), c.Second, c.B, c.A, scoresOf(second, c.B, c.A))
				out = append(out, c)
			}
		}
	}
	return out
}

// scoresOf words two methods' scores under a setting, the first named
// first, with the interval of their difference: "0.534 against 0.241,
// difference [0.27, 0.32]".
func scoresOf(r Ranking, a, b string) string {
	est := func(m string) float64 {
		if k := slices.IndexFunc(r.Methods, func(x RankedMethod) bool { return x.Method == m }); k >= 0 {
			return r.Methods[k].CI.Estimate
		}
		return math.NaN()
	}
	s := fmt.Sprintf("%s %s against %s", r.Metric, number(est(a)), number(est(b)))
	if p, ok := pairOf(r, a, b); ok && !math.IsNaN(p.Diff.Lo) {
		lo, hi := p.Diff.Lo, p.Diff.Hi
		if p.A != a { // the pair holds b − a
			lo, hi = -hi, -lo
		}
		s += fmt.Sprintf(", difference [%s, %s]", number(lo), number(hi))
	}
	return strings.TrimPrefix(s, " ")
}

// contradictionFinding is the report card's line on the other settings of
// the dataset that order two of this setting's methods the other way.
func contradictionFinding(conf Confidence, r Ranking) Finding {
	others := 0
	for _, o := range conf.Rankings {
		if o.Dataset == r.Dataset && o.Protocol != r.Protocol && len(o.rankedOnly().Methods) >= 2 {
			others++
		}
	}
	if others == 0 {
		return Finding{Value: math.NaN(), Words: "not measured (no other protocol ranks two of these methods on this dataset)"}
	}
	var words, short []string
	for _, c := range conf.Contradictions {
		if c.Dataset != r.Dataset || c.First != r.Protocol && c.Second != r.Protocol {
			continue
		}
		other, above, below := c.Second, c.A, c.B
		if c.Second == r.Protocol {
			other, above, below = c.First, c.B, c.A
		}
		words = append(words, fmt.Sprintf("%s ranks %s above %s, which this setting ranks the other way; each order is told apart by its own paired test", other, below, above))
		short = append(short, fmt.Sprintf("%s orders %s and %s the other way", other, above, below))
	}
	if len(words) == 0 {
		return Finding{Value: 0, Words: fmt.Sprintf("no other protocol (%d compared) orders two of these methods the other way beyond their intervals", others)}
	}
	return Finding{Value: float64(len(words)), Words: strings.Join(words, "; ") + ": the protocols measure different things, and at most one of the opposite orders answers the question asked",
		Flag: true, Short: strings.Join(short, "; ") + ", each told apart"}
}
