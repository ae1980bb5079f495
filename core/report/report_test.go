package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"faithlab/core/data"
	"faithlab/core/protocol"
	"faithlab/core/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// records is a small fixed campaign: three methods under ROAR (with mask
// TV) and Deletion, with known numbers.
func records() []store.Record {
	rates := protocol.Values{0.1, 0.3, 0.5, 0.7, 0.9}
	var recs []store.Record
	for m, name := range []string{"gradient", "ig", "random"} {
		acc := make(protocol.Values, len(rates))
		tv := make(protocol.Values, len(rates))
		for i, r := range rates {
			acc[i] = 0.9 - r*0.4*float64(2-m) - 0.02*float64(m)
			tv[i] = 10 + 30*r + 5*float64(m)
		}
		recs = append(recs, store.Record{Dataset: "fashion-mnist", Model: "goar-cnn", Method: name, Protocol: "ROAR", Seed: 1,
			Result: &protocol.Result{Protocol: "ROAR", Method: name,
				Curves:  []protocol.Curve{{Name: "accuracy", X: rates, Y: acc}, {Name: "mask_tv", X: rates, Y: tv}},
				Scalars: []protocol.Scalar{{Name: "mean_accuracy", Value: mean(acc), Better: protocol.Lower}}}})
		x := protocol.Values{0, 0.25, 0.5, 0.75, 1}
		morf := protocol.Values{0.9, 0.6 + 0.1*float64(m), 0.4 + 0.1*float64(m), 0.2, 0.1}
		lerf := protocol.Values{0.9, 0.88, 0.8 - 0.1*float64(m), 0.5, 0.1}
		recs = append(recs, store.Record{Dataset: "fashion-mnist", Model: "goar-cnn", Method: name, Protocol: "Deletion", Seed: 1,
			Result: &protocol.Result{Protocol: "Deletion", Method: name,
				Curves: []protocol.Curve{{Name: "morf", X: x, Y: morf}, {Name: "lerf", X: x, Y: lerf}},
				Scalars: []protocol.Scalar{{Name: "tau_morf", Value: 1 - 0.1*float64(m), Better: protocol.Higher},
					{Name: "tau_lerf", Value: 0.8, Better: protocol.Higher}, {Name: "undefined", Value: math.NaN()}}}})
	}
	recs = append(recs, store.Record{Dataset: "fashion-mnist", Method: "broken", Protocol: "ROAR", Error: "failed"})
	return recs
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func golden(t *testing.T, name string, got []byte) []byte {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	return want
}

func TestCSVGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, "abc123", records(), Confident(records(), ConfidenceOptions{})); err != nil {
		t.Fatal(err)
	}
	if want := golden(t, "results.csv", buf.Bytes()); !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("CSV differs from testdata/results.csv:\n%s", buf.String())
	}
	rows, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// 3 methods × (ROAR: 1 scalar + 2×5 points; Deletion: 3 scalars + 2×5 points); no row for the failure.
	if len(rows) != 1+3*(11+13) || strings.Join(rows[0], ",") != strings.Join(CSVHeader, ",") {
		t.Errorf("%d rows, header %v", len(rows), rows[0])
	}
}

// withSeeds is the records again under a second seed, a little apart, so
// that the figures show means with error bars.
func withSeeds(recs []store.Record) []store.Record {
	out := slices.Clone(recs)
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		res := *r.Result
		res.Curves = nil
		for _, c := range r.Result.Curves {
			y := slicesClone(c.Y)
			for i := range y {
				y[i] += 0.03 * float64(i%3-1)
			}
			c.Y = y
			res.Curves = append(res.Curves, c)
		}
		res.Scalars = slices.Clone(res.Scalars)
		for i := range res.Scalars {
			res.Scalars[i].Value -= 0.05
		}
		r.Seed, r.Result = 2, &res
		out = append(out, r)
	}
	return out
}

// The figures match their golden images (pixels within a small tolerance,
// so that a rasteriser's rounding does not fail the test), and render as
// SVG and PDF: a figure per curve the protocols describe, accuracy
// against mask TV, and the scalars no curve shows.
func TestFiguresGolden(t *testing.T) {
	recs := withSeeds(records())
	figs, err := Figures(recs, Confident(recs, ConfidenceOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	want := "fashion-mnist_roar_accuracy fashion-mnist_roar_accuracy_vs_tv fashion-mnist_roar_mask_tv " +
		"fashion-mnist_deletion_morf fashion-mnist_deletion_lerf fashion-mnist_deletion_tau"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("figures %s, want %s", got, want)
	}
	for _, f := range figs {
		matchGolden(t, f)
		var buf bytes.Buffer
		for format, magic := range map[string]string{"svg": "<?xml", "pdf": "%PDF"} {
			buf.Reset()
			if err := Render(&buf, f, format, 0); err != nil || !bytes.HasPrefix(buf.Bytes(), []byte(magic)) {
				t.Errorf("%s as %s: %v, starts %q", f.Name, format, err, buf.Bytes()[:min(8, buf.Len())])
			}
		}
	}
	if err := Render(&bytes.Buffer{}, figs[0], "gif", 0); err == nil {
		t.Error("unknown format accepted")
	}
}

// matchGolden renders f as PNG at 100 dpi and compares it with its golden
// image.
func matchGolden(t *testing.T, f Figure) {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, f, "png", 100); err != nil {
		t.Fatal(err)
	}
	g := golden(t, f.Name+".png", buf.Bytes())
	if d := pixelDiff(t, buf.Bytes(), g); d > 0.002 {
		t.Errorf("%s: %.2f%% of pixels differ from testdata/%s.png", f.Name, 100*d, f.Name)
	}
}

func pixelDiff(t *testing.T, a, b []byte) float64 {
	t.Helper()
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if ia.Bounds() != ib.Bounds() {
		return 1
	}
	var diff int
	r := ia.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if far(ia, ib, x, y) {
				diff++
			}
		}
	}
	return float64(diff) / float64(r.Dx()*r.Dy())
}

func far(a, b image.Image, x, y int) bool {
	r1, g1, b1, _ := a.At(x, y).RGBA()
	r2, g2, b2, _ := b.At(x, y).RGBA()
	d := func(p, q uint32) bool { return p > q+0x1000 || q > p+0x1000 }
	return d(r1, r2) || d(g1, g2) || d(b1, b2)
}

// The DPI paper's comparison: smoothed maps against the plain ones, point
// by point.
func TestDiagnosePostComparison(t *testing.T) {
	recs := records()
	for _, r := range records() {
		if r.Result == nil || r.Protocol != "ROAR" {
			continue
		}
		res := *r.Result
		acc := slicesClone(res.Curves[0].Y)
		for i := range acc {
			if i%2 == 0 {
				acc[i] -= 0.05 // lower at 3 of the 5 rates
			}
		}
		res.Curves = []protocol.Curve{{Name: "accuracy", X: res.Curves[0].X, Y: acc}, res.Curves[1]}
		r.Post, r.Result = "gaussian:1", &res
		recs = append(recs, r)
	}
	d := Diagnose(recs)
	// ROAR: lower is better.
	if len(d.Post) != 1 || d.Post[0].Better != 9 || d.Post[0].Total != 15 || d.Post[0].Post != "gaussian:1" {
		t.Errorf("post comparisons %+v, want 9 better of 15", d.Post)
	}
	if len(d.TVFits) == 0 || len(d.Summary()) < 2 {
		t.Errorf("fits %d, summary %q", len(d.TVFits), d.Summary())
	}
}

func slicesClone(v protocol.Values) protocol.Values { return append(protocol.Values(nil), v...) }

// putSample stores a sample's values in the cache as a protocol run does
// and returns the sample with its key.
func putSample(t *testing.T, cache *store.Cache, name, kind string, shape []int, vals []float32) protocol.Sample {
	t.Helper()
	var buf bytes.Buffer
	if err := data.EncodeNPY(&buf, shape, vals); err != nil {
		t.Fatal(err)
	}
	key := store.Key("sample", name)
	if err := cache.Put(key, ".npy", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return protocol.Sample{Name: name, Kind: kind, Shape: shape, Key: key}
}

// TestSampleFiguresGolden draws a record's samples, read from the second
// of two caches, as one grid — the originals, their maps, then the
// perturbed images — and the maps on their own with an overlay, and counts
// a sample no cache holds.
func TestSampleFiguresGolden(t *testing.T) {
	empty, cache := &store.Cache{Dir: t.TempDir()}, &store.Cache{Dir: t.TempDir()}
	put := func(name, kind string, shape []int, vals []float32) protocol.Sample {
		return putSample(t, cache, name, kind, shape, vals)
	}
	// Four 8×8 ramps; their maps are signed, largest along the diagonal.
	ramp := func(k, x, y int) float32 { return float32(x+y+k) / 17 }
	orig, maps := make([]float32, 4*64), make([]float32, 4*64)
	for k := range 4 {
		for y := range 8 {
			for x := range 8 {
				orig[k*64+y*8+x] = ramp(k, x, y)
				maps[k*64+y*8+x] = float32(x-y) * float32(k+1) / 8
			}
		}
	}
	samples := []protocol.Sample{put("original test", protocol.Original, []int{4, 1, 8, 8}, orig),
		put("map test", protocol.AttributionMap, []int{4, 1, 8, 8}, maps)}
	for _, rate := range []int{25, 50, 75} {
		// The first rate% of their rows zeroed.
		vals := slices.Clone(orig)
		for k := range 4 {
			for y := range 8 * rate / 100 {
				for x := range 8 {
					vals[k*64+y*8+x] = 0
				}
			}
		}
		samples = append(samples, put(fmt.Sprintf("ROAR %d%% test", rate), "", []int{4, 1, 8, 8}, vals))
	}
	samples = append(samples, protocol.Sample{Name: "ROAR 90% test", Shape: []int{4, 1, 8, 8}, Key: store.Key("not stored")})
	recs := []store.Record{{Dataset: "fashion-mnist", Method: "smoothgrad{samples=15,noise_frac=0.15}", Post: "abs", Protocol: "ROAR",
		Result: &protocol.Result{Protocol: "ROAR", Method: "smoothgrad", Samples: samples}}}
	figs, missing, err := SampleFigures(recs, empty, cache)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); missing != 1 ||
		got != "fashion-mnist_roar_smoothgrad-s15-nf0.15-abs_samples fashion-mnist_maps_smoothgrad-s15-nf0.15-abs" {
		t.Fatalf("figures %s, %d missing", got, missing)
	}
	for _, f := range figs {
		matchGolden(t, f)
	}
}

// TestShiftBarsGolden draws the OOD and image-quality bars of protocols'
// perturbed images, one group per protocol and order present.
func TestShiftBarsGolden(t *testing.T) {
	var recs []store.Record
	for m, name := range []string{"gradient", "ig", "random"} {
		f := float64(m)
		recs = append(recs,
			store.Record{Dataset: "fashion-mnist", Method: name, Protocol: "ROAR", Result: &protocol.Result{Protocol: "ROAR",
				Scalars: []protocol.Scalar{{Name: "ood_auroc", Value: 0.9 - 0.05*f}, {Name: "psnr", Value: 12 + f}, {Name: "ssim", Value: 0.5}}}},
			store.Record{Dataset: "fashion-mnist", Method: name, Protocol: "ROAD", Result: &protocol.Result{Protocol: "ROAD",
				Scalars: []protocol.Scalar{{Name: "ood_auroc_morf", Value: 0.6}, {Name: "ood_auroc_lerf", Value: 0.55 + 0.02*f},
					{Name: "psnr_morf", Value: 20}, {Name: "psnr_lerf", Value: 22}, {Name: "ssim_morf", Value: 0.8}, {Name: "ssim_lerf", Value: 0.85}}}})
	}
	figs, err := Figures(recs, Confident(recs, ConfidenceOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != "fashion-mnist_ood_auroc fashion-mnist_psnr fashion-mnist_ssim" {
		t.Fatalf("figures %s", got)
	}
	matchGolden(t, figs[0])
}

// R² is left out where it would mean nothing: accuracies that do not vary
// (today's "mask TV explains 100 %" of a constant), or fewer than three
// points; the diagnostic says why instead.
func TestDiagnoseNoR2WithoutVariance(t *testing.T) {
	roar := func(method string, acc, tv protocol.Values) store.Record {
		rates := protocol.Values{0.1, 0.5, 0.9}[:len(acc)]
		return store.Record{Dataset: "d", Method: method, Protocol: "ROAR", Result: &protocol.Result{Protocol: "ROAR", Method: method,
			Curves: []protocol.Curve{{Name: "accuracy", X: rates, Y: acc}, {Name: "mask_tv", X: rates, Y: tv}}}}
	}
	for _, tc := range []struct {
		name string
		recs []store.Record
		want string
	}{
		{"constant accuracy", []store.Record{roar("g", protocol.Values{0.1, 0.1, 0.1}, protocol.Values{1, 2, 3})}, "all y equal 0.1"},
		{"two points", []store.Record{roar("g", protocol.Values{0.5, 0.3}, protocol.Values{1, 2})}, "at least three"},
	} {
		d := Diagnose(tc.recs)
		if len(d.TVFits) != 1 || d.TVFits[0].Fit != nil || !strings.Contains(d.TVFits[0].Explained, tc.want) {
			t.Fatalf("%s: %+v", tc.name, d.TVFits)
		}
		b, err := json.Marshal(d)
		if err != nil || strings.Contains(string(b), "r2") || strings.Contains(string(b), "explains") {
			t.Errorf("%s: %s (%v)", tc.name, b, err)
		}
		if s := d.Summary(); len(s) != 1 || !strings.Contains(s[0], tc.want) {
			t.Errorf("%s: summary %q", tc.name, s)
		}
	}
	d := Diagnose(records())
	if len(d.TVFits) != 1 || d.TVFits[0].Fit == nil || !strings.Contains(d.TVFits[0].Explained, "explains") {
		t.Errorf("a varying accuracy has no fit: %+v", d.TVFits)
	}
}

// The summary is a table of each protocol's headline score per method,
// with its direction, the best marked.
func TestSummaryGolden(t *testing.T) {
	recs := withSeeds(records())
	for i, r := range recs {
		if r.Protocol == "Deletion" && r.Result != nil {
			res := *r.Result
			res.Scalars = append(slices.Clone(res.Scalars), protocol.Scalar{Name: "lerf_minus_morf", Value: 0.1 * float64(i%3), Better: protocol.Higher})
			recs[i].Result = &res
		}
	}
	got := Summary(recs, Diagnose(recs))
	if want := golden(t, "summary.txt", []byte(got)); got != string(want) {
		t.Errorf("summary differs from testdata/summary.txt:\n%s", got)
	}
	if Summary(nil, Diagnostics{}) != "" {
		t.Error("a summary of nothing")
	}
}

func TestMethodLabels(t *testing.T) {
	for _, tc := range []struct {
		label, display, inline, slug string
	}{
		{"gradient", "gradient", "gradient", "gradient"},
		{"ig+abs", "ig + abs", "ig + abs", "ig-abs"},
		{"smoothgrad{samples=15,noise_frac=0.15}+abs,gaussian:1", "smoothgrad + abs, gaussian:1\nsamples=15, noise_frac=0.15",
			"smoothgrad + abs, gaussian:1 (samples=15, noise_frac=0.15)", "smoothgrad-s15-nf0.15-abs-gaussian1"},
		{"trace-sa{objective=lemo,iterations=5000,grid=7}", "trace-sa\nobjective=lemo\niterations=5000, grid=7",
			"trace-sa (objective=lemo, iterations=5000, grid=7)", "trace-sa-olemo-i5000-g7"},
		{"kernelshap{baseline=a/b c}", "kernelshap\nbaseline=a/b c", "kernelshap (baseline=a/b c)", "kernelshap-ba_b_c"},
	} {
		if d, i, s := display(tc.label), inline(tc.label), slug(tc.label); d != tc.display || i != tc.inline || s != tc.slug {
			t.Errorf("%s: %q, %q, %q; want %q, %q, %q", tc.label, d, i, s, tc.display, tc.inline, tc.slug)
		}
	}
}

// Ticks are round numbers about five to an axis, all with the decimals
// their step needs ("250", never "250.00"), and no "-0".
func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 1, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{0, 250, "0 50 100 150 200 250"},
		{-1, 1, "-1.0 -0.5 0.0 0.5 1.0"},
		{10, 25, "10 15 20 25"},
		{0, 0.003, "0.000 0.001 0.002 0.003"},
		{0.1, 0.9, "0.2 0.4 0.6 0.8"},
		{-0.3, 0.2, "-0.3 -0.2 -0.1 0.0 0.1 0.2"},
	} {
		var labels []string
		for _, tk := range (niceTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tc.want {
			t.Errorf("[%g, %g]: %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// PDF figures carry their text in the fonts' code page: "—" and the
// arrows of "↓ better" once came out as "â€"" and "â†"".
func TestPDFTextIsInTheFontsCodePage(t *testing.T) {
	if got, want := cp1252("ROAR — fashion-mnist (↓ better), R² −0.5"), "ROAR \x97 fashion-mnist (lower is better), R\xb2 -0.5"; got != want {
		t.Errorf("cp1252 = %q, want %q", got, want)
	}
}

// TestTrajectoryFigureGolden draws the middle one of a record's sampler
// trajectories (FUD's in-painting at the middle ratio kept) as x_t and x̂₀
// rows per input at evenly spread steps, first and last included, beside
// the record's grid of samples, which the trajectories stay out of.
func TestTrajectoryFigureGolden(t *testing.T) {
	cache := &store.Cache{Dir: t.TempDir()}
	put := func(name, kind string, shape []int, vals []float32) protocol.Sample {
		return putSample(t, cache, name, kind, shape, vals)
	}
	const steps, n = 12, 2
	ramp := func(k, x, y int) float32 { return float32(x+y+3*k) / 20 }
	orig := make([]float32, n*64)
	for k := range n {
		for y := range 8 {
			for x := range 8 {
				orig[k*64+y*8+x] = ramp(k, x, y)
			}
		}
	}
	samples := []protocol.Sample{put("original test", protocol.Original, []int{n, 1, 8, 8}, orig),
		put("FUD 50% kept test", "", []int{n, 1, 8, 8}, orig)}
	for _, kept := range []int{90, 50, 10} {
		// x̂₀ sharpens into the ramp; x_t is the ramp under a checkerboard
		// of noise that fades step by step.
		var v []float32
		for s := range steps {
			noise := float32(steps-1-s) / float32(steps-1)
			for kind := range 2 {
				for k := range n {
					for y := range 8 {
						for x := range 8 {
							c := float32(1 - 2*((x+y)%2))
							if kind == 0 {
								v = append(v, ramp(k, x, y)+noise*c*float32(kept)/50)
							} else {
								v = append(v, ramp(k, x, y)*(1-noise/2))
							}
						}
					}
				}
			}
		}
		samples = append(samples, put(fmt.Sprintf("FUD %d%% kept trajectory", kept), protocol.Trajectory, []int{steps, 2, n, 1, 8, 8}, v))
	}
	recs := []store.Record{{Dataset: "fashion-mnist", Method: "ig", Protocol: "FUD",
		Result: &protocol.Result{Protocol: "FUD", Method: "ig", Samples: samples}}}
	figs, missing, err := SampleFigures(recs, cache)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); missing != 0 || got != "fashion-mnist_fud_ig_samples fashion-mnist_fud_ig_trajectory" {
		t.Fatalf("figures %s, %d missing", got, missing)
	}
	if title := figs[1].Plot.Title.Text; !strings.HasPrefix(title, "FUD 50% kept — fashion-mnist") || !strings.Contains(title, "10 of 12 steps") {
		t.Errorf("trajectory figure titled %q", title)
	}
	for _, f := range figs {
		matchGolden(t, f)
	}
}

// A retraining setting where no method's retrained models learned is
// flagged, every run of it: with the explained model's accuracy known, the
// best retrained model nearer chance than it; without, within the margin
// of chance. A setting where one method's models learned is not, even
// though another's sit at chance (its maps removed what models learn from:
// ROAR's best score); nor one whose chance is unknown, nor a protocol that
// retrains nothing.
func TestDiagnoseWeakRetraining(t *testing.T) {
	rec := func(dataset, protocolName, method string, chance, base float64, acc protocol.Values) store.Record {
		x := protocol.Values{0.1, 0.5, 0.9}
		return store.Record{Dataset: dataset, Method: method, Protocol: protocolName, Result: &protocol.Result{Protocol: protocolName, Method: method, Chance: chance, Base: base,
			Curves: []protocol.Curve{{Name: "accuracy", X: x, Y: acc}}, Scalars: []protocol.Scalar{{Name: "mean_accuracy", Value: (acc[0] + acc[1] + acc[2]) / 3, Better: protocol.Lower}}}}
	}
	recs := []store.Record{
		rec("d", "ROAR", "ig", 0.1, 0, protocol.Values{0.14, 0.12, 0.1}),      // within 0.05 of chance, base unknown
		rec("d", "ROAR", "random", 0.1, 0.9, protocol.Values{0.45, 0.3, 0.2}), // 0.45 < (0.1 + 0.9)/2: learned little
		rec("e", "ROAR", "ig", 0.1, 0.9, protocol.Values{0.12, 0.11, 0.1}),    // at chance ...
		rec("e", "ROAR", "random", 0.1, 0.9, protocol.Values{0.8, 0.6, 0.3}),  // ... where the retraining learns
		rec("f", "ROAR", "ig", 0.1, 0.9, protocol.Values{0.12, 0.11, 0.1}),    // at chance ...
		rec("f", "ROAR", "sobel", 0, 0.9, protocol.Values{0.1, 0.1, 0.1}),     // ... beside a run whose chance is unknown
		rec("d", "EvalX", "ig", 0.1, 0.9, protocol.Values{0.1, 0.1, 0.1}),     // the fixed proxy: not retrained per rate
	}
	d := Diagnose(recs)
	if len(d.Weak) != 2 || d.Weak[0].Dataset != "d" || d.Weak[0].Method != "ig" || d.Weak[0].Best != 0.14 || d.Weak[1].Method != "random" || d.Weak[1].Base != 0.9 {
		t.Fatalf("weak: %+v, want d's ROAR ig and random", d.Weak)
	}
	if len(d.AtChance) != 2 || d.AtChance[0].Dataset != "e" || d.AtChance[0].Method != "ig" || d.AtChance[1].Dataset != "f" {
		t.Errorf("at chance beside a retraining that learned (or may have): %+v, want e's and f's ig", d.AtChance)
	}
	if s := d.Summary(); len(s) < 2 || !strings.Contains(s[1], "note: ROAR accuracy on e, ig: its retrained models stayed near chance (best 0.120") || !strings.Contains(s[0], "ROAR accuracy on d: no method's retrained models learned — the best, random's, scored 0.450, nearer chance (0.100, always the most common class) than the explained model's 0.900") {
		t.Errorf("summary %q", s)
	}
	// The headline table marks d's and ranks e's: IG's ROAR mean (0.110)
	// is e's lowest and its best.
	table := Summary(recs, Diagnose(recs))
	for _, want := range []string{"ig           0.120 !   0.100", "random       0.317 !", "learned in this setting", "ig     0.110 *"} {
		if !strings.Contains(flat(table), flat(want)) {
			t.Errorf("summary table lacks %q:\n%s", want, table)
		}
	}
}

// An unknown figure format is refused before any figure is drawn or any
// folder made.
func TestUnknownFigureFormatRefusedBeforeAnyFile(t *testing.T) {
	if err := CheckFormats("png", "svg", "pdf"); err != nil {
		t.Errorf("png, svg, pdf: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "figs")
	files, err := Save(dir, "", []Figure{{Name: "f", Plot: newPlot("f")}}, "png", "jpg")
	if err == nil || !strings.Contains(err.Error(), `"jpg"`) || len(files) != 0 {
		t.Errorf("png and jpg: %v, files %v", err, files)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the refused export made its folder")
	}
}

func TestNumbersAndCountsAsPeopleWriteThem(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{number(-0.0001), "0.000"}, {number(-0.0006), "-0.001"}, {number(0.3118), "0.312"}, {number(-12.34), "-12.3"},
		{Decimals(-0.004, 2), "0.00"}, {Decimals(-0.006, 2), "-0.01"}, {Decimals(0, 3), "0.000"},
		{Count(1, "seed"), "1 seed"}, {Count(3, "seed"), "3 seeds"}, {Count(0, "input"), "0 inputs"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// An explained model nearer chance than a perfect score is flagged once
// per dataset, seed and model, whatever the protocols; one that learned is
// not.
func TestDiagnoseWeakExplainedModel(t *testing.T) {
	rec := func(proto, method string, seed uint64, base float64) store.Record {
		return store.Record{Dataset: "d", Model: "m", Method: method, Protocol: proto, Seed: seed,
			Result: &protocol.Result{Protocol: proto, Method: method, Chance: 0.1, Base: base}}
	}
	d := Diagnose([]store.Record{rec("Deletion", "gradient", 1, 0.31), rec("Deletion", "ig", 1, 0.31), rec("ROAR", "ig", 1, 0.31), rec("Deletion", "ig", 2, 0.89)})
	if len(d.WeakModels) != 1 || d.WeakModels[0].Seed != 1 || d.WeakModels[0].Accuracy != 0.31 || d.WeakModels[0].Chance != 0.1 {
		t.Fatalf("weak models %+v, want seed 1's alone", d.WeakModels)
	}
	if s := d.Summary(); len(s) == 0 || !strings.Contains(s[0], "the explained model on d (seed 1) scored 0.310 on the test set, nearer chance (0.100") {
		t.Errorf("summary %q", s)
	}
}

// A picture holds its pixels at their own size until it is drawn: the
// dpi paper run's 405 sample grids, each enlarged eight times across and
// down when made, held 8 GB until they were written. Fifty grids of ten
// rows of eight 28×28 images hold their 0.2 MB each, not the 14 MB the
// enlarged pictures take.
func TestPicturesAreEnlargedOnlyWhileDrawn(t *testing.T) {
	grey := func(k, x, y int) color.RGBA { v := uint8(x*9 + y); return color.RGBA{v, v, v, 255} }
	rows := make([]pictureRow, 10)
	for r := range rows {
		rows[r] = pictureRow{label: fmt.Sprint(r), n: 8, paint: grey}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	held := make([]*plot.Plot, 50)
	for i := range held {
		held[i], _ = picturePlot("t", rows, 28, 28)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := float64(after.HeapAlloc) - float64(before.HeapAlloc); grew > 50*1<<20 {
		t.Errorf("50 pictures hold %.0f MB", grew/(1<<20))
	}
	runtime.KeepAlive(held)
}
