// Package param lets a configurable value — an attribution method, an
// evaluation protocol — describe and check its own parameters through the
// tags of its struct's exported fields:
//
//	Steps int       `json:"steps" doc:"path points" range:"[1,]"`
//	Rates []float64 `json:"rates" doc:"fractions removed" range:"(0,1)"`
//	Rule  string    `json:"rule" doc:"quadrature" choices:"riemann-right|trapezoid"`
//
// json names the parameter (a field without a json name, or named "-", is
// not a parameter); doc says what it does; range bounds a number, or each
// number of a list, as an interval with open "(" ")" or closed "[" "]"
// ends and an empty end for no bound; choices lists the accepted texts;
// required:"true" marks a parameter without a default, whose zero value is
// an error. The values in a list parameter must be distinct. A type with rules the
// tags cannot state (a reference name that must parse, say) implements
// Checker. Of lists the parameters with the value's fields as defaults;
// Set returns a copy with some of them changed, after every check: what a
// form, a spec file and a command line all go through.
package param

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Param is one parameter.
type Param struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"` // Go type: int, float64, bool, string, []float64, []int, uint64
	Default any      `json:"default"`
	Doc     string   `json:"doc"`
	Range   string   `json:"range,omitempty"`   // e.g. "(0,1)", "[1,]"
	Choices []string `json:"choices,omitempty"` // accepted texts ("" always means the default)
	// Required: the value has no default; a zero value is an error.
	Required bool `json:"required,omitempty"`
}

// Error is one parameter's problem. Set, Decode and Check return one per
// problem, joined (errors.Join), so that a caller can place each (a spec
// file: at the parameter's line).
type Error struct {
	Owner string // what the parameters belong to, e.g. "ig"; may be empty
	Param string // the parameter's name; empty for a Checker's error
	Err   error
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	if e.Param != "" {
		msg = e.Param + " " + msg
	}
	if e.Owner != "" {
		msg = e.Owner + ": " + msg
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Split returns the parameter problems joined in err (nil when err holds
// none).
func Split(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		if pe, ok := err.(*Error); ok {
			out = append(out, pe)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return out
}

// Checker is a value with checks the tags cannot state. Check is called on
// the configured value; its error says what is wrong.
type Checker interface {
	Check() error
}

// Of lists the parameters of v (a struct, or a pointer to one), with v's
// field values as defaults, in field order.
func Of(v any) []Param {
	rv := reflect.Indirect(reflect.ValueOf(v))
	t := rv.Type()
	var ps []Param
	for i := range t.NumField() {
		f := t.Field(i)
		name := nameOf(f)
		if name == "" {
			continue
		}
		p := Param{Name: name, Kind: kindOf(f.Type), Default: rv.Field(i).Interface(), Doc: f.Tag.Get("doc"), Range: f.Tag.Get("range")}
		if c := f.Tag.Get("choices"); c != "" {
			p.Choices = strings.Split(c, "|")
		}
		p.Required = f.Tag.Get("required") == "true"
		ps = append(ps, p)
	}
	return ps
}

// kindOf names a type by its kind, so that a named string type (a
// baseline's name, say) reads "string" for a form.
func kindOf(t reflect.Type) string {
	if t.Kind() == reflect.Slice {
		return "[]" + kindOf(t.Elem())
	}
	return t.Kind().String()
}

func nameOf(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if !f.IsExported() || name == "-" {
		return ""
	}
	return name
}

// Values returns v's parameters by name: what a result records.
func Values(v any) map[string]any {
	m := map[string]any{}
	for _, p := range Of(v) {
		m[p.Name] = p.Default
	}
	return m
}

// Set returns a copy of v (a struct value) with the named parameters set
// and checks the result (Check). The error names every unknown parameter
// and every value of the wrong type or out of its range; what names the
// owner in errors ("ig", "ROAR").
func Set[T any](v T, what string, params map[string]any) (T, error) {
	out, err := Decode(v, what, params)
	if err != nil {
		return v, err
	}
	if err := CheckOf(out, what); err != nil {
		return v, err
	}
	return out, nil
}

// Decode is Set without the checks, for an owner whose defaults depend on
// what was set (it fills them in, then calls Check).
func Decode[T any](v T, what string, params map[string]any) (T, error) {
	ps := Of(v)
	known := make([]string, len(ps))
	for i, p := range ps {
		known[i] = p.Name
	}
	var unknown []string
	for k := range params {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		takes := "it takes none"
		if len(known) > 0 {
			takes = "it takes " + strings.Join(known, ", ")
		}
		errs := make([]error, len(unknown))
		for i, k := range unknown {
			errs[i] = &Error{Owner: what, Param: k, Err: fmt.Errorf("does not apply (%s)", takes)}
		}
		return v, errors.Join(errs...)
	}
	if len(params) == 0 {
		return v, nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return v, fmt.Errorf("%s: %w", what, err)
	}
	// Decode into a copy of v, so the defaults stay where params is silent.
	q := reflect.New(reflect.TypeOf(v))
	q.Elem().Set(reflect.ValueOf(v))
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(q.Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return v, &Error{Owner: what, Param: te.Field, Err: fmt.Errorf("is a %s: want %s", te.Value, want(te.Type))}
		}
		return v, &Error{Owner: what, Err: err}
	}
	return q.Elem().Interface().(T), nil
}

func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Uint64, reflect.Uint, reflect.Uint32:
		return "a non-negative integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(want(t.Elem()), "a ")
	}
	return t.String()
}

// Check checks every parameter of v against its tags, then v's own Check,
// and returns every problem found as an *Error, joined.
func Check(v any) error { return CheckOf(v, "") }

// CheckOf is Check with the owner's name in the errors.
func CheckOf(v any, what string) error {
	rv := reflect.Indirect(reflect.ValueOf(v))
	t := rv.Type()
	var errs []error
	for i := range t.NumField() {
		f := t.Field(i)
		name := nameOf(f)
		if name == "" {
			continue
		}
		if f.Tag.Get("required") == "true" && rv.Field(i).IsZero() {
			errs = append(errs, &Error{Owner: what, Param: name, Err: errors.New("is required: it has no default")})
			continue
		}
		if err := checkField(rv.Field(i), f.Tag.Get("range"), f.Tag.Get("choices")); err != nil {
			errs = append(errs, &Error{Owner: what, Param: name, Err: err})
		}
	}
	if c, ok := v.(Checker); ok {
		if err := c.Check(); err != nil {
			errs = append(errs, &Error{Owner: what, Err: err})
		}
	}
	return errors.Join(errs...)
}

func checkField(v reflect.Value, rng, choices string) error {
	switch v.Kind() {
	case reflect.Slice:
		seen := map[any]bool{}
		for j := range v.Len() {
			e := v.Index(j)
			if err := checkField(e, rng, choices); err != nil {
				return fmt.Errorf("[%d] %w", j, err)
			}
			if seen[e.Interface()] {
				return fmt.Errorf("lists %v twice", e.Interface())
			}
			seen[e.Interface()] = true
		}
		return nil
	case reflect.String:
		if s := v.String(); choices != "" && s != "" && !slices.Contains(strings.Split(choices, "|"), s) {
			return fmt.Errorf("%q: want one of %s", s, strings.ReplaceAll(choices, "|", ", "))
		}
		return nil
	}
	x, ok := number(v)
	if !ok {
		return nil
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("%v: want a finite number", x)
	}
	if rng == "" {
		return nil
	}
	in, err := Within(x, rng)
	if err != nil {
		return err
	}
	if !in {
		want := Describe(rng)
		if strings.HasPrefix(want, "(") || strings.HasPrefix(want, "[") {
			want = "a value in " + want
		}
		return fmt.Errorf("%s: want %s", strconv.FormatFloat(x, 'g', -1, 64), want)
	}
	return nil
}

func number(v reflect.Value) (float64, bool) {
	switch v.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return float64(v.Uint()), true
	case reflect.Float64, reflect.Float32:
		return v.Float(), true
	}
	return 0, false
}

// Within reports whether x lies in the interval rng ("(0,1)", "[1,]").
func Within(x float64, rng string) (bool, error) {
	if len(rng) < 3 {
		return false, fmt.Errorf("bad range tag %q", rng)
	}
	lo, hi, ok := strings.Cut(rng[1:len(rng)-1], ",")
	open, close := rng[0], rng[len(rng)-1]
	if !ok || (open != '(' && open != '[') || (close != ')' && close != ']') {
		return false, fmt.Errorf("bad range tag %q", rng)
	}
	if lo = strings.TrimSpace(lo); lo != "" {
		a, err := strconv.ParseFloat(lo, 64)
		if err != nil {
			return false, fmt.Errorf("bad range tag %q", rng)
		}
		if x < a || (open == '(' && x == a) {
			return false, nil
		}
	}
	if hi = strings.TrimSpace(hi); hi != "" {
		b, err := strconv.ParseFloat(hi, 64)
		if err != nil {
			return false, fmt.Errorf("bad range tag %q", rng)
		}
		if x > b || (close == ')' && x == b) {
			return false, nil
		}
	}
	return true, nil
}

// Describe words an interval for a message: "(0, 1)", "≥ 1", "> 0".
func Describe(rng string) string {
	if len(rng) < 3 {
		return rng
	}
	lo, hi, _ := strings.Cut(rng[1:len(rng)-1], ",")
	lo, hi = strings.TrimSpace(lo), strings.TrimSpace(hi)
	switch {
	case hi == "" && rng[0] == '[':
		return "≥ " + lo
	case hi == "" && rng[0] == '(':
		return "> " + lo
	case lo == "" && rng[len(rng)-1] == ']':
		return "≤ " + hi
	case lo == "" && rng[len(rng)-1] == ')':
		return "< " + hi
	}
	return fmt.Sprintf("%c%s, %s%c", rng[0], lo, hi, rng[len(rng)-1])
}
