package campaign

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"faithlab/core/attr/methods"
	"faithlab/core/data"
	"faithlab/core/protocol"
	"faithlab/core/spec"
)

// Applies says, before any work, which of the campaign's methods and
// protocols cannot run on which of its datasets — a protocol that takes
// images given a table, a subset size beyond a sample's features, a method
// that needs a ground truth the data lacks — all at once, each naming the
// dataset and the entry, so that a mismatch is one error at the start
// rather than every task failing after the work before it. Each dataset
// is opened for its shape and its caps alone: one sample of each split,
// or as many as the spec caps it at (an IDX set is read no further; other
// formats are read whole, then cut), so that a cap above a split is
// refused here too. The estimate
// makes the same check on the sets it opens (appliesTo).
func (c *Campaign) Applies() error {
	var problems []string
	for _, d := range c.Spec.Datasets {
		if d.Ref == "" {
			continue // the model file's own dataset: checked against it when opened
		}
		opt := d.OpenOptions() // a cap above a split is refused here
		opt.TrainHead, opt.TestHead = cmp.Or(opt.TrainHead, 1), cmp.Or(opt.TestHead, 1)
		tr, _, err := data.Open(d.Ref, opt)
		if err != nil {
			return err
		}
		p, err := appliesTo(c.Spec, d, tr)
		if err != nil {
			return err
		}
		problems = append(problems, p...)
	}
	return misfits(problems)
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
		if err := protocol.Applies(proto, ds.Shape); err != nil {
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
