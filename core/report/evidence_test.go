package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/protocol"
	"faithlab/core/store"
)

// withSamples keeps, for every record, the first 8 inputs (4×4 grey
// images) untouched, their maps and three perturbations of them, each
// with the class a model predicts, in a cache.
func withSamples(t *testing.T, recs []store.Record, cache *store.Cache) {
	t.Helper()
	for _, r := range recs {
		put := func(sm protocol.Sample) protocol.Sample {
			var b bytes.Buffer
			if err := data.EncodeNPY(&b, sm.Shape, sm.Values); err != nil {
				t.Fatal(err)
			}
			sm.Key = store.Key("sample", r.Protocol, r.Method, sm.Name)
			if err := cache.Put(sm.Key, ".npy", b.Bytes()); err != nil {
				t.Fatal(err)
			}
			sm.Values = nil
			return sm
		}
		img := func(v float32) []float32 {
			x := make([]float32, 8*16)
			for i := range x {
				x[i] = v + float32(i%16)/16
			}
			return x
		}
		r.Result.Samples = []protocol.Sample{
			put(protocol.Sample{Name: "original test", Kind: protocol.Original, Shape: []int{8, 1, 4, 4}, Values: img(0), Predicted: strings.Split("a b c d e f g h", " ")}),
			put(protocol.Sample{Name: "map test", Kind: protocol.AttributionMap, Shape: []int{8, 1, 4, 4}, Values: img(-0.5)}),
		}
		for k, f := range []string{"10%", "50%", "90%"} {
			name := fmt.Sprintf("%s morf %s test", r.Protocol, f)
			r.Result.Samples = append(r.Result.Samples, put(protocol.Sample{Name: name, Shape: []int{8, 1, 4, 4}, Values: img(float32(-k)), Predicted: strings.Split("z z z z z z z z", " ")}))
			r.Result.Samples = append(r.Result.Samples, put(protocol.Sample{Name: strings.Replace(name, "morf", "lerf", 1), Shape: []int{8, 1, 4, 4}, Values: img(1)}))
		}
	}
}

// Where two admitted protocols contradict each other, the evidence figure
// shows the input of the first eight on which they part the most: the
// input, both methods' maps, and a row per protocol and method of the
// input as the protocol removed the most relevant pixels first, each
// image captioned with the step and the class predicted.
func TestEvidenceFigureShowsTheInputWhereProtocolsPart(t *testing.T) {
	del := shifted(map[string]float64{"ig": 0.3, "gradient": 0.2, "random": 0})
	irof := shifted(map[string]float64{"ig": 0.2, "gradient": 0.3, "random": 0})
	irof["ig"] = append([]float64(nil), irof["ig"]...)
	irof["ig"][5] -= 0.2 // input 5, among the first eight, the widest gap
	recs := append(withOOD(scoreRecords(t, "deletion", del), 0.6), scoreRecords(t, "irof", irof)...)
	cache := &store.Cache{Dir: t.TempDir()}
	withSamples(t, recs, cache)
	as := Diagnose(recs).Confidence.Trust
	if len(as) != 1 || as[0].Divergence == nil || as[0].Divergence.Shown != 5 {
		t.Fatalf("answers %+v", as)
	}
	figs, missing, err := EvidenceFigures(recs, as, cache)
	if err != nil || missing != 0 || len(figs) != 1 {
		t.Fatalf("%d figures, %d missing: %v", len(figs), missing, err)
	}
	f := figs[0]
	if !strings.HasSuffix(f.Name, "which_method_evidence") || !strings.Contains(f.Plot.Title.Text, "part on") {
		t.Errorf("figure %q titled %q", f.Name, f.Plot.Title.Text)
	}
	var parts []evidencePart
	for _, r := range recs {
		if r.Method != "random" {
			ss, _, err := loadSamples(r, []*store.Cache{cache})
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, evidencePart{r.Protocol, r.Method, ss})
		}
	}
	_, captions, _, err := evidenceFigure(as[0], as[0].Divergence, parts)
	if err != nil {
		t.Fatal(err)
	}
	// The input's own class, then three MoRF steps for each of four rows.
	if len(captions) != 1+4*3 || captions[0] != "→ f" || captions[1] != "10%\n→ z" {
		t.Errorf("captions %q", captions)
	}
	// Without the samples in a cache: no figure, each sample counted.
	figs, missing, err = EvidenceFigures(recs, as, &store.Cache{Dir: t.TempDir()})
	if err != nil || len(figs) != 0 || missing == 0 {
		t.Errorf("%d figures, %d missing: %v", len(figs), missing, err)
	}
}
