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
	"math"
	"strconv"
	"strings"

	"faithlab/core/data"
	"faithlab/core/store"
)

// CSVHeader is the tidy CSV's columns: one row per scalar score or curve
// point. parameter is the curve's x (drop rate, fraction removed, N) and
// empty for a scalar.
// protocol is the protocol's name, followed, for a dataset's later
// settings of a protocol run in several (GOAR with and without
// projection), by what sets each apart, as the figures title them:
// "GOAR (no_projection, prior=auto)".
// ci_low and ci_high are the value's 95 % interval where the result keeps
// what it needs (empty otherwise, as for a run from before per-input
// values were kept), inside the score's natural range: for a scalar, the
// interval every other output shows (Confidence: Agresti–Coull for 0/1
// scores, else the hull of the BCa and studentized bootstraps over the
// n_inputs test inputs); for a curve's point, Agresti–Coull where its
// inputs' values are 0/1 (an accuracy), else the normal approximation
// value ± 1.96·s.d./√n_inputs. Where a campaign has several seeds, rows
// with seed "all" follow each method's per-seed rows: the mean over the
// n_seeds seeds, its interval from resampling seeds, then inputs
// (scalars), or from the spread of the seeds' values, at least the
// inputs' (curves). Filter them out (seed != "all") to have one row per
// seed. few_inputs is true where the inputs are too few for how skewed
// their values are for any interval to be known to cover ("few inputs:
// interval may be too narrow"), false where it is not, empty without an
// interval.
var CSVHeader = []string{"run", "dataset", "model", "method", "post", "protocol", "seed", "metric", "parameter", "value", "ci_low", "ci_high", "n_inputs", "n_seeds", "few_inputs"}

// FewInputs is what a flagged interval (stats.Interval.Few) says beside
// it.
const FewInputs = "few inputs: interval may be too narrow"

// WriteCSV writes the successful records in the given order as tidy CSV,
// with the intervals conf holds: plain RFC 4180 with a header row,
// numbers in Go's shortest exact form, NaN for an undefined value, which
// pandas and R read without options. Nothing in it depends on when or how
// fast the tasks ran, so a resumed or merged run writes the same bytes as
// an uninterrupted one.
func WriteCSV(w io.Writer, runID string, recs []store.Record, conf Confidence) error {
	cw := cellWriter{csv.NewWriter(w)}
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	ci := func(lo, hi float64, n, seeds int, few bool) []string {
		if math.IsNaN(lo) || math.IsNaN(hi) || n == 0 {
			return []string{"", "", itoa(n), itoa(seeds), ""}
		}
		return []string{f(lo), f(hi), itoa(n), itoa(seeds), strconv.FormatBool(few)}
	}
	c := newCampaign(recs)
	// The records of each (dataset, setting, method), for the rows over
	// all seeds after the last of them.
	type key struct{ ds, setting, method string }
	groups := map[key][]store.Record{}
	last := map[key]int{}
	for i, r := range recs {
		if r.Result != nil {
			k := key{r.Dataset, c.setting(r), methodName(r)}
			groups[k] = append(groups[k], r)
			last[k] = i
		}
	}
	for i, r := range recs {
		if r.Result == nil {
			continue
		}
		proto := c.setting(r)
		row := func(seed, metric, param, value string, tail []string) error {
			return cw.Write(append([]string{runID, r.Dataset, r.Model, r.Method, r.Post, proto, seed, metric, param, value}, tail...))
		}
		seed := strconv.FormatUint(r.Seed, 10)
		for _, s := range r.Result.Scalars {
			tail := ci(math.NaN(), math.NaN(), 0, 1, false)
			if iv, ok := conf.Interval(r.Dataset, proto, methodName(r), s.Name, seed); ok {
				tail = ci(iv.Lo, iv.Hi, iv.Units, 1, iv.Few)
			}
			if err := row(seed, s.Name, "", f(s.Value), tail); err != nil {
				return err
			}
		}
		for _, cv := range r.Result.Curves {
			rng := c.curveRange(r, cv.Name)
			for j := range cv.X {
				lo, hi := pointBand(cv.Y[j], pointSD(cv, j), cv.N, rng)
				if err := row(seed, cv.Name, f(cv.X[j]), f(cv.Y[j]), ci(lo, hi, cv.N, 1, false)); err != nil {
					return err
				}
			}
		}
		k := key{r.Dataset, proto, methodName(r)}
		if g := groups[k]; last[k] == i && seeds(g) > 1 {
			rng := func(curve string) []float64 { return c.curveRange(r, curve) }
			if err := writePooled(cw, runID, r, proto, g, conf, rng, f, ci); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// writePooled writes a method's rows over all its seeds (seed "all").
func writePooled(cw cellWriter, runID string, r store.Record, proto string, g []store.Record, conf Confidence, curveRange func(string) []float64,
	f func(float64) string, ci func(lo, hi float64, n, seeds int, few bool) []string) error {
	row := func(metric, param, value string, tail []string) error {
		return cw.Write(append([]string{runID, r.Dataset, r.Model, r.Method, r.Post, proto, AllSeeds, metric, param, value}, tail...))
	}
	for _, s := range r.Result.Scalars {
		m, _ := meanSD(scalars(g, s.Name))
		tail := ci(math.NaN(), math.NaN(), 0, seeds(g), false)
		if iv, ok := conf.Interval(r.Dataset, proto, methodName(r), s.Name, AllSeeds); ok {
			m, tail = iv.Estimate, ci(iv.Lo, iv.Hi, iv.Units, iv.Groups, iv.Few)
		}
		if err := row(s.Name, "", f(m), tail); err != nil {
			return err
		}
	}
	for _, cv := range r.Result.Curves {
		rng := curveRange(cv.Name)
		for j := range cv.X {
			b := pooledBand(g, cv.Name, j, cv.X[j], rng)
			if err := row(cv.Name, f(cv.X[j]), f(b.mean), ci(b.lo, b.hi, b.n, b.seeds, false)); err != nil {
				return err
			}
		}
	}
	return nil
}

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// UnitsHeader is the per-input CSV's columns: one row per input and
// scalar that keeps its inputs' values (protocol.Units). input is the
// input's position among the evaluated test inputs (the first n of the
// test split), the same input in every row of one dataset and seed; value
// is empty where undefined for that input (Kendall's τ of a constant
// curve). The scalar's value in the tidy CSV is the mean of its rows'
// values. The other columns are the tidy CSV's.
var UnitsHeader = []string{"run", "dataset", "model", "method", "post", "protocol", "seed", "metric", "input", "value"}

// WriteUnitsCSV writes the per-input values of the successful records, in
// the given order, as CSV (pandas: pd.read_csv(path)). Records without
// per-input values (runs from before they were kept) write no rows.
func WriteUnitsCSV(w io.Writer, runID string, recs []store.Record) error {
	cw := cellWriter{csv.NewWriter(w)}
	if err := cw.Write(UnitsHeader); err != nil {
		return err
	}
	c := newCampaign(recs)
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		u := r.Result.Units
		head := []string{runID, r.Dataset, r.Model, r.Method, r.Post, c.setting(r), strconv.FormatUint(r.Seed, 10)}
		for k, name := range u.Names {
			for i, v := range u.Values[k] {
				value := ""
				if !math.IsNaN(float64(v)) {
					value = strconv.FormatFloat(float64(v), 'g', -1, 32)
				}
				if err := cw.Write(append(head, name, strconv.Itoa(i), value)); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// cellWriter writes CSV rows whose text cells — names from specs, records
// and datasets — are inert in a spreadsheet: control and format characters
// become spaces (a cell stays on its line), and a text that a spreadsheet
// would run as a formula (it starts with =, +, -, @) is marked as text
// with a leading apostrophe (OWASP's advice). Numbers are written as they are.
type cellWriter struct{ *csv.Writer }

func (w cellWriter) Write(row []string) error {
	for i, c := range row {
		row[i] = CSVText(c)
	}
	return w.Writer.Write(row)
}

// CSVText is a cell's text made inert (see cellWriter).
func CSVText(c string) string {
	c = strings.Map(func(r rune) rune {
		if data.Unprintable(r) {
			return ' '
		}
		return r
	}, c)
	if c != "" && strings.ContainsRune("=+-@", rune(c[0])) {
		if _, err := strconv.ParseFloat(c, 64); err != nil {
			return "'" + c
		}
	}
	return c
}
