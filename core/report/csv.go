// Package report turns a campaign's records into what goes in a paper: a
// tidy CSV, figures at paper column width, a summary table of headline
// scores, and the diagnostics of the protocols' known biases.
//
// Nothing here knows a protocol by name: figures and tables are drawn from
// what each protocol says about its metrics (protocol.Info) — which are
// curves over which parameter, their axes, ranges, reference values and
// directions, which scalar summarises which curve, which is the headline.
package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"faithlab/core/store"
)

// CSVHeader is the tidy CSV's columns: one row per scalar score or curve
// point. parameter is the curve's x (drop rate, fraction removed, N) and
// empty for a scalar.
// protocol is the protocol's name, followed, for a dataset's later
// settings of a protocol run in several (GOAR with and without
// projection), by what sets each apart, as the figures title them:
// "GOAR (no_projection, prior=auto)".
var CSVHeader = []string{"run", "dataset", "model", "method", "post", "protocol", "seed", "metric", "parameter", "value"}

// WriteCSV writes the successful records in the given order as tidy CSV:
// plain RFC 4180 with a header row, numbers in Go's shortest exact form,
// NaN for an undefined value, which pandas and R read without options.
// Nothing in it depends on when or how fast the tasks ran, so a resumed or
// merged run writes the same bytes as an uninterrupted one.
func WriteCSV(w io.Writer, runID string, recs []store.Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	c := newCampaign(recs)
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		proto := c.setting(r)
		row := func(metric, param, value string) error {
			return cw.Write([]string{runID, r.Dataset, r.Model, r.Method, r.Post, proto, strconv.FormatUint(r.Seed, 10), metric, param, value})
		}
		for _, s := range r.Result.Scalars {
			if err := row(s.Name, "", f(s.Value)); err != nil {
				return err
			}
		}
		for _, c := range r.Result.Curves {
			for j := range c.X {
				if err := row(c.Name, f(c.X[j]), f(c.Y[j])); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
