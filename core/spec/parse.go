package spec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"faithlab/core/attr"
	"faithlab/core/attr/methods"
	"faithlab/core/data"
	"faithlab/core/engine/native"
	"faithlab/core/model"
	"faithlab/core/param"
	"faithlab/core/protocol"
)

// Parse reads and checks a spec; name is the file it came from, for the
// locations of problems and for relative paths. On a mistake it returns
// Problems, every one it found.
func Parse(name string, b []byte) (*Spec, error) {
	if len(b) > MaxFileBytes {
		return nil, Problems{{File: name, Line: 1, Col: 1, Msg: fmt.Sprintf("%d bytes, more than the %d a spec may hold", len(b), MaxFileBytes)}}
	}
	p := &parser{file: name, dir: filepath.Dir(name)}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) || strings.Contains(err.Error(), "EOF") {
			return nil, Problems{{File: name, Line: 1, Col: 1, Msg: "not a YAML mapping: " + err.Error()}}
		}
		return nil, Problems{{File: name, Line: lineOf(err.Error()), Col: 1, Msg: syntaxWords(err.Error())}}
	}
	s := p.spec(&doc)
	if len(p.problems) > 0 {
		slices.SortStableFunc(p.problems, func(a, b Problem) int {
			if a.Line != b.Line {
				return a.Line - b.Line
			}
			return a.Col - b.Col
		})
		return nil, p.problems
	}
	return s, nil
}

// syntaxWords words a YAML syntax error ("yaml: line 3: …", whose line
// the problem names already): the parser names the line of the block it
// was reading, and the mistake is often below it.
func syntaxWords(msg string) string {
	if _, rest, ok := strings.Cut(msg, ": line "); ok {
		if _, what, ok := strings.Cut(rest, ": "); ok {
			msg = what
		}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return "YAML syntax: " + msg + " (in the block from this line: look here and below for an indent unlike its neighbours' — spaces only — or a [ or { not closed)"
}

// lineOf reads the line from a YAML syntax error ("yaml: line 3: …").
func lineOf(msg string) int {
	var n int
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i+5:], "%d", &n)
	}
	return max(n, 1)
}

type parser struct {
	file, dir string
	problems  Problems
}

func (p *parser) errorf(n *yaml.Node, path, format string, args ...any) {
	p.problems = append(p.problems, Problem{File: p.file, Line: n.Line, Col: n.Column, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// fields walks a mapping node: each key in known gets its value node; an
// unknown key, a repeated one or a non-mapping is a problem.
func (p *parser) fields(n *yaml.Node, path string, known ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a mapping (key: value lines), not %s", kind(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(known, k.Value):
			p.errorf(k, path, "unknown key %q (known: %s)", k.Value, strings.Join(known, ", "))
		case out[k.Value] != nil:
			p.errorf(k, path, "key %q given twice", k.Value)
		default:
			out[k.Value] = v
		}
	}
	return out
}

func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "an alias"
}

// decode sets *v from a scalar node, or records why it cannot.
func (p *parser) decode(n *yaml.Node, path string, v any) bool {
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, path, "want a single value, not %s", kind(n))
		return false
	}
	if err := n.Decode(v); err != nil {
		p.errorf(n, path, "want %s, not %q", goKind(v), n.Value)
		return false
	}
	return true
}

func goKind(v any) string {
	switch v.(type) {
	case *int:
		return "an integer"
	case *uint64:
		return "a non-negative integer"
	case *float64:
		return "a number"
	case *string:
		return "text"
	}
	return reflect.TypeOf(v).Elem().String()
}

// list returns a sequence's items; a single value stands for a list of one.
func (p *parser) list(n *yaml.Node, path string) []*yaml.Node {
	switch n.Kind {
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			p.errorf(n, path, "empty list")
		}
		return n.Content
	case yaml.ScalarNode, yaml.MappingNode:
		return []*yaml.Node{n}
	}
	p.errorf(n, path, "want a list, not %s", kind(n))
	return nil
}

// maxName bounds a campaign's name: a title, a folder's and a script's
// name; maxMemoryGB a spec's memory cap (1 PiB: a cap in bytes fits an int64).
const (
	maxName     = 100
	maxMemoryGB = 1 << 20
)

func (p *parser) spec(doc *yaml.Node) *Spec {
	root := doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		root = doc.Content[0]
	}
	f := p.fields(root, "", "name", "output", "cache", "datasets", "model", "methods", "post", "reduce", "protocols", "seeds", "retrain", "workers", "memory_gb", "engine")
	s := &Spec{Name: strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file)), Post: []string{""}, Reduce: "sum", Seeds: []uint64{1}, Retrain: Retrain{Epochs: 5}}
	if n := f["name"]; n != nil && p.decode(n, "name", &s.Name) {
		switch {
		case strings.TrimSpace(s.Name) == "":
			p.errorf(n, "name", "empty: name the campaign, e.g. %s", strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file)))
		case !data.Printable(s.Name):
			p.errorf(n, "name", "%q holds a line break or another control character: a name is one line of text", s.Name)
		case utf8.RuneCountInString(s.Name) > maxName:
			p.errorf(n, "name", "%d characters: a name is at most %d", utf8.RuneCountInString(s.Name), maxName)
		}
	}
	if n := f["output"]; n != nil {
		if p.decode(n, "output", &s.Output) {
			if strings.TrimSpace(s.Output) == "" {
				p.errorf(n, "output", "empty: name the run folder, e.g. runs/%s", s.Name)
			}
			s.Output = p.path(s.Output)
		}
	} else {
		p.errorf(root, "", "missing key \"output\": the run folder")
	}
	if n := f["cache"]; n != nil {
		if p.decode(n, "cache", &s.Cache) {
			s.Cache = p.path(s.Cache)
		}
	}
	if n := f["memory_gb"]; n != nil {
		if p.decode(n, "memory_gb", &s.MemoryGB) && !(s.MemoryGB >= 0) {
			p.errorf(n, "memory_gb", "%g GiB: want 0 (no cap) or more", s.MemoryGB)
		} else if s.MemoryGB > maxMemoryGB {
			p.errorf(n, "memory_gb", "%g GiB: more than any machine holds (want at most %d, or 0 for no cap)", s.MemoryGB, maxMemoryGB)
		}
	}
	if n := f["engine"]; n != nil && p.decode(n, "engine", &s.Engine) {
		if _, err := model.EngineKind(s.Engine); err != nil {
			p.errorf(n, "engine", "%v", err)
		}
	}
	if n := f["workers"]; n != nil {
		if p.decode(n, "workers", &s.Workers) && s.Workers < 0 {
			p.errorf(n, "workers", "%d workers: want 0 (one per 8 cores) or more", s.Workers)
		}
	}
	required := func(key, what string) *yaml.Node {
		n := f[key]
		if n == nil {
			p.errorf(root, "", "missing key %q: %s", key, what)
		}
		return n
	}
	if n := required("datasets", "the datasets evaluated"); n != nil {
		for i, d := range p.list(n, "datasets") {
			s.Datasets = append(s.Datasets, p.dataset(d, fmt.Sprintf("datasets[%d]", i)))
		}
	}
	if n := required("model", "a model file or a training recipe"); n != nil {
		s.Model = p.model(n)
	}
	type placed struct {
		n    *yaml.Node
		path string
	}
	var noTrainMaps []placed // file methods without training-set maps
	if n := required("methods", "the attribution methods evaluated"); n != nil {
		seen := map[string]bool{}
		for i, m := range p.list(n, "methods") {
			path := fmt.Sprintf("methods[%d]", i)
			meth := p.method(m, path)
			if f, err := meth.New(attr.CheckSetup); err == nil {
				if f, ok := f.(attr.File); ok && f.Train == "" {
					noTrainMaps = append(noTrainMaps, placed{m, path})
				}
			}
			if l := meth.Label(); seen[l] {
				p.errorf(m, path, "method %s listed twice", l)
			} else if meth.Name != "" {
				seen[l] = true
				s.Methods = append(s.Methods, meth)
			}
		}
	}
	if n := f["post"]; n != nil {
		s.Post = nil
		for i, v := range p.list(n, "post") {
			path := fmt.Sprintf("post[%d]", i)
			var spec string
			if p.decode(v, path, &spec) {
				if _, err := attr.ParseSteps(spec); err != nil {
					p.errorf(v, path, "%v", err)
				} else if slices.Contains(s.Post, spec) {
					p.errorf(v, path, "post-processing %q listed twice", spec)
				}
				s.Post = append(s.Post, spec)
			}
		}
	}
	if n := f["reduce"]; n != nil && p.decode(n, "reduce", &s.Reduce) && !slices.Contains([]string{"sum", "mean", "max"}, s.Reduce) {
		p.errorf(n, "reduce", "channel reduction %q: sum, mean or max", s.Reduce)
	}
	if n := required("protocols", "the evaluation protocols"); n != nil {
		seen := map[string]bool{}
		for i, v := range p.list(n, "protocols") {
			path := fmt.Sprintf("protocols[%d]", i)
			pr := p.protocol(v, path)
			if key := fmt.Sprint(strings.ToLower(pr.Name), pr.Params); pr.Name != "" && seen[key] {
				p.errorf(v, path, "protocol %s listed twice with the same parameters", pr.Name)
			} else {
				seen[key] = true
			}
			s.Protocols = append(s.Protocols, pr)
		}
	}
	// A protocol that retrains removes features of the training inputs
	// too: maps from files must cover them.
	for _, pr := range s.Protocols {
		prot, err := pr.New()
		if err != nil || !(prot.Info().Category == "retrain" || pr.Params["retrain"] == true) {
			continue
		}
		for _, m := range noTrainMaps {
			p.errorf(m.n, m.path, "%s retrains on the training inputs with their features removed: maps from files need params.train, a file of the training inputs' maps", prot.Info().Name)
		}
		break
	}
	if n := f["seeds"]; n != nil {
		s.Seeds = nil
		for i, v := range p.list(n, "seeds") {
			var seed uint64
			path := fmt.Sprintf("seeds[%d]", i)
			if p.decode(v, path, &seed) {
				if slices.Contains(s.Seeds, seed) {
					p.errorf(v, path, "seed %d listed twice", seed)
				}
				s.Seeds = append(s.Seeds, seed)
			}
		}
	}
	if n := f["retrain"]; n != nil {
		r := p.fields(n, "retrain", "epochs")
		if e := r["epochs"]; e != nil && p.decode(e, "retrain.epochs", &s.Retrain.Epochs) && s.Retrain.Epochs < 1 {
			p.errorf(e, "retrain.epochs", "%d epochs: want at least 1", s.Retrain.Epochs)
		}
	}
	if kind, _ := model.EngineKind(s.Engine); kind == "native" && s.Model.File != "" && model.IsTorchScript(s.Model.File) {
		p.errorf(f["model"], "model.file", "%s is a TorchScript model, which runs on the torch engine: add engine: torch", s.Model.File)
	} else if kind != "native" && s.Model.File != "" && model.IsONNX(s.Model.File) {
		p.errorf(f["model"], "model.file", "%s is an ONNX model, which runs on the native engine: leave out engine: %s", s.Model.File, s.Engine)
	}
	return s
}

// path resolves a path of the spec against the spec file's folder.
func (p *parser) path(v string) string {
	if v == "" || filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(p.dir, v)
}

func (p *parser) dataset(n *yaml.Node, path string) Dataset {
	var d Dataset
	if n.Kind == yaml.ScalarNode {
		p.decode(n, path, &d.Ref)
	} else {
		f := p.fields(n, path, "id", "train_samples", "test_samples", "label", "image_size", "channels")
		if v := f["id"]; v != nil {
			p.decode(v, path+".id", &d.Ref)
		} else {
			p.errorf(n, path, "missing key \"id\": a dataset id (%s) or path", strings.Join(data.IDs(), ", "))
		}
		for key, dst := range map[string]*int{"train_samples": &d.TrainSamples, "test_samples": &d.TestSamples, "image_size": &d.Options.ImageSize, "channels": &d.Options.Channels} {
			if v := f[key]; v != nil && p.decode(v, path+"."+key, dst) && *dst < 0 {
				p.errorf(v, path+"."+key, "%d: want 0 or more", *dst)
			}
		}
		if v := f["label"]; v != nil {
			p.decode(v, path+".label", &d.Options.Label)
		}
	}
	if _, ok, err := data.ParseGMM(d.Ref); ok && err != nil {
		p.errorf(n, path, "%v", err)
	}
	if d.Ref != "" && !data.IsID(d.Ref) {
		d.Ref = p.path(d.Ref)
		if st, err := os.Stat(d.Ref); err != nil {
			p.errorf(n, path, "dataset %q is neither a known id (%s) nor a readable path", d.Ref, strings.Join(data.IDs(), ", "))
		} else if !st.IsDir() {
			if err := data.StatRegular(d.Ref); err != nil {
				p.errorf(n, path, "dataset %s %v", d.Ref, err)
			}
		}
	}
	return d
}

func (p *parser) model(n *yaml.Node) Model {
	f := p.fields(n, "model", "file", "arch", "epochs", "patience", "lr", "batch", "optimizer", "momentum", "weight_decay", "schedule")
	var m Model
	if v := f["file"]; v != nil && p.decode(v, "model.file", &m.File) {
		m.File = p.path(m.File)
		if err := data.StatRegular(m.File); err != nil {
			p.errorf(v, "model.file", "cannot read model file %s: %v", m.File, err)
		}
	}
	if v := f["arch"]; v != nil && p.decode(v, "model.arch", &m.Arch) && !slices.Contains(native.Architectures(), m.Arch) {
		p.errorf(v, "model.arch", "unknown architecture %q (known: %s)", m.Arch, strings.Join(native.Architectures(), ", "))
	}
	switch {
	case m.File != "" && m.Arch != "":
		p.errorf(n, "model", "give either a model file or an architecture to train, not both")
	case f["file"] == nil && f["arch"] == nil:
		p.errorf(n, "model", "give a model file (file:) or an architecture to train (arch:)")
	}
	for key, dst := range map[string]*int{"epochs": &m.Epochs, "patience": &m.Patience, "batch": &m.Batch} {
		if v := f[key]; v != nil && p.decode(v, "model."+key, dst) && *dst < 0 {
			p.errorf(v, "model."+key, "%d: want 0 (the default) or more", *dst)
		}
	}
	if v := f["lr"]; v != nil && p.decode(v, "model.lr", &m.LR) && !(m.LR >= 0) {
		p.errorf(v, "model.lr", "learning rate %g: want a positive number", m.LR)
	}
	for key, dst := range map[string]*string{"optimizer": &m.Optimizer, "schedule": &m.Schedule} {
		choices := map[string][]string{"optimizer": {"adam", "sgd"}, "schedule": {"constant", "cosine"}}[key]
		if v := f[key]; v != nil && p.decode(v, "model."+key, dst) && !slices.Contains(choices, *dst) {
			p.errorf(v, "model."+key, "%q: want %s", *dst, strings.Join(choices, " or "))
		}
	}
	for key, dst := range map[string]*float64{"momentum": &m.Momentum, "weight_decay": &m.WeightDecay} {
		if v := f[key]; v != nil && p.decode(v, "model."+key, dst) && !(*dst >= 0) {
			p.errorf(v, "model."+key, "%g: want 0 or more", *dst)
		}
	}
	if m.File != "" && (f["epochs"] != nil || f["lr"] != nil || f["batch"] != nil || f["patience"] != nil ||
		f["optimizer"] != nil || f["momentum"] != nil || f["weight_decay"] != nil || f["schedule"] != nil) {
		p.errorf(n, "model", "training settings given with a model file, which is already trained")
	}
	return m
}

// named reads a list item that is a bare name or {name, params} (and the
// keys given), and returns the name, the params node (nil when absent)
// and every key's node.
func (p *parser) named(n *yaml.Node, path string, keys ...string) (name string, params *yaml.Node, f map[string]*yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		p.decode(n, path, &name)
		return name, nil, nil
	}
	f = p.fields(n, path, append([]string{"name", "params"}, keys...)...)
	if v := f["name"]; v != nil {
		p.decode(v, path+".name", &name)
	} else {
		p.errorf(n, path, "missing key \"name\"")
	}
	return name, f["params"], f
}

func (p *parser) method(n *yaml.Node, path string) Method {
	var m Method
	var params *yaml.Node
	var f map[string]*yaml.Node
	m.Name, params, f = p.named(n, path, "label")
	if v := f["label"]; v != nil && p.decode(v, path+".label", &m.As) && (m.As == "" || strings.ContainsAny(m.As, "{}+,") || !data.Printable(m.As)) {
		p.errorf(v, path+".label", "label %q: want a name on one line, without braces, commas or +", m.As)
	}
	if m.Name == "" {
		return m
	}
	info, err := methods.Lookup(m.Name)
	if err != nil {
		p.errorf(n, path, "%v", err)
		m.Name = ""
		return m
	}
	m.Name = info.Name
	m.Params = p.params(params, path)
	// Build it once to check every parameter; the training data it may
	// need is not here yet, so it gets a stand-in.
	built, err := m.New(attr.CheckSetup)
	if err != nil {
		p.paramErrors(n, params, path, err)
	}
	// A maps file is read from the spec's folder, and must be there (its
	// contents are checked against the data when the data is open).
	if f, ok := built.(attr.File); ok {
		m.Dir, f.Dir = p.dir, p.dir
		for _, split := range []string{"test", "train"} {
			if file := f.Path(split); file != "" {
				if err := data.StatRegular(file); err != nil {
					p.errorf(params, path+".params."+split, "cannot read maps file %s: %v", file, err)
				}
			}
		}
	}
	return m
}

// params reads a parameters mapping (nil when absent).
func (p *parser) params(n *yaml.Node, path string) map[string]any {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path+".params", "want a mapping, not %s", kind(n))
		return nil
	}
	var out map[string]any
	if err := n.Decode(&out); err != nil {
		p.errorf(n, path+".params", "%v", err)
		return nil
	}
	for k, v := range out {
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			p.errorf(n, path+".params."+k, "%v: want a finite number", f)
			delete(out, k)
		}
	}
	return out
}

// paramErrors places each parameter problem in err at its key in the
// params mapping (at the item when it names no parameter there).
func (p *parser) paramErrors(item, params *yaml.Node, path string, err error) {
	pes := param.Split(err)
	if len(pes) == 0 {
		p.errorf(item, path, "%v", err)
		return
	}
	for _, pe := range pes {
		at, where := item, path
		if params != nil {
			at, where = params, path+".params"
			for i := 0; i+1 < len(params.Content); i += 2 {
				if k := params.Content[i]; pe.Param != "" && k.Value == pe.Param {
					at, where = k, where+"."+pe.Param
				}
			}
		}
		msg := pe.Err.Error()
		if pe.Param != "" && !strings.HasSuffix(where, "."+pe.Param) {
			msg = pe.Param + " " + msg
		}
		p.errorf(at, where, "%s", msg)
	}
}

func (p *parser) protocol(n *yaml.Node, path string) Protocol {
	var pr Protocol
	var params *yaml.Node
	pr.Name, params, _ = p.named(n, path)
	pr.Params = p.params(params, path)
	// A prior file (GOAR, FUD) is read relative to the spec's folder, as
	// the model file is.
	if v, ok := pr.Params["prior"].(string); ok && protocol.IsPriorFile(v) {
		pr.Params["prior"] = p.path(v)
		if err := data.StatRegular(p.path(v)); err != nil {
			p.errorf(params, path+".params.prior", "cannot read prior file %s: %v", p.path(v), err)
		}
	}
	if pr.Name != "" {
		if _, err := protocol.New(pr.Name, pr.Params); err != nil {
			p.paramErrors(n, params, path, err)
		}
	}
	return pr
}
