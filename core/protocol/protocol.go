// Package protocol evaluates attribution maps: the removal protocols (ROAR,
// KAR, ROAD, Eval-X, insertion/deletion, Sensitivity-N, Infidelity), agreement
// with known ground truth, and the diagnostics that expose their biases.
//
// Every protocol describes itself (Info: name, category, the data it
// applies to, its parameters with defaults, and the direction of each
// score), so a form or a spec file can be built from it, and every Result
// carries the protocol's full configuration. Protocols take their inputs
// from an Env, which the caller (the campaign runner, the CLI, a test)
// fills: the model, the data, the maps of the method under evaluation, and
// the training recipe for protocols that retrain.
package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/param"
	"faithlab/core/train"
)

// Better says which direction of a score means a better attribution.
type Better string

// Directions.
const (
	Higher Better = "higher"
	Lower  Better = "lower"
)

// Param is one parameter of a protocol (see package param for the tags
// that describe it).
type Param = param.Param

// Metric is one score a protocol reports.
type Metric struct {
	Name   string `json:"name"`
	Better Better `json:"better"`
	Doc    string `json:"doc"`
}

// Info describes a protocol.
type Info struct {
	Name     string   `json:"name"`
	Category string   `json:"category"` // "retrain", "model" (fixed model) or "ground-truth"
	Data     []string `json:"data"`     // "image", "tabular"
	Doc      string   `json:"doc"`
	Params   []Param  `json:"params"`
	Metrics  []Metric `json:"metrics"`
}

// Protocol is one evaluation protocol. A Protocol value is its
// configuration; the zero value of its fields means the documented default.
type Protocol interface {
	Info() Info
	Run(ctx context.Context, env *Env) (Result, error)
}

// Env is what a protocol evaluates.
type Env struct {
	Net   engine.Network // the trained model the maps explain
	Train *data.Dataset  // training set (retraining protocols)
	Test  *data.Dataset  // evaluation set
	// Method names the attribution method (and its post-processing) whose
	// maps are evaluated; it is recorded in the Result.
	Method string
	// Maps returns one map per sample of the named split ("train" or
	// "test") in the split's order, laid out as FeatureShape says: n×H×W
	// for images, n×D for tabular data. The caller computes or loads them
	// (and caches them: ROAR asks for the training maps once per run).
	Maps func(ctx context.Context, split string) ([]float32, error)
	// Truth, when the problem has one, returns the known ground-truth
	// attribution of each sample of the split for the class its map
	// explains, laid out as Maps (see ClassTruth).
	Truth func(ctx context.Context, split string) ([]float32, error)
	// Recipe trains the retraining protocols' models from scratch.
	Recipe train.Config
	// NewNet returns an untrained network of the evaluated architecture.
	NewNet func() (engine.Network, error)
	// Models, when set, caches trained models: Model(key, build) returns
	// the model stored under key or builds and stores it. Keys name
	// everything that determines the model.
	Models interface {
		Model(ctx context.Context, key string, build func() (engine.Network, error)) (engine.Network, error)
	}
	// Progress, when set, receives the protocol's own progress.
	Progress func(Progress)
	Seed     uint64
}

// Progress is a protocol's progress through its own steps.
type Progress struct {
	Stage       string // e.g. "retrain 30% MoRF"
	Done, Total int
	Train       *train.Progress // set during retraining
}

func (e *Env) report(p Progress) {
	if e.Progress != nil {
		e.Progress(p)
	}
}

// Result is what one protocol run found for one method.
type Result struct {
	Protocol string         `json:"protocol"`
	Method   string         `json:"method"`
	Config   map[string]any `json:"config"`
	Curves   []Curve        `json:"curves,omitempty"`
	Scalars  []Scalar       `json:"scalars"`
	// Samples are a few inputs as the protocol perturbed them, for a
	// person to look at. Results records carry only their names and
	// shapes; whoever stores a Result stores the values apart (the
	// campaign runner: as .npy artefacts under Key).
	Samples []Sample `json:"samples,omitempty"`
}

// Sample is a small batch of perturbed inputs, n×C×H×W as Shape says.
type Sample struct {
	Name   string    `json:"name"` // what was done to them, e.g. "ROAR 30% test"
	Shape  []int     `json:"shape"`
	Values []float32 `json:"-"`
	Key    string    `json:"key,omitempty"` // content address of the stored values
}

// previewCount is how many inputs a Sample keeps.
const previewCount = 8

// preview returns the first previewCount inputs of ds as a Sample.
func preview(name string, ds *data.Dataset) Sample {
	n := min(previewCount, ds.Len())
	return Sample{Name: name, Shape: append([]int{n}, ds.Shape...), Values: slices.Clone(ds.X[:n*ds.Dim()])}
}

// Curve is a score as a function of a removal parameter.
type Curve struct {
	Name   string `json:"name"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"`
	X      Values `json:"x"`
	Y      Values `json:"y"`
}

// Values are a curve's coordinates. JSON has no NaN, so an undefined value
// (Kendall's τ of a constant curve, say) is written as null and read back
// as NaN.
type Values []float64

// MarshalJSON implements json.Marshaler.
func (v Values) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	b := []byte{'['}
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNumber(b, x)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *Values) UnmarshalJSON(b []byte) error {
	var ps []*float64
	if err := json.Unmarshal(b, &ps); err != nil {
		return err
	}
	if ps == nil {
		*v = nil
		return nil
	}
	*v = make(Values, len(ps))
	for i, p := range ps {
		(*v)[i] = math.NaN()
		if p != nil {
			(*v)[i] = *p
		}
	}
	return nil
}

// appendNumber writes x as JSON: null for NaN (±Inf are written as
// ±1.7976931348623157e308, the largest float64, so the file stays valid).
func appendNumber(b []byte, x float64) []byte {
	switch {
	case math.IsNaN(x):
		return append(b, "null"...)
	case math.IsInf(x, 1):
		x = math.MaxFloat64
	case math.IsInf(x, -1):
		x = -math.MaxFloat64
	}
	return strconv.AppendFloat(b, x, 'g', -1, 64)
}

// Scalar is one summary score.
type Scalar struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"` // NaN where undefined, null in JSON
	Better Better  `json:"better,omitempty"`
}

// MarshalJSON implements json.Marshaler, writing an undefined value as null.
func (s Scalar) MarshalJSON() ([]byte, error) {
	type plain Scalar
	v, err := json.Marshal(Values{s.Value})
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		plain
		Value json.RawMessage `json:"value"`
	}{plain(s), v[1 : len(v)-1]})
}

// UnmarshalJSON implements json.Unmarshaler, reading null as NaN.
func (s *Scalar) UnmarshalJSON(b []byte) error {
	type plain Scalar
	var v struct {
		plain
		Value *float64 `json:"value"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Scalar(v.plain)
	s.Value = math.NaN()
	if v.Value != nil {
		s.Value = *v.Value
	}
	return nil
}

// Scalar returns the named scalar of r.
func (r Result) Scalar(name string) (float64, bool) {
	for _, s := range r.Scalars {
		if s.Name == name {
			return s.Value, true
		}
	}
	return 0, false
}

// Params lists the parameters of a protocol value from its exported fields'
// tags, with the value's (defaulted) fields as defaults.
func Params(p any) []Param { return param.Of(p) }

// Configure returns a copy of the protocol with the given parameters set;
// an unknown parameter, a value of the wrong type or out of its range is
// an error naming it.
func Configure(p Protocol, params map[string]any) (Protocol, error) {
	return param.Set(p, p.Info().Name, params)
}

// config is the protocol's parameters as recorded in a Result.
func config(p any) map[string]any { return param.Values(p) }

// All returns every protocol with its defaults, by name.
func All() []Protocol {
	return []Protocol{
		Deletion{}.defaults(), ROAR{}.defaults(), ROAR{Keep: true}.defaults(), ROAD{}.defaults(),
		EvalX{}.defaults(), SensitivityN{}.defaults(), Infidelity{}.defaults(), GroundTruth{}.defaults(),
	}
}

// New returns the named protocol configured with params.
func New(name string, params map[string]any) (Protocol, error) {
	var names []string
	for _, p := range All() {
		names = append(names, p.Info().Name)
		if strings.EqualFold(p.Info().Name, name) {
			return Configure(p, params)
		}
	}
	return nil, fmt.Errorf("unknown protocol %q (%s)", name, strings.Join(names, ", "))
}
