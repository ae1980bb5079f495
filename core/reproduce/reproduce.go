// Package reproduce runs a seed paper's central experiment and says, claim
// by claim, whether Faithlab gets the paper's result. A reproduction is a
// file in papers/ (embedded): the paper, its claims — each quoted with
// its table or figure, the paper's numbers transcribed beside it, and the
// check that decides it on our results — and a campaign spec per size
// (smoke: seconds, for the tests; quick: minutes on 2 cores; paper: the
// paper's scale where this machine has the data), each saying how it is
// scaled down.
//
// Run writes the size's spec into the report folder, runs it there with
// the campaign runner (so a killed reproduction resumes: run the same
// command again), and writes the folder's REPORT.md beside the run's
// tidy CSV and figures. A verdict is one of holds, holds in part, does not
// hold — or not evaluated, where the run has no results for the claim —
// decided by the rule its check states (see Check), with the interval
// behind it: the run's bootstrap intervals and paired tests (package
// report), or an interval of the check's own statistic under the same
// seeded bootstrap. The rules are fixed before the run; nothing here is
// tuned to match a paper.
package reproduce

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed papers/*.yaml
var papers embed.FS

// Sizes are the sizes every reproduction offers, smallest first.
var Sizes = []string{"smoke", "quick", "paper"}

// Reproduction is one paper's central experiment and claims.
type Reproduction struct {
	Name  string `yaml:"name"`
	Title string `yaml:"title"`
	Paper string `yaml:"paper"` // authors, title, venue
	// Data names what the paper ran on that this experiment does not, and
	// how to run it there.
	Data string `yaml:"data"`
	// Alternatives are the paper's datasets a user may supply, by the name
	// `reproduce --data NAME=PATH` gives them.
	Alternatives map[string]Alternative `yaml:"alternatives"`
	Sizes        map[string]Size        `yaml:"sizes"`
	Claims       []Claim                `yaml:"claims"`
}

// Size is one scale of a reproduction's campaign.
type Size struct {
	Scaled string `yaml:"scaled"` // how the run differs from the paper's
	Spec   string `yaml:"spec"`   // the campaign spec, with output: run
}

// Claim is one claim of the paper and how it is checked.
type Claim struct {
	ID     string   `yaml:"id"`
	Quote  string   `yaml:"quote"`  // the paper's words, verbatim
	Source string   `yaml:"source"` // table or figure, section, page
	Paper  []Number `yaml:"paper"`  // the paper's numbers, transcribed
	Check  Check    `yaml:"check"`
	// Variants are the paper's own protocol variants: the parameters its
	// settings had (ROAD retrained, say), and where the paper says so. A
	// run whose setting lacks them tested something else: its verdict is
	// not evaluated (variant differs), never "does not hold".
	Variants []Variant `yaml:"variants"`
	// Extension, where set, says why the claim is ours and not the
	// paper's — the paper's words asked of a setting it did not run them
	// on. Its verdict is reported apart from the paper's claims and left
	// out of their count.
	Extension string `yaml:"extension"`
	// PaperValues are the paper's own printed numbers in the terms of the
	// claim's check, so that a test can apply the claim's rule to them:
	// a rule that the paper's own data fails is stricter than the paper.
	PaperValues *PaperValues `yaml:"paper_values"`
}

// PaperValues are a claim's numbers as the paper prints them (table cells,
// numbers in the text, values read off a figure), in the check's terms:
//
//   - versus, across, scores (expect above, below or near): Parts, each a
//     pair the paper prints — A's cell and B's cell, in the paper's units
//     (Scale: the paper's units per ours; Better: whether the paper's
//     score is better higher or lower);
//   - versus flat: Scores, every method's cell;
//   - order: X (the parameter) and Y (the setting's score at each);
//   - post: Parts with K of N comparisons (the DPI paper's 74/81);
//   - tv: Parts with Value, an R²;
//   - truth: Parts with A (the setting's r) and B (another benchmark's r)
//     for each measure; expect low: Value, the setting's r for each;
//   - reorders: Rankings, two columns of scores by method, keyed by the
//     two settings' protocols, with their Directions.
//
// None says why a claim has no such numbers (a figure without values, a
// qualitative sentence) instead.
type PaperValues struct {
	Source   string                        `yaml:"source"` // where they are printed, if not the claim's source
	N        int                           `yaml:"n"`      // inputs or runs behind each number, where the paper says
	Better   string                        `yaml:"better"` // higher (default) or lower: the paper's score's direction
	Scale    float64                       `yaml:"scale"`  // the paper's units per ours (a TRACE AUC of 50 is our 1): 0 for 1
	Parts    []PaperPart                   `yaml:"parts"`
	Scores   map[string]float64            `yaml:"scores"`
	X        []float64                     `yaml:"x"`
	Y        []float64                     `yaml:"y"`
	Rankings map[string]map[string]float64 `yaml:"rankings"`
	// Directions are each ranking's direction (reorders: FUD is better
	// higher, Deletion lower).
	Directions map[string]string `yaml:"directions"`
	None       string            `yaml:"none"`
}

// PaperPart is one of a claim's parts as the paper prints it.
type PaperPart struct {
	Name  string   `yaml:"name"`
	A     *float64 `yaml:"a"`
	B     *float64 `yaml:"b"`
	Value *float64 `yaml:"value"`
	K     int      `yaml:"k"`
	N     int      `yaml:"n"`
}

// Variant is the protocol variant a paper ran for a claim.
type Variant struct {
	Params map[string]any `yaml:"params"` // what the setting's configuration must hold
	Why    string         `yaml:"why"`    // the paper's words or section for it
	// Setting is the setting the variant is of, where not the claim's
	// own (one of its others: {protocol: infidelity}).
	Setting map[string]any `yaml:"setting"`
}

// Number is one of the paper's numbers with what stands beside it from
// our run: the check's own figure named Key, a curve's value (Method,
// Curve, At) or a score (Method, Metric) in the claim's setting or in
// Setting, the last times Scale where the paper counts in other units
// (shown beside ours, never in its place). What names what both columns
// hold: a paper's number for one method stands beside ours for that
// method, not beside a figure over all of them.
type Number struct {
	What    string         `yaml:"what"`
	Value   string         `yaml:"value"`   // as the paper prints it
	Key     string         `yaml:"key"`     // a figure the check computes (Verdict.Ours)
	Method  string         `yaml:"method"`  // or: this method's …
	Curve   string         `yaml:"curve"`   // … curve …
	At      float64        `yaml:"at"`      // … at this x
	Metric  string         `yaml:"metric"`  // … or score,
	Setting map[string]any `yaml:"setting"` // … in this setting (default: the claim's),
	Scale   float64        `yaml:"scale"`   // … also shown times this
}

// List returns every reproduction, by name.
func List() ([]*Reproduction, error) {
	names, err := fs.Glob(papers, "papers/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*Reproduction
	for _, n := range names {
		r, err := load(n)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *Reproduction) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Get returns the named reproduction.
func Get(name string) (*Reproduction, error) {
	all, err := List()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range all {
		if r.Name == name {
			return r, nil
		}
		names = append(names, r.Name)
	}
	return nil, fmt.Errorf("no reproduction %q: there are %s", name, strings.Join(names, ", "))
}

// load reads and checks one embedded reproduction file.
func load(path string) (*Reproduction, error) {
	b, err := papers.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Reproduction
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Name == "" || r.Title == "" || r.Paper == "" || len(r.Claims) == 0 {
		return nil, fmt.Errorf("%s: a reproduction needs name, title, paper and claims", path)
	}
	for _, s := range Sizes {
		sz, ok := r.Sizes[s]
		if !ok || sz.Spec == "" || sz.Scaled == "" {
			return nil, fmt.Errorf("%s: size %s needs scaled and spec", path, s)
		}
	}
	for k := range r.Sizes {
		if !slices.Contains(Sizes, k) {
			return nil, fmt.Errorf("%s: unknown size %q (%s)", path, k, strings.Join(Sizes, ", "))
		}
	}
	for i, c := range r.Claims {
		if c.ID == "" || c.Quote == "" || c.Source == "" {
			return nil, fmt.Errorf("%s: claims[%d] needs id, quote and source", path, i)
		}
		if err := c.Check.validate(); err != nil {
			return nil, fmt.Errorf("%s: claim %s: %w", path, c.ID, err)
		}
		for _, v := range c.Variants {
			if _, ok := v.Setting["protocol"]; (v.Setting != nil && !ok) || len(v.Params) == 0 || v.Why == "" {
				return nil, fmt.Errorf("%s: claim %s: a variant needs params and why (and its setting a protocol)", path, c.ID)
			}
		}
	}
	return &r, nil
}
