// Package protocol evaluates attribution maps: the removal protocols (ROAR,
// KAR, ROAD, Eval-X, insertion/deletion, Sensitivity-N, Infidelity), the
// on-manifold protocols that stand on a diffusion prior (GOAR, which shifts
// inputs along their maps, projects them onto the data and retrains; FUD,
// which in-paints the removed features away from the explained class),
// agreement with known ground truth, the metrics of the field researchers
// report from Quantus (faithfulness, randomisation sanity checks,
// complexity, robustness, localisation against the dataset's ground-truth
// masks, axiomatic properties; the seed papers' settings under their own names
// where one is a setting of another), and the diagnostics that expose
// their biases (how far each protocol's perturbed inputs lie from the
// data).
//
// Every protocol describes itself (Info: name, category, family (what its
// score judges of a map: faithfulness, robustness, …), the data it
// applies to, its parameters with defaults, its scores and curves with
// their axes, natural ranges, reference values and directions, and its
// headline score), so a form, a spec file, a figure or a summary table can
// be built from it, and every Result carries the protocol's full
// configuration. Protocols take their inputs
// from an Env, which the caller (the campaign runner, the CLI, a test)
// fills: the model, the data, the maps of the method under evaluation, and
// the training recipe for protocols that retrain.
package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"faithlab/core/data"
	"faithlab/core/diffusion"
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

// Metric is one score a protocol reports: a scalar (Result.Scalars,
// Info.Metrics) or a curve over a parameter (Result.Curves, Info.Curves).
// It says what a figure or a table needs to show it without knowing the
// protocol.
type Metric struct {
	Name string `json:"name"`
	// Better is the direction of a score of the method; empty for a
	// measure of the protocol itself (how far its perturbed inputs lie from
	// the data, the masks' total variation).
	Better Better `json:"better,omitempty"`
	Doc    string `json:"doc"`
	// Headline marks the protocol's one summary score of a method, the
	// one a run's summary table shows.
	Headline bool `json:"headline,omitempty"`
	// Label tells the metric apart from the protocol's others in legends
	// and titles: the removal order of a curve ("MoRF"), or what a scalar
	// that summarises a curve is of it ("AUC", "mean").
	Label string `json:"label,omitempty"`
	// Over is the parameter a curve runs over, its x axis; nil for a
	// scalar.
	Over *Axis `json:"over,omitempty"`
	// Value is the axis of the metric's values.
	Value Axis `json:"value"`
	// Of names the curve a scalar summarises (its mean or area over the
	// curve's parameter): figures show it with that curve.
	Of string `json:"of,omitempty"`
	// Measure names what several protocols report alike ("ood_auroc",
	// "psnr", "ssim"): figures compare a measure across protocols.
	Measure string `json:"measure,omitempty"`
	// Images says the metric is reported for images only (PSNR and SSIM,
	// image-quality measures, are not written for tabular data).
	Images bool `json:"images,omitempty"`
	// MaskTV names the curve of the masks' mean total variation at the
	// same parameters as this accuracy curve: the DPI paper's diagnostic
	// fits this curve against that one.
	MaskTV string `json:"mask_tv,omitempty"`
	// Beside names a boolean parameter of the protocol: figures draw this
	// curve of the settings that differ only in it side by side (GOAR's
	// cumulative misclassification with and without projection, Fig. 8).
	Beside string `json:"beside,omitempty"`
	// BesideLabels say what the two settings are, the parameter off then
	// on ("projected", "not projected"): figures title their panels and
	// key with them, and a setting with the parameter on is named so
	// wherever it appears.
	BesideLabels []string `json:"beside_labels,omitempty"`
}

// Axis describes a metric's values or a curve's parameter.
type Axis struct {
	Title string `json:"title"`
	Unit  string `json:"unit,omitempty"` // e.g. "dB"
	// Range is the values' natural bounds, [lo, hi] (e.g. [0, 1] for an
	// accuracy or a probability); absent when they have none. A figure's
	// axis spans it, widened to any value outside.
	Range []float64 `json:"range,omitempty"`
	Log   bool      `json:"log,omitempty"` // drawn on a log scale
	// Reference is a value worth a line across the figure: chance (0.5
	// for an AUROC), no correlation (0).
	Reference *Reference `json:"reference,omitempty"`
}

// Reference is a value of note on an axis.
type Reference struct {
	Value float64 `json:"value"`
	Label string  `json:"label"` // e.g. "chance"
}

// Family is what a protocol's score judges of a map: Quantus's
// categories of metrics.
type Family string

// Families.
const (
	// FamilyFaithfulness: does the map rank the features as the model uses them
	// (removal, perturbation and their correlations)? A map that ignores
	// the model should score worst.
	FamilyFaithfulness Family = "faithfulness"
	// FamilyGroundTruth: does the map agree with a known ground truth? A map that
	// ignores the model agrees by chance only, so it should score worst.
	FamilyGroundTruth Family = "ground-truth"
	// FamilyRandomisation: does the map change when the model or the class it
	// explains does? A map that ignores the model changes at every draw,
	// so it passes by construction.
	FamilyRandomisation Family = "randomisation"
	// FamilyRobustness: does the map stay put when the input moves a little? A
	// map that ignores the input does not move, so it passes by
	// construction.
	FamilyRobustness Family = "robustness"
	// FamilyComplexity: how concentrated is the map? It says nothing of the
	// model, so a map that ignores it is neither better nor worse.
	FamilyComplexity Family = "complexity"
	// FamilyLocalisation: does the map's relevance lie where the evidence
	// does (a ground-truth mask per input, or the target's quadrants of a
	// mosaic)? Quantus keeps it apart from ground-truth agreement: it
	// compares a map with a region, not with a known attribution. A map
	// that ignores the model lands on the region by chance only, so it
	// should score worst.
	FamilyLocalisation Family = "localisation"
	// FamilyAxiomatic: does the map keep a property every faithful map
	// has (its sum is the output's change, it is zero where the model
	// does not look, it does not move when a shift the model absorbs
	// moves the input)? A map that ignores the input keeps the last by
	// construction, so a random control need not score worst.
	FamilyAxiomatic Family = "axiomatic"
)

// ControlScoresWorst reports whether a map that ignores the model (a
// random control) should score worst on the family's scores: only then
// does a control scoring as well as a method say that the protocol fails
// to tell a map from chance.
func (f Family) ControlScoresWorst() bool {
	return f == FamilyFaithfulness || f == FamilyGroundTruth || f == FamilyLocalisation
}

// Info describes a protocol.
type Info struct {
	Name     string   `json:"name"`
	Category string   `json:"category"` // "retrain", "model" (fixed model) or "ground-truth"
	Family   Family   `json:"family"`   // what its score judges of a map
	Data     []string `json:"data"`     // "image", "tabular"
	// Masks says the protocol reads the dataset's ground-truth masks
	// (Env.Masks): it cannot run on a dataset that carries none.
	Masks   bool     `json:"masks,omitempty"`
	Doc     string   `json:"doc"`
	Params  []Param  `json:"params"`
	Metrics []Metric `json:"metrics"`          // the scalar scores (Result.Scalars)
	Curves  []Metric `json:"curves,omitempty"` // the curves (Result.Curves)
}

// with files the metrics under info's Curves (those with Over) or Metrics.
func (info Info) with(ms []Metric) Info {
	for _, m := range ms {
		if m.Over != nil {
			info.Curves = append(info.Curves, m)
		} else {
			info.Metrics = append(info.Metrics, m)
		}
	}
	return info
}

// Curve returns the curve of the given name (a curve and the scalar that
// summarises it may share a name).
func (info Info) Curve(name string) (Metric, bool) { return find(info.Curves, name) }

// Scalar returns the scalar metric of the given name.
func (info Info) Scalar(name string) (Metric, bool) { return find(info.Metrics, name) }

func find(ms []Metric, name string) (Metric, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// For is info worded for data of the given kind (data.Kind: "image",
// "tabular"): a table's columns are features, so the axes that count
// pixels removed count features on tabular data. Any other kind, or "",
// leaves info as it is. The metrics are copied; info is left alone.
func (info Info) For(kind string) Info {
	if kind != "tabular" {
		return info
	}
	reword := func(ms []Metric) []Metric {
		ms = slices.Clone(ms)
		for i := range ms {
			m := &ms[i]
			m.Value.Title = pixelWord.ReplaceAllString(m.Value.Title, "feature$1")
			m.Doc = pixelWord.ReplaceAllString(m.Doc, "feature$1")
			if m.Over != nil {
				over := *m.Over
				over.Title = pixelWord.ReplaceAllString(over.Title, "feature$1")
				m.Over = &over
			}
		}
		return ms
	}
	info.Metrics, info.Curves = reword(info.Metrics), reword(info.Curves)
	return info
}

// pixelWord is "pixel" or "pixels" as a word of its own ("superpixels"
// is not one).
var pixelWord = regexp.MustCompile(`\bpixel(s?)\b`)

// Headline is the protocol's headline score, if it has one.
func (info Info) Headline() (Metric, bool) {
	for _, m := range info.Metrics {
		if m.Headline {
			return m, true
		}
	}
	return Metric{}, false
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
	// Explain, when set, computes the evaluated method's maps, laid out as
	// Maps, of the n inputs x (the test set's shape) on net — the model
	// or a copy of it with layers randomised — for the given classes: what
	// the randomisation sanity checks recompute. It must compute them as
	// Maps did, for the same inputs and classes the same maps.
	Explain func(ctx context.Context, net engine.Network, x []float32, n int, target []int) ([]float32, error)
	// Truth, when the problem has one, returns the known ground-truth
	// attribution of each sample of the split for the class its map
	// explains, laid out as Maps (see ClassTruth).
	Truth func(ctx context.Context, split string) ([]float32, error)
	// Masks, when the dataset carries them (data.Dataset.Masks), returns
	// each sample's ground-truth mask of the split, n×H×W, 1 where the
	// evidence lies: what the localisation metrics read.
	Masks func(ctx context.Context, split string) ([]float32, error)
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
	// Prior, when set, opens the diffusion prior of a file (GOAR, FUD): the
	// path a protocol's prior parameter names, or "" for the prior shipped
	// for the evaluated dataset. It returns the prior and a key naming its
	// content (the caches of what the prior makes are keyed by it).
	Prior func(ctx context.Context, path string) (diffusion.Prior, string, error)
	// Artefacts, when set, caches what a protocol makes and may need again
	// (GOAR's projected data sets): Artefact(key, ext, build) returns the
	// bytes stored under key or builds and stores them. Keys name what
	// determines the bytes.
	Artefacts interface {
		Artefact(ctx context.Context, key, ext string, build func() ([]byte, error)) ([]byte, error)
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
	// Chance is the test accuracy of always answering the test set's most
	// common class: the floor a retrained model's accuracy is read against
	// (set by the campaign runner; 0 where unknown).
	Chance float64 `json:"chance,omitempty"`
	// Data is the kind of the inputs evaluated (data.Kind: "image",
	// "tabular"), for the words figures use (Info.For); set by the
	// campaign runner, "" where unknown (runs from before it was kept).
	Data string `json:"data,omitempty"`
	// Base is the explained model's accuracy on the same test set: what
	// a model retrained on unperturbed inputs should come near, and what
	// tells a model that learned little (set by the campaign runner; 0
	// where unknown).
	Base float64 `json:"base,omitempty"`
	// Units are the per-input values of the scalars that are means over
	// the test inputs evaluated (see Units); results from before they
	// were kept have none.
	Units Units `json:"units,omitzero"`
	// Checks are the headline's per-input values on the first inputs with
	// maps of a perturbed and of a randomised copy of the model: what the
	// answer's noise-resilience and reactivity checks compare (set by the
	// campaign runner, core/job).
	Checks []Check `json:"checks,omitempty"`
}

// Check is the headline score of one of the answer's checks.
type Check struct {
	Model string  `json:"model"`           // CheckPerturbed or CheckRandomised
	Units Units   `json:"units,omitzero"`  // the headline's values on the first Units.N test inputs
	Agree float64 `json:"agree,omitempty"` // the share of those inputs on which the copy predicts what the model does
	Note  string  `json:"note,omitempty"`  // why it has no values
}

// CheckNoise is the relative noise of the perturbed model's weights: each
// weight times (1 + ε), ε ~ N(0, CheckNoise²).
const CheckNoise = 0.01

// The models of the answer's checks.
const (
	CheckPerturbed  = "perturbed"
	CheckRandomised = "randomised"
)

// ShapeChecker is a protocol whose parameters depend on the samples'
// shape (a subset size below their number of features, say): CheckShape
// says why it cannot run on samples of that shape (C, H, W), if it cannot.
type ShapeChecker interface {
	CheckShape(shape []int) error
}

// Applies says why p cannot evaluate maps of samples of the given shape,
// if it cannot: the kind of data it takes (Info.Data: image or tabular),
// then its own parameters against the shape (ShapeChecker). A campaign
// asks before any work, so that a mismatch is one clear error rather than
// every task failing.
func Applies(p Protocol, shape []int) error {
	info := p.Info()
	if kind := data.Kind(shape); !slices.Contains(info.Data, kind) {
		what := fmt.Sprintf("images of %v", shape)
		if kind == "tabular" {
			what = fmt.Sprintf("tables of %d features", shape[0])
		}
		return fmt.Errorf("%s takes %s data, not %s", info.Name, strings.Join(info.Data, " or "), what)
	}
	if c, ok := p.(ShapeChecker); ok {
		return c.CheckShape(shape)
	}
	return nil
}

// AppliesTo is Applies on the samples of ds, and also says that a
// protocol that reads ground-truth masks (Info.Masks) cannot run on a
// dataset that carries none, nor one that needs labels (NeedsLabels) on
// unlabelled samples.
func AppliesTo(p Protocol, ds *data.Dataset) error {
	if err := Applies(p, ds.Shape); err != nil {
		return err
	}
	if ds.Unlabelled {
		if err := unlabelled(p); err != nil {
			return err
		}
	}
	if info := p.Info(); info.Masks && ds.Masks == nil {
		return fmt.Errorf("%s %s", info.Name, noMasks)
	}
	return nil
}

// Chance is the share of ds's most common class: the accuracy of a model
// that has learned nothing but the class frequencies.
func Chance(ds *data.Dataset) float64 {
	if ds == nil || ds.Len() == 0 {
		return 0
	}
	return float64(slices.Max(ds.ClassCounts())) / float64(ds.Len())
}

// Sample is a small batch of inputs, n×C×H×W as Shape says: perturbed
// by the protocol, or (Kind) the same inputs untouched and their maps.
type Sample struct {
	Name   string    `json:"name"` // what was done to them, e.g. "ROAR 30% test"
	Kind   string    `json:"kind,omitempty"`
	Shape  []int     `json:"shape"`
	Values []float32 `json:"-"`
	Key    string    `json:"key,omitempty"` // content address of the stored values
	// Predicted is, for images as the protocol perturbed them (or left
	// them), the class the evaluated model predicts for each: set by the
	// campaign runner, shown under each image of the answer's evidence.
	Predicted []string `json:"predicted,omitempty"`
}

// Kinds of Sample.
const (
	Perturbed      = ""         // the inputs as the protocol perturbed them
	Original       = "original" // the same inputs untouched
	AttributionMap = "map"      // their maps, n×1×H×W (n×1×1×D for tabular rows)
)

// PreviewCount is how many inputs a Sample keeps: the first of the test
// set.
const PreviewCount = 8

// preview returns the first PreviewCount inputs of ds as a Sample.
func preview(name string, ds *data.Dataset) Sample {
	n := min(PreviewCount, ds.Len())
	return Sample{Name: name, Shape: append([]int{n}, ds.Shape...), Values: slices.Clone(ds.X[:n*ds.Dim()])}
}

// inputs are the Samples a person compares the perturbed ones with: the
// first test inputs untouched and their maps (of which there are n, laid
// out as FeatureShape's shape says).
func inputs(test *data.Dataset, maps []float32, n int, shape []int) []Sample {
	k := min(PreviewCount, n, test.Len())
	hw := shape[1] * shape[2]
	return []Sample{
		{Name: "original test", Kind: Original, Shape: append([]int{k}, test.Shape...), Values: slices.Clone(test.X[:k*test.Dim()])},
		{Name: "map test", Kind: AttributionMap, Shape: []int{k, 1, shape[1], shape[2]}, Values: slices.Clone(maps[:k*hw])},
	}
}

// Curve is a score as a function of a removal parameter.
type Curve struct {
	Name   string `json:"name"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"`
	X      Values `json:"x"`
	Y      Values `json:"y"`
	// SD is, where each point is a mean over the N evaluated test inputs,
	// the inputs' sample standard deviation at each point: what a band of
	// the curve's uncertainty needs (nil for curves that are not means
	// over inputs, such as an AUROC).
	SD Values `json:"sd,omitempty"`
	N  int    `json:"n,omitempty"`
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
		GOAR{}.defaults(), FUD{}.defaults(),
		// The metrics of the field (Quantus's families), issue 23.
		PixelFlipping(), RegionPerturbation(), Selectivity(), FaithfulnessCorrelation(),
		FaithfulnessEstimate{}.defaults(), Monotonicity{}.defaults(), MonotonicityCorrelation{}.defaults(),
		Sufficiency{}.defaults(), IROF{}.defaults(), MPRT{}.defaults(), SmoothMPRT(), EfficientMPRT(), RandomLogit{}.defaults(), DataRandomisation{}.defaults(),
		Complexity{}.defaults(), MaxSensitivity(), AvgSensitivity(), LocalLipschitzEstimate(),
		// Quantus's localisation and axiomatic families, issue 50.
		PointingGame{}.defaults(), AttributionLocalisation{}.defaults(), TopKIntersection{}.defaults(),
		RelevanceMassAccuracy{}.defaults(), RelevanceRankAccuracy{}.defaults(), LocalisationAUC{}.defaults(), Focus{}.defaults(),
		Completeness{}.defaults(), NonSensitivity{}.defaults(), InputInvariance{}.defaults(),
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
