package report

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"

	"github.com/disintegration/imaging"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"faithlab/core/data"
	"faithlab/core/protocol"
	"faithlab/core/store"
)

// SampleFigures draws, for every record whose protocol kept perturbed
// samples, one grid of them: a row per sample (drop rate), its images side
// by side, grey levels (or colours) stretched over the grid's own range so
// that every row is comparable. Samples are read by key from the first of
// the caches that holds them; those in none (a shard's cache left on its
// node) are counted in missing and left out.
func SampleFigures(recs []store.Record, caches ...*store.Cache) (figs []Figure, missing int, err error) {
	for _, r := range recs {
		if r.Result == nil || len(r.Result.Samples) == 0 {
			continue
		}
		var rows []protocol.Sample
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
			rows = append(rows, sm)
		}
		if len(rows) == 0 || !picture(rows[0].Shape) {
			continue // tabular samples are no picture
		}
		p, aspect, err := sampleGrid(fmt.Sprintf("%s, %s: perturbed test images", r.Result.Protocol, methodName(r)), rows)
		if err != nil {
			return nil, missing, fmt.Errorf("%s: %w", r.Label, err)
		}
		// Square pixels: the picture's height follows from the width the
		// row labels leave it.
		h := (Width-0.9*vg.Inch)*vg.Length(aspect) + 0.35*vg.Inch
		figs = append(figs, Figure{Name: fmt.Sprintf("%s_%s_%s_samples", fileName(r.Dataset), strings.ToLower(r.Result.Protocol), fileName(methodName(r))), Plot: p, Height: h})
	}
	return figs, missing, nil
}

// pixelScale is how many picture pixels a sample pixel becomes.
const pixelScale = 8

// sampleGrid lays the samples' images out as one picture, a row per sample
// with a one-pixel gap, labelled on the left by the sample's name, and
// returns it with the picture's height over its width.
func sampleGrid(title string, rows []protocol.Sample) (*plot.Plot, float64, error) {
	shape := rows[0].Shape
	if len(shape) != 4 || (shape[1] != 1 && shape[1] != 3) {
		return nil, 0, fmt.Errorf("samples of shape %v: want n×C×H×W with 1 or 3 channels", shape)
	}
	c, h, w := shape[1], shape[2], shape[3]
	cols := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, sm := range rows {
		if len(sm.Shape) != 4 || sm.Shape[1] != c || sm.Shape[2] != h || sm.Shape[3] != w {
			return nil, 0, fmt.Errorf("sample %s has shape %v, the first %v", sm.Name, sm.Shape, shape)
		}
		cols = max(cols, sm.Shape[0])
		for _, v := range sm.Values {
			lo, hi = min(lo, float64(v)), max(hi, float64(v))
		}
	}
	scale := 255 / max(hi-lo, 1e-12)
	img := image.NewRGBA(image.Rect(0, 0, cols*(w+1)-1, len(rows)*(h+1)-1))
	for i := range img.Pix {
		img.Pix[i] = 255 // white gaps
	}
	for r, sm := range rows {
		for k := range sm.Shape[0] {
			one := sm.Values[k*c*h*w : (k+1)*c*h*w]
			for y := range h {
				for x := range w {
					var px [3]uint8
					for ch := range 3 {
						v := one[(ch%c)*h*w+y*w+x]
						px[ch] = uint8(math.Round((float64(v) - lo) * scale))
					}
					img.SetRGBA(k*(w+1)+x, r*(h+1)+y, color.RGBA{px[0], px[1], px[2], 255})
				}
			}
		}
	}
	// Enlarged pixel by pixel, so that no renderer smooths them.
	big := imaging.Resize(img, img.Bounds().Dx()*pixelScale, 0, imaging.NearestNeighbor)
	p := newPlot(title, "", "")
	p.Add(plotter.NewImage(big, 0, 0, float64(cols), float64(len(rows))))
	p.HideX()
	ticks := make([]plot.Tick, len(rows))
	for r, sm := range rows {
		// The first sample is the picture's top row; y grows upwards.
		ticks[r] = plot.Tick{Value: float64(len(rows)-r) - 0.5, Label: strings.TrimSuffix(sm.Name, " test")}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = 0, float64(len(rows))
	return p, float64(img.Bounds().Dy()) / float64(img.Bounds().Dx()), nil
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

// picture says whether samples of shape n×C×H×W can be drawn: grey or RGB
// images, not tabular rows (D×1×1).
func picture(shape []int) bool {
	return len(shape) == 4 && (shape[1] == 1 || shape[1] == 3) && shape[2] > 1 && shape[3] > 1
}
