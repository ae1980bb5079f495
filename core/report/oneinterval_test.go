package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"faithlab/core/protocol"
	"faithlab/core/stats"
	"faithlab/core/store"
)

// One score, one interval: the ranking's (the summary, REPORT.md, the
// report card and the workbench show it), the CSV's and the figures'
// (Confidence.Interval) are the same numbers, bit for bit — with one
// seed (the seed's interval) and with two (the pooled one).
func TestEveryOutputShowsTheSameInterval(t *testing.T) {
	for _, tc := range []struct {
		name string
		recs []store.Record
		seed string
	}{
		{"one seed", slices.DeleteFunc(unitRecords(), func(r store.Record) bool { return r.Seed != 1 }), "1"},
		{"two seeds", unitRecords(), AllSeeds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnose(tc.recs)
			var buf bytes.Buffer
			if err := WriteCSV(&buf, "run", tc.recs, d.Confidence); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(&buf).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			md, sum := Markdown("t", tc.recs, d, Left{}), Summary(tc.recs, d)
			if len(d.Confidence.Rankings) != 2 {
				t.Fatalf("%d rankings", len(d.Confidence.Rankings))
			}
			for _, r := range d.Confidence.Rankings {
				for _, m := range r.Methods {
					iv, ok := d.Confidence.Interval(r.Dataset, r.Protocol, m.Method, r.Metric, tc.seed)
					if !ok || iv != m.CI {
						t.Errorf("%s %s: ranking %+v, intervals %+v", r.Protocol, m.Method, m.CI, iv)
					}
					i := slices.IndexFunc(rows, func(row []string) bool {
						return row[3] == m.Method && row[5] == r.Protocol && row[6] == tc.seed && row[7] == r.Metric
					})
					if i < 0 || rows[i][10] != strconv.FormatFloat(m.CI.Lo, 'g', -1, 64) || rows[i][11] != strconv.FormatFloat(m.CI.Hi, 'g', -1, 64) {
						t.Errorf("%s %s: CSV row %v, ranking %+v", r.Protocol, m.Method, rows[max(i, 0)], m.CI)
					}
					if cell := cellOf(m); !strings.Contains(md, "| "+m.Method+" | "+cell) || !strings.Contains(sum, cell) {
						t.Errorf("%s %s: %q not in REPORT.md or the summary", r.Protocol, m.Method, cell)
					}
				}
			}
		})
	}
}

// unitRecordsOf is one protocol's records of one scalar kept per input,
// one seed: values[method] are the inputs' values, on a grid of k (0:
// none).
func unitRecordsOf(proto, metric string, better protocol.Better, grid int, values map[string][]float64) []store.Record {
	var recs []store.Record
	for _, meth := range slices.Sorted(func(yield func(string) bool) {
		for m := range values {
			if !yield(m) {
				return
			}
		}
	}) {
		per := values[meth]
		u := make([]float32, len(per))
		var sum float64
		for i, v := range per {
			u[i] = float32(v)
			sum += v
		}
		res := &protocol.Result{Protocol: proto, Method: meth, Config: map[string]any{},
			Scalars: []protocol.Scalar{{Name: metric, Value: sum / float64(len(per)), Better: better}},
			Units:   protocol.Units{N: len(per), Names: []string{metric}, Values: [][]float32{u}}}
		if grid > 0 {
			res.Units.Grids = []int{grid}
		}
		recs = append(recs, store.Record{Dataset: "d", Model: "m", Method: meth, Protocol: proto, Seed: 1, Result: res})
	}
	return recs
}

// Accuracies on a grid (ROAD's per input: right at 0 to 3 of 3 rates) are
// read as counts: the Wilcoxon test sees the ties the differences have
// (float32 thirds would make equal differences unequal), and the paired
// test is exact where few inputs differ — 4 of 1 200, all one way: p =
// 2/2⁴ = 0.125, where a bootstrap said 0.035.
func TestDiscreteScoresTieExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	a, b := make([]float64, 300), make([]float64, 300)
	for i := range a {
		ca := r.IntN(4)
		cb := min(3, max(0, ca+r.IntN(3)-1))
		a[i], b[i] = float64(ca)/3, float64(cb)/3
	}
	d := Diagnose(unitRecordsOf("ROAD", "lerf_minus_morf", protocol.Higher, 3, map[string][]float64{"ig": a, "random": b}))
	rk, ok := d.Confidence.Ranking("d", "ROAD")
	if !ok || len(rk.Pairs) != 1 {
		t.Fatalf("ranking %+v", rk)
	}
	counts := func(x []float64) []float64 {
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = math.Round(float64(float32(v)) * 3)
		}
		return out
	}
	x, y := counts(a), counts(b)
	if rk.Pairs[0].A == "random" {
		x, y = y, x
	}
	_, _, want := stats.Wilcoxon(x, y)
	_, _, rounded := stats.Wilcoxon(float32s(a), float32s(b))
	if p := rk.Pairs[0].PWilcoxon; p != want || p == rounded {
		t.Errorf("Wilcoxon p %v; on counts %v, on float32 thirds %v", p, want, rounded)
	}

	zero, sparse := make([]float64, 1200), make([]float64, 1200)
	for i := range 4 {
		sparse[300*i] = 1.0 / 3
	}
	d = Diagnose(unitRecordsOf("ROAD", "lerf_minus_morf", protocol.Higher, 3, map[string][]float64{"ig": sparse, "random": zero}))
	rk, _ = d.Confidence.Ranking("d", "ROAD")
	if p := rk.Pairs[0]; p.P != 0.125 || !p.PExact || p.Differ {
		t.Errorf("4 of 1200 differ: %+v; want p 0.125, exact, not told apart", p)
	}
}

// float32s is x as the float32 a record keeps, back in float64.
func float32s(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(float32(v))
	}
	return out
}

// Twenty inputs of skewed scores (a sensitivity's, say) are too few for
// any interval to be known to cover: the interval says so in the CSV
// (few_inputs), REPORT.md and the summary. The flag reads the score's
// skewness across the run's other methods (package stats: a series' own
// 20 values are too few to tell it), so that a method whose 20 values
// happen to look plain is flagged beside a skewed one, and the skewed
// one too; twenty plain values beside plain ones are not flagged.
func TestFewInputsAreFlaggedWhereTheyShow(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	skewed, plain, plain2 := make([]float64, 20), make([]float64, 20), make([]float64, 20)
	for i := range skewed {
		skewed[i] = math.Exp(2 * r.NormFloat64())
		plain[i] = 1 + 0.1*r.NormFloat64()
		plain2[i] = 1 + 0.1*r.NormFloat64()
	}
	flags := func(recs []store.Record) (Diagnostics, map[string]bool) {
		d := Diagnose(recs)
		rk, ok := d.Confidence.Ranking("d", "MaxSensitivity")
		if !ok {
			t.Fatalf("no ranking: %+v", d.Confidence)
		}
		few := map[string]bool{}
		for _, m := range rk.Methods {
			few[m.Method] = m.CI.Few
		}
		return d, few
	}
	if _, few := flags(unitRecordsOf("MaxSensitivity", "max_sensitivity", protocol.Lower, 0, map[string][]float64{"gradient": plain2, "ig": plain})); few["gradient"] || few["ig"] {
		t.Errorf("plain scores beside plain ones: flags %v; want none", few)
	}
	recs := unitRecordsOf("MaxSensitivity", "max_sensitivity", protocol.Lower, 0, map[string][]float64{"gradient": skewed, "ig": plain})
	d, few := flags(recs)
	if !few["gradient"] || !few["ig"] {
		t.Fatalf("flags %v; want both: the run's score is skewed", few)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, "run", recs, d.Confidence); err != nil {
		t.Fatal(err)
	}
	rows, _ := csv.NewReader(&buf).ReadAll()
	for _, row := range rows[1:] {
		if row[7] == "max_sensitivity" && row[14] != strconv.FormatBool(few[row[3]]) {
			t.Errorf("CSV row %v: few_inputs %q, want %v", row, row[14], few[row[3]])
		}
	}
	if md := Markdown("t", recs, d, Left{}); !strings.Contains(md, "] ("+FewInputs+") |") {
		t.Errorf("REPORT.md does not flag the interval:\n%s", md)
	}
	if s := Summary(recs, d); !strings.Contains(s, "‡") || !strings.Contains(flat(s), "‡ "+FewInputs) {
		t.Errorf("summary does not flag the interval:\n%s", s)
	}
}

// A curve's points keep their band inside the score's range: an accuracy
// of 49 or 50 of 50 inputs gets the Agresti–Coull interval — below 1, and
// not the zero width of 50 of 50 — where ± 1.96·s.d./√n passed 1 (9 of
// goar-synthetic's 165 points did).
func TestCurvePointsStayInTheirRange(t *testing.T) {
	const n = 50
	sd := func(k int) float64 { p := float64(k) / n; return math.Sqrt(n * p * (1 - p) / (n - 1)) }
	res := &protocol.Result{Protocol: "ROAR", Method: "ig", Config: map[string]any{},
		Curves:  []protocol.Curve{{Name: "accuracy", X: protocol.Values{0.1, 0.5}, Y: protocol.Values{49.0 / n, 1}, SD: protocol.Values{sd(49), sd(50)}, N: n}},
		Scalars: []protocol.Scalar{{Name: "mean_accuracy", Value: 0.99, Better: protocol.Lower}}}
	recs := []store.Record{{Dataset: "d", Model: "m", Method: "ig", Protocol: "ROAR", Seed: 1, Result: res}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, "run", recs, Confident(recs, ConfidenceOptions{})); err != nil {
		t.Fatal(err)
	}
	rows, _ := csv.NewReader(&buf).ReadAll()
	for _, row := range rows[1:] {
		if row[7] != "accuracy" {
			continue
		}
		lo, _ := strconv.ParseFloat(row[10], 64)
		hi, _ := strconv.ParseFloat(row[11], 64)
		y, _ := strconv.ParseFloat(row[9], 64)
		iv := stats.Bootstrap{}.Mean([][]float64{proportion(int(math.Round(y*n)), n)})
		if !(lo >= 0 && hi <= 1 && lo < y && y <= hi) || !near(lo, iv.Lo) || !near(hi, iv.Hi) {
			t.Errorf("accuracy %v of %d: band [%v, %v]; want Agresti–Coull's [%v, %v]", y, n, lo, hi, iv.Lo, iv.Hi)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

// A p-value says how it was had: exact, or drawn with its Monte-Carlo
// standard error (none below what the draws resolve).
func TestPWordsSayHowThePWasHad(t *testing.T) {
	for _, tc := range []struct {
		p     float64
		exact bool
		err   float64
		want  string
	}{
		{0.0489, true, 0, "= 0.049 (exact)"},
		{0.125, true, 0, "= 0.125 (exact)"},
		{0.0516, false, 0.0012, "= 0.052 ± 0.001 (Monte Carlo)"},
		{1.0 / 2001, false, 0.0005, "< 0.001 (Monte Carlo)"},
		{math.NaN(), false, 0, "—"},
	} {
		if got := pWords(tc.p, tc.exact, tc.err); got != tc.want {
			t.Errorf("pWords(%v, %v, %v) = %q; want %q", tc.p, tc.exact, tc.err, got, tc.want)
		}
	}
}
