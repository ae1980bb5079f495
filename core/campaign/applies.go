package campaign

import (
	"errors"
	"fmt"
	"strings"

	"faithlab/core/attr/methods"
	"faithlab/core/data"
	"faithlab/core/protocol"
)

// Applies says, before any work, which of the campaign's methods and
// protocols cannot run on which of its datasets — a protocol that takes
// images given a table, a subset size beyond a sample's features, a method
// that needs a ground truth the data lacks — all at once, each naming the
// dataset and the entry, so that a mismatch is one error at the start
// rather than every task failing after the work before it. Each dataset
// is opened for its shape alone (one sample of each split).
func (c *Campaign) Applies() error {
	s := c.Spec
	var problems []string
	for _, d := range s.Datasets {
		if d.Ref == "" {
			continue // the model file's own dataset: checked against it when opened
		}
		opt := d.Options
		opt.TrainHead, opt.TestHead = 1, 1
		tr, _, err := data.Open(d.Ref, opt)
		if err != nil {
			return err
		}
		truth := len(tr.Truth) > 0
		for _, m := range s.Methods {
			info, err := methods.Lookup(m.Name)
			if err != nil {
				return err
			}
			if err := info.Check(tr.Shape, truth); err != nil {
				problems = append(problems, fmt.Sprintf("%s: method %s: %v", d.Ref, m.Label(), err))
			}
		}
		for _, p := range s.Protocols {
			proto, err := p.New()
			if err != nil {
				return err
			}
			if err := protocol.Applies(proto, tr.Shape); err != nil {
				problems = append(problems, fmt.Sprintf("%s: protocol %s: %v", d.Ref, p.Name, err))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New("the campaign's methods and protocols do not all fit its data:\n  " + strings.Join(problems, "\n  "))
	}
	return nil
}
