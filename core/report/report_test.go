package report

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if err := WriteCSV(&buf, "abc123", records()); err != nil {
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

// The figures match their golden images (pixels within a small tolerance,
// so that a rasteriser's rounding does not fail the test), and render as
// SVG and PDF.
func TestFiguresGolden(t *testing.T) {
	figs, err := Figures(records())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	want := "fashion-mnist_roar_accuracy fashion-mnist_deletion_morf fashion-mnist_deletion_lerf fashion-mnist_deletion_tau fashion-mnist_roar_accuracy_vs_tv"
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
	if len(d.Post) != 1 || d.Post[0].Lower != 9 || d.Post[0].Total != 15 || d.Post[0].Post != "gaussian:1" {
		t.Errorf("post comparisons %+v, want 9 lower of 15", d.Post)
	}
	if len(d.TVFits) == 0 || len(d.Summary()) < 2 {
		t.Errorf("fits %d, summary %q", len(d.TVFits), d.Summary())
	}
}

func slicesClone(v protocol.Values) protocol.Values { return append(protocol.Values(nil), v...) }

// TestSampleFiguresGolden draws a record's perturbed samples, read from the
// second of two caches, as one grid, and counts a sample no cache holds.
func TestSampleFiguresGolden(t *testing.T) {
	empty, cache := &store.Cache{Dir: t.TempDir()}, &store.Cache{Dir: t.TempDir()}
	var samples []protocol.Sample
	for r, rate := range []int{25, 50, 75} {
		// Four 8×8 ramps with the first rate% of their rows zeroed.
		vals := make([]float32, 4*64)
		for k := range 4 {
			for y := range 8 {
				for x := range 8 {
					if y >= 8*rate/100 {
						vals[k*64+y*8+x] = float32(x+y+k) / 17
					}
				}
			}
		}
		var buf bytes.Buffer
		if err := data.EncodeNPY(&buf, []int{4, 1, 8, 8}, vals); err != nil {
			t.Fatal(err)
		}
		key := store.Key("sample", r)
		if err := cache.Put(key, ".npy", buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		samples = append(samples, protocol.Sample{Name: fmt.Sprintf("ROAR %d%% test", rate), Shape: []int{4, 1, 8, 8}, Key: key})
	}
	samples = append(samples, protocol.Sample{Name: "ROAR 90% test", Shape: []int{4, 1, 8, 8}, Key: store.Key("not stored")})
	recs := []store.Record{{Dataset: "fashion-mnist", Method: "gradient", Protocol: "ROAR",
		Result: &protocol.Result{Protocol: "ROAR", Method: "gradient", Samples: samples}}}
	figs, missing, err := SampleFigures(recs, empty, cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 1 || missing != 1 || figs[0].Name != "fashion-mnist_roar_gradient_samples" {
		t.Fatalf("%d figures (%v), %d missing", len(figs), figs, missing)
	}
	matchGolden(t, figs[0])
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
	figs, err := Figures(recs)
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
