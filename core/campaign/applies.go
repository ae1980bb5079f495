package campaign

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"faithlab/core/attr"
	"faithlab/core/attr/methods"
	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/core/spec"
)

// Applies says, before any work, which of the campaign's methods and
// protocols cannot run on which of its datasets — a protocol that takes
// images given a table, a subset size beyond a sample's features, a method
// that needs a ground truth the data lacks, a localisation metric on a dataset
// without masks — all at once, each naming the
// dataset and the entry, so that a mismatch is one error at the start
// rather than every task failing after the work before it. Each dataset
// is opened for its shape and its caps alone: one sample of each split,
// or as many as the spec caps it at (an IDX set is read no further; other
// formats are read whole, then cut), so that a cap above a split is
// refused here too. With a model file, each is opened as the model takes
// its inputs (an image folder at its size and channels; a size the spec
// asks for that the model does not take is refused; a folder of images
// without class folders taken unlabelled, and a protocol that needs
// labels refused on it, protocol.NeedsLabels) and its samples are
// checked against the model's input shape. The estimate makes the same
// check on the sets it opens (appliesTo).
func (c *Campaign) Applies() error {
	var problems []string
	var h *model.Header
	if f := c.Spec.Model.File; f != "" {
		hh, err := model.HeaderOf(f)
		if err != nil {
			return err
		}
		h = &hh
	}
	for _, d := range c.Spec.Datasets {
		ref, opt, err := c.dataOptions(d) // a cap above a split is refused here
		if err != nil {
			return err
		}
		if ref == "" {
			continue // the model file's own dataset, which it does not name: an error when opened
		}
		opt.TrainHead, opt.TestHead = cmp.Or(opt.TrainHead, 1), cmp.Or(opt.TestHead, 1)
		tr, _, err := data.Open(ref, opt)
		if err != nil {
			return err
		}
		if h != nil && !slices.Equal(tr.Shape, h.InputShape) {
			problems = append(problems, fmt.Sprintf("%s: samples of shape %v, but model %s takes %v", ref, tr.Shape, c.Spec.Model.File, h.InputShape))
			continue
		}
		p, err := appliesTo(c.Spec, d, tr)
		if err != nil {
			return err
		}
		problems = append(problems, p...)
		if len(problems) == 0 {
			p, err := c.attends(tr)
			if err != nil {
				return err
			}
			problems = append(problems, p...)
		}
	}
	return misfits(problems)
}

// attends lists the transformer methods of the campaign (Attention
// Rollout and its kin) that its model cannot run, having no attention
// probabilities — a CNN's file, a built-in architecture — before any
// work, as Explain offers them only for a model with some
// (MethodsFor). The model is opened only where the campaign asks for such
// a method; a TorchScript model, whose layers the Go side cannot see, is
// left to the method's own error.
func (c *Campaign) attends(ds *data.Dataset) ([]string, error) {
	var asked []string
	for _, m := range c.Spec.Methods {
		if info, err := methods.Lookup(m.Name); err == nil && info.Category == attr.CategoryTransformer {
			asked = append(asked, m.Label())
		}
	}
	f := c.Spec.Model.File
	if len(asked) == 0 || f != "" && model.IsTorchScript(f) {
		return nil, nil
	}
	var m *model.Model
	var err error
	if f != "" {
		m, err = model.Load(f, gemm.Gonum{})
	} else {
		m, err = model.New(c.Spec.Model.Arch, ds, gemm.Gonum{}, 1)
	}
	if err != nil {
		return nil, err
	}
	defer engine.Release(m.Net)
	if len(m.Net.AttentionLayers()) > 0 {
		return nil, nil
	}
	var out []string
	for _, name := range asked {
		out = append(out, fmt.Sprintf("method %s explains a vision transformer's attention, and model %s has no attention probabilities (a softmax between a query–key product and the product with the values)", name, m.Arch))
	}
	return out, nil
}

// appliesTo lists what of s cannot run on the samples of d (ds: its
// training set, or any part of it).
func appliesTo(s *spec.Spec, d spec.Dataset, ds *data.Dataset) ([]string, error) {
	var problems []string
	truth := len(ds.Truth) > 0
	for _, m := range s.Methods {
		info, err := methods.Lookup(m.Name)
		if err != nil {
			return nil, err
		}
		if err := info.Check(ds.Shape, truth); err != nil {
			problems = append(problems, fmt.Sprintf("%s: method %s: %v", d.Ref, m.Label(), err))
		}
	}
	for _, p := range s.Protocols {
		proto, err := p.New()
		if err != nil {
			return nil, err
		}
		if err := protocol.AppliesTo(proto, ds); err != nil {
			problems = append(problems, fmt.Sprintf("%s: protocol %s: %v", d.Ref, p.Name, err))
		}
	}
	return problems, nil
}

// misfits is Applies's error for its problems (nil for none).
func misfits(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return errors.New("the campaign's methods and protocols do not all fit its data:\n  " + strings.Join(problems, "\n  "))
}
