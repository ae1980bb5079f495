// Package methods is the registry of every attribution method, TRACE's
// included: the one way the CLI, a campaign spec and the GUI list methods
// and build them. Each method describes itself (attr.Info: name, category,
// the data it applies to, what it needs from the training set, its
// parameters with types, defaults, ranges and docs), and New checks a
// configuration in full — unknown names, parameters that do not apply,
// wrong types, values out of range — before anything runs.
package methods

import (
	"fmt"
	"strings"

	"faithlab/core/attr"
	"faithlab/core/attr/trace"
)

func entries() []attr.Entry { return append(attr.Entries(), trace.Entries()...) }

// All describes every method, in the registry's order.
func All() []attr.Info {
	var out []attr.Info
	for _, e := range entries() {
		out = append(out, e.Info)
	}
	return out
}

// Names lists the methods' short names.
func Names() []string {
	var out []string
	for _, e := range entries() {
		out = append(out, e.Info.Name)
	}
	return out
}

// Lookup returns the description of the named method (case-insensitive).
func Lookup(name string) (attr.Info, error) {
	e, err := find(name)
	return e.Info, err
}

// New builds the named method with params (by their names in Info.Params)
// and the setup's seed, chunk and training data.
func New(name string, params map[string]any, s attr.Setup) (attr.Method, error) {
	e, err := find(name)
	if err != nil {
		return nil, err
	}
	return e.Build(s, params)
}

func find(name string) (attr.Entry, error) {
	for _, e := range entries() {
		if strings.EqualFold(e.Info.Name, name) {
			return e, nil
		}
	}
	return attr.Entry{}, fmt.Errorf("unknown attribution method %q (known: %s)", name, strings.Join(Names(), ", "))
}
