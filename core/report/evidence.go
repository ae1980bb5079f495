package report

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"faithlab/core/data"
	"faithlab/core/protocol"
	"faithlab/core/store"
)

// EvidenceFigures draws, for each answer whose admitted protocols
// contradict each other (Answer.Divergence), the evidence: the input on
// which two of them part the most among those whose images the run keeps
// — untouched, then each method's map, then for each of the two protocols
// and each of the two methods a row of the input as the protocol
// perturbed it, its steps left to right, each image captioned with what
// was done and the class the model predicts for it. Samples in no cache
// are counted in missing and their rows left out.
func EvidenceFigures(recs []store.Record, answers []Answer, caches ...*store.Cache) (figs []Figure, missing int, err error) {
	c := newCampaign(recs)
	for _, a := range answers {
		d := a.Divergence
		if d == nil || d.Shown < 0 {
			continue
		}
		var parts []evidencePart
		for _, setting := range []string{d.For, d.Other} {
			g := c.groupOf(a.Dataset, setting)
			if g == nil {
				continue
			}
			_, by := c.methodsOf(g.recs)
			for _, m := range []string{d.A, d.B} {
				if len(by[m]) == 0 || by[m][0].Result == nil {
					continue
				}
				ss, miss, err := loadSamples(by[m][0], caches)
				if err != nil {
					return nil, missing, err
				}
				missing += miss
				parts = append(parts, evidencePart{setting, m, ss})
			}
		}
		f, _, ok, err := evidenceFigure(a, d, parts)
		if err != nil {
			return nil, missing, fmt.Errorf("the evidence on %s: %w", a.Dataset, err)
		}
		if ok {
			f.Name, f.Group, f.Kind = c.name(EvidenceName(a.Dataset)), Compared, Samples
			figs = append(figs, f)
		}
	}
	return figs, missing, nil
}

// EvidenceName is the name of the evidence figure of an answer on the
// dataset.
func EvidenceName(dataset string) string { return fileName(dataset) + "_which_method_evidence" }

// loadSamples reads a record's samples' values from the caches.
func loadSamples(r store.Record, caches []*store.Cache) (out []protocol.Sample, missing int, err error) {
	for _, sm := range r.Result.Samples {
		b, path, err := Fetch(sm.Key, ".npy", caches)
		if err != nil {
			return nil, missing, err
		}
		if b == nil {
			missing++
			continue
		}
		a, err := data.ParseNPY(b)
		if err != nil {
			return nil, missing, fmt.Errorf("sample %s: %s: %w", sm.Name, path, err)
		}
		sm.Shape, sm.Values = a.Shape, a.Data
		out = append(out, sm)
	}
	return out, missing, nil
}

// evidenceSteps is how many of a protocol's perturbation steps the
// evidence shows.
const evidenceSteps = 5

// evidencePart is one protocol setting's samples of one method.
type evidencePart struct {
	setting, method string
	samples         []protocol.Sample
}

// evidenceFigure lays the evidence out, and returns the captions drawn
// (row by row); ok is false where the samples hold no images of the input
// shown.
func evidenceFigure(a Answer, d *Divergence, parts []evidencePart) (f Figure, drawn []string, ok bool, err error) {
	i := d.Shown
	var rows []pictureRow
	var captions []string // per row, per image: what was done and the prediction
	var h, w int
	var lo, hi float64
	haveOriginal := map[string]bool{}
	one := func(sm protocol.Sample) (protocol.Sample, bool) {
		if !picture(sm.Shape) || i >= sm.Shape[0] {
			return sm, false
		}
		dim := len(sm.Values) / sm.Shape[0]
		return protocol.Sample{Name: sm.Name, Shape: append([]int{1}, sm.Shape[1:]...), Values: sm.Values[i*dim : (i+1)*dim]}, true
	}
	var perturbedRows []pictureRow
	var perturbedCaps []string
	for _, part := range parts {
		setting, method := part.setting, part.method
		var kept []protocol.Sample
		var caps []string
		for _, sm := range part.samples {
			switch sm.Kind {
			case protocol.Original:
				if s, ok := one(sm); ok && len(rows) == 0 {
					im, err := newImages(s)
					if err != nil {
						return Figure{}, nil, false, err
					}
					h, w = im.h, im.w
					lo, hi = span(1e300, -1e300, sm.Values)
					im.lo, im.hi = lo, hi
					rows = append(rows, pictureRow{label: "input " + fmt.Sprint(i), n: 1, paint: im.paint})
					captions = append(captions, predictedAt(sm, i))
				}
			case protocol.AttributionMap:
				if sm.Name == "map test" && !haveOriginal[method] && len(sm.Shape) == 4 && i < sm.Shape[0] {
					haveOriginal[method] = true
					hw := sm.Shape[2] * sm.Shape[3]
					rows = append(rows, pictureRow{label: "map · " + method, n: 1, paint: newHeat(sm.Values[i*hw:(i+1)*hw], sm.Shape[2], sm.Shape[3]).paint})
					captions = append(captions, "")
				}
			case protocol.Perturbed:
				// The most relevant removed first, where a protocol keeps both orders.
				if s, ok := one(sm); ok && !strings.Contains(strings.ToLower(sm.Name), "lerf") {
					kept = append(kept, s)
					what := strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(sm.Name, setting)), " test")
					what = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(what, strings.Fields(setting)[0]), " morf"))
					what = strings.TrimSpace(strings.TrimPrefix(what, "morf"))
					caps = append(caps, strings.TrimSpace(what+"\n"+predictedAt(sm, i)))
				}
			}
		}
		if len(kept) == 0 {
			continue
		}
		// At most evidenceSteps of them, evenly spread, first and last kept.
		if len(kept) > evidenceSteps {
			var k2 []protocol.Sample
			var c2 []string
			for j := range evidenceSteps {
				at := j * (len(kept) - 1) / (evidenceSteps - 1)
				k2, c2 = append(k2, kept[at]), append(c2, caps[at])
			}
			kept, caps = k2, c2
		}
		var v []float32
		for _, s := range kept {
			v = append(v, s.Values...)
		}
		im, err := newImages(protocol.Sample{Name: setting, Shape: append([]int{len(kept)}, kept[0].Shape[1:]...), Values: v})
		if err != nil {
			return Figure{}, nil, false, err
		}
		im.lo, im.hi = lo, hi // the input's grey levels
		perturbedRows = append(perturbedRows, pictureRow{label: setting + " · " + method, n: len(kept), paint: im.paint})
		perturbedCaps = append(perturbedCaps, strings.Join(caps, "\x00"))
	}
	if h == 0 || len(perturbedRows) == 0 {
		return Figure{}, nil, false, nil
	}
	rows = append(rows, perturbedRows...)
	captions = append(captions, perturbedCaps...)
	title := fmt.Sprintf("Where %s and %s part on %s and %s — %s\n%s", d.For, d.Other, d.A, d.B, a.Dataset,
		"most relevant removed first; each image: what was done, the class predicted")
	p, aspect := picturePlot(title, rows, h, w)
	var xys plotter.XYs
	var labels []string
	for r, caps := range captions {
		for k, c := range strings.Split(caps, "\x00") {
			if c == "" {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(k) + 0.03, Y: float64(len(rows)-r) - 0.04})
			labels = append(labels, c)
		}
	}
	if len(labels) > 0 {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return Figure{}, nil, false, err
		}
		for k := range l.TextStyle {
			l.TextStyle[k].Font.Size = vg.Points(6)
			l.TextStyle[k].Color = color.RGBA{R: 220, G: 30, B: 30, A: 255}
			l.TextStyle[k].YAlign = -1 // hang below the point: inside the image's top
		}
		p.Add(l)
	}
	return Figure{Plot: p, Height: pictureHeight(aspect, false, strings.Count(title, "\n")+1)}, labels, true, nil
}

// predictedAt is "→ class" for input i of a sample whose predictions the
// run keeps, "" otherwise.
func predictedAt(sm protocol.Sample, i int) string {
	if i < len(sm.Predicted) {
		return "→ " + sm.Predicted[i]
	}
	return ""
}
