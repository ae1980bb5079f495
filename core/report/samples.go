package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"faithlab/core/engine"
	"faithlab/core/protocol"
	"faithlab/core/store"
)

// SampleFigures draws what the protocols kept of their inputs, read by key
// from the first of the caches that holds them: for every record, a grid
// of its samples — the test images untouched, their maps, then a row per
// perturbation (drop rate) — and for every method on every dataset a
// figure of its maps: the images, the maps in a diverging colour scale
// with its bar, and the maps over the images. Images are grey levels (or
// colours) stretched over the originals' range (values beyond it clip),
// the same in every row, so that rows are comparable. Samples in no cache (a shard's cache left on its node) are
// counted in missing and left out.
func SampleFigures(recs []store.Record, caches ...*store.Cache) (figs []Figure, missing int, err error) {
	c := newCampaign(recs)
	several := seeds(recs) > 1
	mapped := map[string]bool{} // dataset and method with a maps figure
	for _, r := range recs {
		if r.Result == nil || len(r.Result.Samples) == 0 {
			continue
		}
		loaded, miss, err := loadSamples(r, caches)
		missing += miss
		if err != nil {
			return nil, missing, err
		}
		var rows, trajectories []protocol.Sample
		for _, sm := range loaded {
			if sm.Kind == protocol.Trajectory {
				trajectories = append(trajectories, sm) // steps of a sampler: a figure of their own
				continue
			}
			rows = append(rows, sm)
		}
		i := slices.IndexFunc(rows, func(s protocol.Sample) bool { return s.Kind != protocol.AttributionMap })
		if i < 0 || !picture(rows[i].Shape) {
			continue // no images left, or tabular samples: no picture
		}
		method := methodName(r)
		name := []string{fileName(r.Dataset), fileName(strings.ToLower(r.Protocol)), slug(method)}
		who := inline(method)
		if several {
			name = append(name, fmt.Sprintf("seed%d", r.Seed))
			who += fmt.Sprintf(", seed %d", r.Seed)
		}
		f, err := sampleGrid(fmt.Sprintf("%s: test images as the model saw them — %s\n%s", r.Result.Protocol, r.Dataset, who), r.Result.Protocol, rows)
		if err != nil {
			return nil, missing, fmt.Errorf("%s: %w", r.Label, err)
		}
		f.Name, f.Group, f.Kind = c.name(append(name, "samples")...), r.Protocol, Samples
		figs = append(figs, f)
		if len(trajectories) > 0 {
			// One of a record's trajectories, its middle setting (FUD: the
			// ratio in the middle of those kept), step by step.
			tr := trajectories[len(trajectories)/2]
			f, err := trajectoryGrid(fmt.Sprintf("%s — %s\n%s", strings.TrimSuffix(tr.Name, " trajectory"), r.Dataset, who), tr, trajectoryColumns)
			if err != nil {
				return nil, missing, fmt.Errorf("%s: %w", r.Label, err)
			}
			f.Name, f.Group, f.Kind = c.name(append(name, "trajectory")...), r.Protocol, Samples
			figs = append(figs, f)
		}
		if key := r.Dataset + "\x00" + method; !mapped[key] {
			f, ok, err := mapFigure(fmt.Sprintf("Attribution maps — %s\n%s", r.Dataset, inline(method)), rows)
			if err != nil {
				return nil, missing, fmt.Errorf("%s: %w", r.Label, err)
			}
			if ok {
				mapped[key] = true
				f.Name, f.Group, f.Kind = c.name(fileName(r.Dataset), "maps", slug(method)), "Attribution maps", Samples
				figs = append(figs, f)
			}
		}
	}
	return figs, missing, nil
}

// trajectoryColumns is how many of a trajectory's steps its figure shows.
const trajectoryColumns = 10

// trajectoryGrid draws a sampler's trajectory (Sample of Kind Trajectory,
// Shape [steps, 2, n, C, H, W]) as two rows per input — x_t, then the
// prior's prediction x̂₀ — at up to cols steps evenly spread from the
// first to the last. Grey levels stretch over the range of the
// predictions (x_t's noise beyond it is clipped), so that the rows read
// as images of the data.
func trajectoryGrid(title string, tr protocol.Sample, cols int) (Figure, error) {
	if len(tr.Shape) != 6 || tr.Shape[1] != 2 || !picture(tr.Shape[2:]) || len(tr.Values) != engine.Size(tr.Shape) {
		return Figure{}, fmt.Errorf("trajectory %s of shape %v: want steps×2×n×C×H×W images", tr.Name, tr.Shape)
	}
	steps, n, dim := tr.Shape[0], tr.Shape[2], engine.Size(tr.Shape[3:])
	cols = min(cols, steps)
	pick := make([]int, cols) // the steps shown, first and last included
	for j := range pick {
		pick[j] = j * (steps - 1) / max(cols-1, 1)
	}
	at := func(step, kind, i int) []float32 {
		o := ((step*2+kind)*n + i) * dim
		return tr.Values[o : o+dim]
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for s := range steps {
		for i := range n {
			lo, hi = span(lo, hi, at(s, 1, i))
		}
	}
	var rows []pictureRow
	for i := range n {
		for kind, label := range []string{"x_t", "x̂₀"} {
			var v []float32
			for _, s := range pick {
				v = append(v, at(s, kind, i)...)
			}
			im, err := newImages(protocol.Sample{Name: tr.Name, Shape: append([]int{cols}, tr.Shape[3:]...), Values: v})
			if err != nil {
				return Figure{}, err
			}
			im.lo, im.hi = lo, hi
			if n > 1 {
				label += fmt.Sprintf(" #%d", i) // test input i, numbered as Explain and Inspect number it
			}
			rows = append(rows, pictureRow{label: label, n: cols, paint: im.paint})
		}
	}
	title += fmt.Sprintf("\nx_t and predicted x̂₀ at %d of %d steps, first to last", cols, steps)
	p, aspect := picturePlot(title, rows, tr.Shape[4], tr.Shape[5])
	return Figure{Plot: p, Height: pictureHeight(aspect, false, strings.Count(title, "\n")+1)}, nil
}

// sampleGrid lays a record's samples out as one picture: the original
// images, their maps (coloured as in the maps figure), then each
// perturbation, labelled by what was done ("30%", "morf 30%"). Grey
// levels span the originals' range, the same in every row.
func sampleGrid(title, protocolName string, samples []protocol.Sample) (Figure, error) {
	var imgs []images
	lo, hi := math.Inf(1), math.Inf(-1)
	olo, ohi := math.Inf(1), math.Inf(-1) // the originals' range
	var h, w, ch int
	for _, sm := range samples {
		if sm.Kind == protocol.AttributionMap {
			continue
		}
		im, err := newImages(sm)
		if err != nil {
			return Figure{}, err
		}
		if h == 0 {
			h, w, ch = im.h, im.w, im.c
		}
		if im.h != h || im.w != w || im.c != ch {
			return Figure{}, fmt.Errorf("sample %s has shape %v, unlike the first", sm.Name, sm.Shape)
		}
		imgs = append(imgs, im)
		lo, hi = span(lo, hi, sm.Values)
		if sm.Kind == protocol.Original {
			olo, ohi = span(olo, ohi, sm.Values)
		}
	}
	if olo < ohi {
		// Perturbations that leave the data's range (GOAR's shifts) clip
		// at its ends instead of washing the originals out to grey.
		lo, hi = olo, ohi
	}
	var rows []pictureRow
	k := 0
	for _, sm := range samples {
		if sm.Kind == protocol.AttributionMap {
			if len(sm.Shape) != 4 || sm.Shape[2] != h || sm.Shape[3] != w {
				return Figure{}, fmt.Errorf("maps of shape %v for %d×%d images", sm.Shape, h, w)
			}
			label := "map" // the inputs' own maps; others (MPRT's on each randomised model) by what was done
			if sm.Name != "map test" {
				label = strings.TrimPrefix(strings.TrimSuffix(sm.Name, " test"), protocolName+" ")
			}
			rows = append(rows, pictureRow{label: label, n: sm.Shape[0], paint: newHeat(sm.Values, h, w).paint})
			continue
		}
		im := imgs[k]
		k++
		im.lo, im.hi = lo, hi
		label := "original"
		if sm.Kind != protocol.Original {
			label = strings.TrimPrefix(strings.TrimSuffix(sm.Name, " test"), protocolName+" ")
		}
		rows = append(rows, pictureRow{label: label, n: im.n, paint: im.paint})
	}
	if h == 0 {
		return Figure{}, fmt.Errorf("no images among the samples")
	}
	p, aspect := picturePlot(title, rows, h, w)
	return Figure{Plot: p, Height: pictureHeight(aspect, false, strings.Count(title, "\n")+1)}, nil
}

// mapFigure draws a method's maps from a record's samples: the original
// images, the maps in a diverging colour scale with its bar, and the maps
// over the images in grey. ok is false when the samples lack either.
func mapFigure(title string, samples []protocol.Sample) (Figure, bool, error) {
	var orig, maps *protocol.Sample
	for i := range samples {
		switch samples[i].Kind {
		case protocol.Original:
			orig = &samples[i]
		case protocol.AttributionMap:
			if maps == nil { // the inputs' own maps come first
				maps = &samples[i]
			}
		}
	}
	if orig == nil || maps == nil {
		return Figure{}, false, nil
	}
	im, err := newImages(*orig)
	if err != nil {
		return Figure{}, false, err
	}
	if len(maps.Shape) != 4 || maps.Shape[0] != im.n || maps.Shape[2] != im.h || maps.Shape[3] != im.w {
		return Figure{}, false, fmt.Errorf("maps of shape %v for images of shape %v", maps.Shape, orig.Shape)
	}
	im.lo, im.hi = span(math.Inf(1), math.Inf(-1), orig.Values)
	hm := newHeat(maps.Values, im.h, im.w)
	p, aspect := picturePlot(title, []pictureRow{
		{label: "image", n: im.n, paint: im.paint},
		{label: "map", n: im.n, paint: hm.paint},
		{label: "overlay", n: im.n, paint: hm.overlay(im)},
	}, im.h, im.w)
	return Figure{Plot: p, Scale: hm.scale(), Height: pictureHeight(aspect, true, strings.Count(title, "\n")+1)}, true, nil
}

// Fetch returns the artefact under key from the first cache that holds it,
// with its path; nil bytes when none does.
func Fetch(key, ext string, caches []*store.Cache) ([]byte, string, error) {
	for _, c := range caches {
		b, ok, err := c.Get(key, ext)
		if err != nil {
			return nil, c.Path(key, ext), err
		}
		if ok {
			return b, c.Path(key, ext), nil
		}
	}
	return nil, "", nil
}
