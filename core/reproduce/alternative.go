package reproduce

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Alternative is a dataset of the paper's that this machine lacks and a
// user may supply (`reproduce NAME --data cifar10=PATH`): the size's spec
// then reads it in place of the dataset it stands for, with the model the
// paper trained on it.
type Alternative struct {
	Name     string    `yaml:"name"`     // what it is ("CIFAR-10's binary batches")
	Replaces string    `yaml:"replaces"` // the spec's dataset it stands in for
	Model    yaml.Node `yaml:"model"`    // the spec's model: the paper's architecture and recipe on it
	// Prior says its diffusion protocols (GOAR, FUD) need a prior trained
	// on it (Options.Prior): no prior of this machine's is.
	Prior bool `yaml:"prior"`
}

// diffusionProtocols take a prior: parameter.
var diffusionProtocols = []string{"goar", "fud"}

// SpecFor is the size's spec with the user's datasets (name → path, each
// one of the reproduction's Alternatives) read in place of those they stand
// for — the same caps, methods, protocols and seeds, the paper's model on
// them — and prior as its diffusion protocols' prior where they need one.
// Without data it is the size's spec as written.
func (r *Reproduction) SpecFor(size string, data map[string]string, prior string) ([]byte, error) {
	sz, ok := r.Sizes[size]
	if !ok {
		return nil, fmt.Errorf("reproduction %s has no size %q (%s)", r.Name, size, strings.Join(Sizes, ", "))
	}
	if len(data) == 0 {
		if prior != "" {
			return nil, fmt.Errorf("a prior goes with --data: the shipped datasets have their priors")
		}
		return []byte(sz.Spec), nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(sz.Spec), &doc); err != nil || len(doc.Content) != 1 {
		return nil, fmt.Errorf("reproduction %s (%s): its spec does not parse: %v", r.Name, size, err)
	}
	root := doc.Content[0]
	needPrior := false
	for _, name := range slices.Sorted(maps.Keys(data)) {
		alt, ok := r.Alternatives[name]
		if !ok {
			return nil, fmt.Errorf("reproduction %s takes no dataset %q (%s)", r.Name, name, r.alternativeNames())
		}
		path, err := filepath.Abs(data[name])
		if err != nil {
			return nil, err
		}
		swapped := false
		for _, ds := range value(root, "datasets").Content {
			if id := value(ds, "id"); id != nil && id.Value == alt.Replaces {
				id.Value, swapped = path, true
			}
		}
		if !swapped {
			return nil, fmt.Errorf("reproduction %s (%s) reads no %s for %s to stand in for", r.Name, size, alt.Replaces, name)
		}
		model := alt.Model
		setValue(root, "model", &model)
		needPrior = needPrior || alt.Prior
	}
	if needPrior {
		for _, p := range value(root, "protocols").Content {
			if n := value(p, "name"); n == nil || !slices.Contains(diffusionProtocols, n.Value) {
				continue
			}
			if prior == "" {
				return nil, fmt.Errorf("reproduction %s runs %s, which needs a diffusion prior trained on the data given: train one (faithlab-cli train-prior --dataset PATH --out prior.flm) and give it (--prior prior.flm)", r.Name, value(p, "name").Value)
			}
			abs, err := filepath.Abs(prior)
			if err != nil {
				return nil, err
			}
			params := value(p, "params")
			if params == nil {
				params = &yaml.Node{Kind: yaml.MappingNode}
				setValue(p, "params", params)
			}
			setValue(params, "prior", &yaml.Node{Kind: yaml.ScalarNode, Value: abs})
		}
	} else if prior != "" {
		return nil, fmt.Errorf("reproduction %s needs no prior for the data given", r.Name)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (r *Reproduction) alternativeNames() string {
	if len(r.Alternatives) == 0 {
		return "none: it runs the built-in data only"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(r.Alternatives)) {
		out = append(out, k+": "+r.Alternatives[k].Name)
	}
	return strings.Join(out, "; ")
}

// value is a mapping node's value under key (nil where absent).
func value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setValue sets a mapping node's value under key.
func setValue(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}
