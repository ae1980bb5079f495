package param

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

type demo struct {
	Steps  int       `json:"steps" doc:"path points" range:"[1,]"`
	Rates  []float64 `json:"rates" doc:"fractions" range:"(0,1)"`
	Rule   string    `json:"rule" doc:"quadrature" choices:"riemann-right|trapezoid"`
	Noise  float64   `json:"noise" range:"[0,]"`
	Hidden int       `json:"-"`
	Chunk  int
	Ref    string `json:"reference"`
}

func (d demo) Check() error {
	if d.Ref == "nonsense" {
		return errors.New(`reference "nonsense": unknown`)
	}
	return nil
}

func TestOfListsTaggedFieldsWithDefaults(t *testing.T) {
	ps := Of(demo{Steps: 25, Rates: []float64{0.5}})
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if want := []string{"steps", "rates", "rule", "noise", "reference"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
	if ps[0].Default != 25 || ps[0].Range != "[1,]" || ps[0].Doc != "path points" || ps[0].Kind != "int" {
		t.Errorf("steps = %+v", ps[0])
	}
	if !reflect.DeepEqual(ps[2].Choices, []string{"riemann-right", "trapezoid"}) {
		t.Errorf("rule choices %v", ps[2].Choices)
	}
}

func TestSetKeepsDefaultsAndChecksEveryRule(t *testing.T) {
	base := demo{Steps: 25, Rates: []float64{0.1}, Hidden: 7}
	got, err := Set(base, "demo", map[string]any{"noise": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if got.Steps != 25 || got.Noise != 0.5 || got.Hidden != 7 || base.Noise != 0 {
		t.Fatalf("Set gave %+v from %+v", got, base)
	}
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"steps": 0}, "steps 0: want ≥ 1"},
		{map[string]any{"steps": -3}, "steps -3"},
		{map[string]any{"steps": 2.5}, "ig: steps is a number 2.5: want an integer"},
		{map[string]any{"rates": []any{0.5, 1.5}}, "rates [1] 1.5: want a value in (0, 1)"},
		{map[string]any{"rates": []any{0.0}}, "rates [0] 0: want a value in (0, 1)"},
		{map[string]any{"rates": []any{0.3, 0.3}}, "rates lists 0.3 twice"},
		{map[string]any{"rule": "simpson"}, `rule "simpson": want one of riemann-right, trapezoid`},
		{map[string]any{"reference": "nonsense"}, `reference "nonsense": unknown`},
		{map[string]any{"grid": 4, "chunk": 3}, "chunk does not apply (it takes steps, rates, rule, noise, reference)"},
	} {
		_, err := Set(base, "ig", c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "ig: ") {
			t.Errorf("Set(%v) = %v, want an error with %q", c.params, err, c.want)
		}
	}
}

func TestCheckReportsAllProblems(t *testing.T) {
	err := Check(demo{Steps: 0, Noise: -1, Rule: "x"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"steps 0", "noise -1: want ≥ 0", `rule "x"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v lacks %q", err, want)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		x    float64
		rng  string
		want bool
	}{
		{0, "(0,1)", false}, {1, "(0,1)", false}, {0.5, "(0,1)", true},
		{0, "[0,1]", true}, {1, "[0,1]", true}, {1, "[1,]", true}, {0.99, "[1,]", false},
		{1e9, "[1,]", true}, {-5, "(,0)", true}, {0, "(,0)", false},
	} {
		if got, err := Within(c.x, c.rng); err != nil || got != c.want {
			t.Errorf("Within(%g, %s) = %v, %v", c.x, c.rng, got, err)
		}
	}
	if _, err := Within(1, "0,1"); err == nil {
		t.Error("a malformed range tag passed")
	}
}
