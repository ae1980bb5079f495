// Package spec reads campaign specs: the YAML file that says what a
// campaign evaluates (datasets, the model, attribution methods with their
// parameters, post-processings, protocols with theirs, seeds) and where its
// results go. The GUI writes it, the CLI reads it, and Parse checks all of
// it before any work starts, reporting every problem with its line and
// column, not just the first.
package spec

import (
	"fmt"
	"strings"

	"faithlab/core/attr"
	"faithlab/core/attr/methods"
	"faithlab/core/data"
	"faithlab/core/protocol"
)

// Spec is one campaign.
type Spec struct {
	Name      string
	Output    string // run folder (absolute, or relative to the spec file)
	Cache     string // artefact cache that campaigns may share ("": Output/cache)
	Datasets  []Dataset
	Model     Model
	Methods   []Method
	Post      []string // post-processings, each as attr.ParseSteps reads it ("": none)
	Reduce    string   // colour channels to one map: sum (default), mean or max
	Protocols []Protocol
	Seeds     []uint64
	Retrain   Retrain
	Workers   int // concurrent tasks (0: one per 8 cores, at least one — each task uses up to 8)
	// MemoryGB caps the campaign process's memory (GiB; 0: no cap) as a
	// soft limit: the garbage collector works harder to stay under it.
	// Workers bounds what the tasks hold at once; this bounds the slack.
	MemoryGB float64
	// Engine is where networks compute: "native" (also ""), "torch" (a
	// PyTorch worker here) or "torch@ssh://HOST" (see model.Engine).
	// Results are filed under its kind, so a run may move between hosts
	// but not between engines.
	Engine string
}

// Dataset is one dataset of the campaign.
type Dataset struct {
	Ref          string // id (data.IDs) or path
	TrainSamples int    // the first n training samples (0: all); an image folder's drawn balanced over its classes by the seed (data.Dataset.Balanced)
	TestSamples  int    // the first n test samples (0: all); an image folder's drawn so too
	Options      data.Options
}

// OpenOptions are the options data.Open takes for d: its Options with the
// caps on each split applied.
func (d Dataset) OpenOptions() data.Options {
	opt := d.Options
	opt.TrainHead, opt.TestHead = d.TrainSamples, d.TestSamples
	return opt
}

// Model is the classifier under explanation: a model file, or a recipe the
// campaign trains (once per dataset and seed).
type Model struct {
	File     string
	Arch     string
	Epochs   int
	Patience int
	LR       float64
	Batch    int
	// The optimiser (train.Config's: adam or sgd), SGD's momentum, the
	// weight decay and the learning-rate schedule (constant or cosine):
	// "" and 0 take train's defaults (GOAR's Adam recipe). Left out of a
	// cache key when unset, so that models trained before they existed
	// keep their keys.
	Optimizer   string  `json:",omitempty"`
	Momentum    float64 `json:",omitempty"`
	WeightDecay float64 `json:",omitempty"`
	Schedule    string  `json:",omitempty"`
}

// Method is an attribution method with its parameters, by the names the
// method's description gives them (methods.Lookup); absent ones take the
// method's defaults.
type Method struct {
	Name   string
	Params map[string]any
	// Dir is the folder the method's relative file parameters (file's
	// test and train) are read from: the spec's, for file alone ("" for the
	// methods that take no file). They stay as written in
	// Params, so that labels and keys do not depend on where a run lies.
	Dir string
	// As, when set (a spec's label:), is the name results are filed
	// under instead of Label's default: a file's maps under the name of
	// the method that made them.
	As string
}

// Protocol is an evaluation protocol with its parameters.
type Protocol struct {
	Name   string
	Params map[string]any
}

// Retrain is the recipe of every retraining protocol's models.
type Retrain struct {
	Epochs int // default 5
}

// Problem is one mistake in a spec, where it is.
type Problem struct {
	File      string
	Line, Col int
	Path      string // e.g. methods[2].params
	Msg       string
}

func (p Problem) Error() string {
	if p.Path == "" {
		return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", p.File, p.Line, p.Col, p.Path, p.Msg)
}

// Problems are all the mistakes found in a spec.
type Problems []Problem

// maxProblemsShown is how many problems Error lists; it counts the rest.
const maxProblemsShown = 50

func (ps Problems) Error() string {
	lines := make([]string, 0, min(len(ps), maxProblemsShown)+1)
	for _, p := range ps[:min(len(ps), maxProblemsShown)] {
		lines = append(lines, p.Error())
	}
	if len(ps) > maxProblemsShown {
		lines = append(lines, fmt.Sprintf("… and %d more", len(ps)-maxProblemsShown))
	}
	if len(ps) == 1 {
		return "1 problem in the spec:\n" + lines[0]
	}
	return fmt.Sprintf("%d problems in the spec:\n%s", len(ps), strings.Join(lines, "\n"))
}

// MaxFileBytes bounds a spec (a campaign's is a few KiB; parsing takes
// some 100 times the file's size at worst, a file of nothing but keys).
const MaxFileBytes = 256 << 10

// ReadFile reads a spec file: a regular file of at most MaxFileBytes
// (256 KiB), refused before reading past it.
func ReadFile(path string) ([]byte, error) {
	b, err := data.ReadFileLimit(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("read spec %s: %w", path, err)
	}
	return b, nil
}

// Load reads (ReadFile) and checks a spec file. Relative paths in it are
// taken from the file's folder.
func Load(path string) (*Spec, error) {
	b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Label names a method with the parameters the spec sets, in the order
// the method lists them, e.g. "smoothgrad{samples=30,noise_frac=0.2}",
// or as the spec's label: says: what results are filed under.
func (m Method) Label() string {
	if m.As != "" {
		return m.As
	}
	if len(m.Params) == 0 {
		return m.Name
	}
	info, err := methods.Lookup(m.Name)
	if err != nil {
		return m.Name
	}
	var parts []string
	for _, q := range info.Params {
		if v, ok := m.Params[q.Name]; ok {
			parts = append(parts, fmt.Sprintf("%s=%v", q.Name, v))
		}
	}
	return m.Name + "{" + strings.Join(parts, ",") + "}"
}

// New returns the attribution method, seeded, with the training inputs it
// may draw on.
func (m Method) New(s attr.Setup) (attr.Method, error) {
	s.Dir = m.Dir
	return methods.New(m.Name, m.Params, s)
}

// New returns the configured protocol.
func (p Protocol) New() (protocol.Protocol, error) { return protocol.New(p.Name, p.Params) }
