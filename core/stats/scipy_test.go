package stats

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"testing"
)

// python is Debian's Python with python3-scipy (1.10), which make deps
// installs.
const python = "/usr/bin/python3"

// scipyScript answers a list of cases read as JSON from stdin with one
// number or pair each: the permutation p-values by
// scipy.stats.permutation_test (paired samples: the sign-flip test;
// pairings: Kendall's W against raters ranking at random), BCa intervals
// by scipy.stats.bootstrap, and the studentized bootstrap interval by a
// plain NumPy rendering of Efron & Tibshirani's §12.5.
const scipyScript = `
import json, sys
import numpy as np
from scipy import stats

def kendall_w(*raters, axis=-1):
    r = np.stack([stats.rankdata(x, axis=-1) for x in raters])  # raters × … × items
    m, n = r.shape[0], r.shape[-1]
    ties = 0
    for x in r:
        s = np.sort(x, axis=-1)
        t = np.zeros(s.shape[:-1])
        for v in np.unique(s):
            c = (s == v).sum(axis=-1)
            t = t + c**3 - c
        ties = ties + t
    R = r.sum(axis=0)
    S = ((R - m * (n + 1) / 2) ** 2).sum(axis=-1)
    return 12 * S / (m**2 * (n**3 - n) - m * ties)

out = []
for c in json.load(sys.stdin):
    kind = c["kind"]
    if kind == "signflip":
        x = np.array(c["x"])
        res = stats.permutation_test((x, np.zeros_like(x)), lambda a, b, axis: np.mean(a - b, axis=axis),
            permutation_type="samples", vectorized=True, alternative="two-sided",
            n_resamples=np.inf if c.get("exact") else 19999, random_state=1)
        out.append([res.pvalue])
    elif kind == "kendallw":
        res = stats.permutation_test([np.array(r) for r in c["scores"]], kendall_w,
            permutation_type="pairings", vectorized=True, alternative="greater", n_resamples=np.inf)
        out.append([res.statistic, res.pvalue])
    elif kind == "bca":
        x = np.array(c["x"])
        ci = stats.bootstrap((x,), np.mean, method="BCa", n_resamples=c["resamples"], random_state=1).confidence_interval
        out.append([ci.low, ci.high])
    elif kind == "studentized":
        x = np.array(c["x"]); n = len(x); rng = np.random.default_rng(1)
        m, se = x.mean(), x.std(ddof=1) / np.sqrt(n)
        xs = x[rng.integers(0, n, (c["resamples"], n))]
        t = (xs.mean(axis=1) - m) / (xs.std(axis=1, ddof=1) / np.sqrt(n))
        q = np.quantile(t, [0.025, 0.975])
        out.append([m - q[1] * se, m - q[0] * se])
json.dump(out, sys.stdout)
`

// scipyCase is one question for SciPy.
type scipyCase struct {
	Kind      string      `json:"kind"`
	X         []float64   `json:"x,omitempty"`
	Exact     bool        `json:"exact,omitempty"`
	Scores    [][]float64 `json:"scores,omitempty"`
	Resamples int         `json:"resamples,omitempty"`
}

// askSciPy runs the script on the cases, skipping the test without SciPy.
func askSciPy(t *testing.T, cases []scipyCase) [][]float64 {
	t.Helper()
	if err := exec.Command(python, "-c", "import scipy, numpy").Run(); err != nil {
		t.Skipf("%s cannot import scipy (%v): install Debian's python3-scipy (make deps does)", python, err)
	}
	in, _ := json.Marshal(cases)
	cmd := exec.Command(python, "-c", scipyScript)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("scipy: %v\n%s", err, stderr.String())
	}
	var out [][]float64
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != len(cases) {
		t.Fatalf("scipy answered %s (%v)", raw, err)
	}
	return out
}

// SciPy 1.10's permutation_test gives the sign-flip test's p-values —
// exactly where both enumerate, within Monte-Carlo error where both draw
// — and Kendall's W with its exact permutation p.
func TestPValuesAgreeWithSciPy(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	shifted := make([]float64, 60) // p near 0.01: drawn by both
	for i := range shifted {
		shifted[i] = 0.35 + r.NormFloat64()
	}
	sparse := make([]float64, 16)
	for i := range 4 {
		sparse[3*i] = 0.5
	}
	flips := []struct {
		name string
		x    []float64
		p    float64 // by hand where known, else −1
	}{
		// Hollander & Wolfe's depression scores (TestWilcoxonExactHandWorked).
		{"Hollander-Wolfe", []float64{0.952, -0.147, 1.022, 0.43, 0.62, 0.59, 0.49, -0.08, 0.01}, -1},
		{"4 of 16 differ, one way", sparse, 0.125},
		// Counts on a grid: ties and zeros.
		{"grid counts", []float64{2, 1, 0, -1, 2, 3, 1, 1, 0, 2, -2, 1, 3, 1}, -1},
		{"a shift of 60, drawn", shifted, -1},
	}
	var cases []scipyCase
	for _, f := range flips {
		cases = append(cases, scipyCase{Kind: "signflip", X: f.x, Exact: len(f.x) <= 16})
	}
	ws := [][][]float64{
		{{1, 2, 3, 4}, {2, 1, 3, 4}, {1, 3, 2, 4}},
		{{0.3, 0.1, 0.5, 0.2, 0.9}, {0.2, 0.3, 0.6, 0.1, 0.7}},
		{{1, 1, 2}, {3, 1, 2}, {1, 2, 3}, {2, 1, 3}}, // a rater with a tie
	}
	for _, s := range ws {
		cases = append(cases, scipyCase{Kind: "kendallw", Scores: s})
	}
	out := askSciPy(t, cases)
	for k, f := range flips {
		got := SignFlip([][]float64{f.x}, [][]float64{make([]float64, len(f.x))}, 1, []float64{0.05, 0.01})
		want := out[k][0]
		tol := 1e-12
		if !got.Exact {
			tol = 4 * math.Hypot(got.Error, math.Sqrt(want*(1-want)/19999))
		}
		if !near(got.P, want, tol) || f.p >= 0 && !near(got.P, f.p, 1e-12) {
			t.Errorf("%s: sign-flip p %+v; SciPy %v (by hand %v)", f.name, got, want, f.p)
		} else {
			t.Logf("%s: p %.6g (exact %v), SciPy %.6g", f.name, got.P, got.Exact, want)
		}
	}
	for k, s := range ws {
		w, p := KendallW(s, 1, []float64{0.05})
		want := out[len(flips)+k]
		if !near(w, want[0], 1e-12) || !p.Exact || !near(p.P, want[1], 1e-12) {
			t.Errorf("Kendall's W of %v: %v, p %+v; SciPy %v, p %v", s, w, p, want[0], want[1])
		}
	}
}

// The two intervals whose hull a one-group score gets: BCa against
// scipy.stats.bootstrap(method="BCa"), the studentized one against a
// NumPy rendering, each of 20 000 resamples — different draws, so the
// ends agree to within a few per cent of the interval's width.
func TestIntervalsAgreeWithSciPy(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	skewed, normal := make([]float64, 40), make([]float64, 100)
	for i := range skewed {
		skewed[i] = math.Exp(r.NormFloat64())
	}
	for i := range normal {
		normal[i] = 0.5 + 0.1*r.NormFloat64()
	}
	const resamples = 20000
	sets := [][]float64{skewed, normal}
	var cases []scipyCase
	for _, x := range sets {
		cases = append(cases, scipyCase{Kind: "bca", X: x, Resamples: resamples}, scipyCase{Kind: "studentized", X: x, Resamples: resamples})
	}
	out := askSciPy(t, cases)
	for k, x := range sets {
		c := newCentred(x)
		dev, tt := make([]float64, resamples), make([]float64, resamples)
		c.draws(newRNG(1), dev, tt)
		bLo, bHi := c.bca(dev, 0.95)
		tLo, tHi := c.studentized(tt, 0.95)
		for _, e := range []struct {
			name           string
			lo, hi         float64
			wantLo, wantHi float64
		}{
			{"BCa", bLo, bHi, out[2*k][0], out[2*k][1]},
			{"studentized", tLo, tHi, out[2*k+1][0], out[2*k+1][1]},
		} {
			tol := 0.03 * (e.wantHi - e.wantLo)
			if !near(e.lo, e.wantLo, tol) || !near(e.hi, e.wantHi, tol) {
				t.Errorf("set %d, %s: [%v, %v]; SciPy [%v, %v]", k, e.name, e.lo, e.hi, e.wantLo, e.wantHi)
			} else {
				t.Logf("set %d, %s: [%.5g, %.5g]; SciPy [%.5g, %.5g]", k, e.name, e.lo, e.hi, e.wantLo, e.wantHi)
			}
		}
	}
}
