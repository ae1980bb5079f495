package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"faithlab/core/data"
	"faithlab/core/protocol"
	"faithlab/core/store"
)

// Figure is one plot of a campaign's results, named for its file.
type Figure struct {
	Name   string
	Plot   *plot.Plot
	Height vg.Length // 0: Height
}

// Paper column width, and a height that leaves the curves room.
const (
	Width  = 3.5 * vg.Inch
	Height = 2.6 * vg.Inch
)

// palette is Okabe and Ito's colour-blind-safe set; a method keeps its
// colour (and its dash pattern) in every figure of a campaign.
var palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
}

var dashes = [][]vg.Length{nil, {vg.Points(4), vg.Points(2)}, {vg.Points(1), vg.Points(1.5)}, {vg.Points(5), vg.Points(1.5), vg.Points(1), vg.Points(1.5)}}

// series is one method's curve, averaged over seeds.
type series struct {
	method string
	x, y   []float64
	n      []int
}

func (s *series) add(x, y []float64) {
	if s.x == nil {
		s.x, s.y, s.n = slices.Clone(x), make([]float64, len(x)), make([]int, len(x))
	}
	for i := range min(len(x), len(s.x)) {
		if !math.IsNaN(y[i]) {
			s.y[i] += y[i]
			s.n[i]++
		}
	}
}

func (s *series) xys() plotter.XYs {
	var xy plotter.XYs
	for i := range s.x {
		if s.n[i] > 0 {
			xy = append(xy, plotter.XY{X: s.x[i], Y: s.y[i] / float64(s.n[i])})
		}
	}
	return xy
}

// curves collects, per method in first-seen order, the named curve of one
// protocol on one dataset.
func curves(recs []store.Record, dataset, proto, curve string) []*series {
	var out []*series
	for _, r := range recs {
		if r.Result == nil || r.Dataset != dataset || r.Protocol != proto {
			continue
		}
		for _, c := range r.Result.Curves {
			if c.Name != curve {
				continue
			}
			i := slices.IndexFunc(out, func(s *series) bool { return s.method == methodName(r) })
			if i < 0 {
				out = append(out, &series{method: methodName(r)})
				i = len(out) - 1
			}
			out[i].add(c.X, c.Y)
		}
	}
	return out
}

func methodName(r store.Record) string {
	if r.Post != "" {
		return r.Method + "+" + r.Post
	}
	return r.Method
}

// Figures builds every figure the records support: accuracy against drop
// rate for the retraining and imputation protocols, deletion curves with
// their AUC in the legend, Kendall's τ of the deletion curves per method,
// accuracy against mask total variation with the fitted line and R², and
// the OOD and image-quality bars of the perturbed test images.
func Figures(recs []store.Record) ([]Figure, error) {
	var datasets []string
	methods := map[string]int{} // colour index, in first-seen order
	for _, r := range recs {
		if r.Result == nil {
			continue
		}
		if !slices.Contains(datasets, r.Dataset) {
			datasets = append(datasets, r.Dataset)
		}
		if _, ok := methods[methodName(r)]; !ok {
			methods[methodName(r)] = len(methods)
		}
	}
	var figs []Figure
	for _, ds := range datasets {
		short := fileName(ds)
		for _, c := range []struct{ proto, curve, title, y string }{
			{"ROAR", "accuracy", "ROAR", "test accuracy after retraining"},
			{"KAR", "accuracy", "KAR", "test accuracy after retraining"},
			{"ROAD", "accuracy_morf", "ROAD, most relevant first", "test accuracy"},
			{"ROAD", "accuracy_lerf", "ROAD, least relevant first", "test accuracy"},
			{"EvalX", "accuracy", "Eval-X", "proxy test accuracy"},
		} {
			ss := curves(recs, ds, c.proto, c.curve)
			if len(ss) == 0 {
				continue
			}
			p := newPlot(fmt.Sprintf("%s — %s", c.title, ds), "fraction of features removed", c.y)
			if err := addLines(p, ss, methods, nil); err != nil {
				return nil, err
			}
			figs = append(figs, Figure{Name: fmt.Sprintf("%s_%s_%s", short, strings.ToLower(c.proto), c.curve), Plot: p})
		}
		for _, curve := range []string{"morf", "lerf"} {
			ss := curves(recs, ds, "Deletion", curve)
			if len(ss) == 0 {
				continue
			}
			title := map[string]string{"morf": "Deletion, most relevant first", "lerf": "Deletion, least relevant first"}[curve]
			p := newPlot(fmt.Sprintf("%s — %s", title, ds), "fraction of features removed", "score of the explained class")
			auc := func(s *series) string {
				xy := s.xys()
				x, y := make([]float64, len(xy)), make([]float64, len(xy))
				for i, v := range xy {
					x[i], y[i] = v.X, v.Y
				}
				return fmt.Sprintf("%s (AUC %.3f)", s.method, protocol.AUC(x, y))
			}
			if err := addLines(p, ss, methods, auc); err != nil {
				return nil, err
			}
			figs = append(figs, Figure{Name: fmt.Sprintf("%s_deletion_%s", short, curve), Plot: p})
		}
		if f, ok, err := scalarBars(recs, ds, []bar{{"Deletion", "tau_morf", "MoRF", 0}, {"Deletion", "tau_lerf", "LeRF", 4}},
			"Monotonicity of deletion curves — "+ds, "Kendall's τ (mean over images)", "deletion_tau"); err != nil {
			return nil, err
		} else if ok {
			figs = append(figs, f)
		}
		for _, c := range []struct{ proto, acc, tv string }{
			{"ROAR", "accuracy", "mask_tv"}, {"KAR", "accuracy", "mask_tv"}, {"EvalX", "accuracy", "mask_tv"},
			{"ROAD", "accuracy_morf", "mask_tv_morf"},
		} {
			f, ok, err := tvFit(recs, ds, c.proto, c.acc, c.tv, methods)
			if err != nil {
				return nil, err
			}
			if ok {
				figs = append(figs, f)
			}
		}
		bars, err := shiftBars(recs, ds)
		if err != nil {
			return nil, err
		}
		figs = append(figs, bars...)
	}
	return figs, nil
}

func fileName(s string) string {
	s = filepath.Base(s)
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// newPlot is a plot styled for a paper column: 8 pt labels, 7 pt ticks.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = x, y
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(8)
		a.Tick.Label.Font.Size = vg.Points(7)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(6.5)
	p.Legend.Top = true
	p.Legend.ThumbnailWidth = vg.Points(14)
	p.Add(plotter.NewGrid())
	return p
}

// style is method i's colour and dash pattern: the palette's colours, then
// the same colours dashed.
func style(i int) (color.RGBA, []vg.Length) {
	return palette[i%len(palette)], dashes[(i/len(palette))%len(dashes)]
}

// addLines draws one line with points per method; label names it in the
// legend (the method by default). The legend goes in the corner the curves
// leave empty: bottom left when they fall, top left when they rise.
func addLines(p *plot.Plot, ss []*series, methods map[string]int, label func(*series) string) error {
	var rise float64
	for _, s := range ss {
		if xy := s.xys(); len(xy) > 1 {
			rise += xy[len(xy)-1].Y - xy[0].Y
		}
	}
	p.Legend.Top, p.Legend.Left = rise > 0, true
	for _, s := range ss {
		l, pts, err := plotter.NewLinePoints(s.xys())
		if err != nil {
			return fmt.Errorf("%s: %w", s.method, err)
		}
		c, d := style(methods[s.method])
		l.Color, l.Width, l.Dashes = c, vg.Points(1), d
		pts.Color, pts.Radius, pts.Shape = c, vg.Points(1.5), draw.CircleGlyph{}
		p.Add(l, pts)
		name := s.method
		if label != nil {
			name = label(s)
		}
		p.Legend.Add(name, l, pts)
	}
	return nil
}

// bar is one group of a bar chart: a protocol's scalar, its legend label
// and its colour index in the palette.
type bar struct {
	proto, scalar, label string
	colour               int
}

// scalarBars draws, per method, one bar per group: the group's scalar
// averaged over seeds. Groups no record has are left out; ok is false when
// none is left.
func scalarBars(recs []store.Record, ds string, groups []bar, title, ylabel, name string) (Figure, bool, error) {
	var methods []string
	vals := map[bar]map[string][]float64{}
	for _, r := range recs {
		if r.Result == nil || r.Dataset != ds {
			continue
		}
		for _, g := range groups {
			v, ok := r.Result.Scalar(g.scalar)
			if !ok || r.Protocol != g.proto {
				continue
			}
			if !slices.Contains(methods, methodName(r)) {
				methods = append(methods, methodName(r))
			}
			if vals[g] == nil {
				vals[g] = map[string][]float64{}
			}
			vals[g][methodName(r)] = append(vals[g][methodName(r)], v)
		}
	}
	var present []bar
	for _, g := range groups {
		if vals[g] != nil {
			present = append(present, g)
		}
	}
	if len(present) == 0 {
		return Figure{}, false, nil
	}
	p := newPlot(title, "", ylabel)
	w := min(vg.Points(8), vg.Points(180)/vg.Length(len(methods)*len(present)))
	for k, g := range present {
		var vs plotter.Values
		for _, m := range methods {
			vs = append(vs, meanNaN(vals[g][m]))
		}
		bc, err := plotter.NewBarChart(vs, w)
		if err != nil {
			return Figure{}, false, fmt.Errorf("%s: %w", name, err)
		}
		bc.Color = palette[g.colour%len(palette)]
		bc.LineStyle.Width = 0
		bc.Offset = (vg.Length(k) - vg.Length(len(present)-1)/2) * w
		p.Add(bc)
		p.Legend.Add(g.label, bc)
	}
	headroom(p, len(present)+1)
	p.NominalX(methods...)
	p.X.Min, p.X.Max = -0.5, float64(len(methods))-0.5 // whole bars at both ends
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	return Figure{Name: fileName(ds) + "_" + name, Plot: p}, true, nil
}

// shiftGroups are the protocol runs whose perturbed test images have a
// Shift, for the OOD and image-quality bars.
var shiftGroups = []bar{
	{"ROAR", "", "ROAR", 0}, {"KAR", "", "KAR", 1}, {"EvalX", "", "Eval-X", 2},
	{"ROAD", "_morf", "ROAD MoRF", 3}, {"ROAD", "_lerf", "ROAD LeRF", 4},
	{"Deletion", "_morf", "Deletion MoRF", 5}, {"Deletion", "_lerf", "Deletion LeRF", 6},
}

// shiftBars are the OOD and image-quality bars of the protocols' perturbed
// test images (FUD paper, Tables 2 and 6): the energy-score AUROC, PSNR and
// SSIM per method and protocol, averaged over the rates.
func shiftBars(recs []store.Record, ds string) ([]Figure, error) {
	var figs []Figure
	for _, m := range []struct{ scalar, title, y string }{
		{"ood_auroc", "OOD detection of perturbed images", "energy AUROC (0.5: in distribution)"},
		{"psnr", "Image quality of perturbed images", "PSNR (dB)"},
		{"ssim", "Image quality of perturbed images", "SSIM"},
	} {
		groups := make([]bar, len(shiftGroups))
		for i, g := range shiftGroups {
			g.scalar = m.scalar + g.scalar
			groups[i] = g
		}
		f, ok, err := scalarBars(recs, ds, groups, m.title+" — "+ds, m.y, m.scalar)
		if err != nil {
			return nil, err
		}
		if ok {
			figs = append(figs, f)
		}
	}
	return figs, nil
}

// headroom raises the y axis so that a legend of n entries in the top
// right corner stays clear of the data.
func headroom(p *plot.Plot, n int) {
	p.Legend.Top, p.Legend.Left = true, false
	span := p.Y.Max - p.Y.Min
	if span == 0 {
		span = 1
	}
	p.Y.Max += span * min(1.2, 0.09*float64(n))
}

func meanNaN(v []float64) float64 {
	var s float64
	var n int
	for _, x := range v {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// tvFit is accuracy against the masks' total variation over every method
// and rate, with the least-squares line and its R² (DPI paper, Table 3).
func tvFit(recs []store.Record, ds, proto, acc, tv string, methods map[string]int) (Figure, bool, error) {
	var results []protocol.Result
	for _, r := range recs {
		if r.Result != nil && r.Dataset == ds && r.Protocol == proto {
			results = append(results, *r.Result)
		}
	}
	pts := protocol.TVPoints(results, acc, tv)
	fit, err := protocol.TVFit(pts)
	if err != nil {
		return Figure{}, false, nil // fewer than two points or one TV value
	}
	p := newPlot(fmt.Sprintf("%s %s against mask TV — %s (R² %.2f)", proto, strings.ReplaceAll(acc, "_", " "), ds, fit.R2),
		"mean total variation of the masks", "test accuracy")
	byMethod := map[string]plotter.XYs{}
	var order []string
	for _, q := range pts {
		if _, ok := byMethod[q.Method]; !ok {
			order = append(order, q.Method)
		}
		byMethod[q.Method] = append(byMethod[q.Method], plotter.XY{X: q.TV, Y: q.Accuracy})
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range pts {
		lo, hi = min(lo, q.TV), max(hi, q.TV)
	}
	line, err := plotter.NewLine(plotter.XYs{{X: lo, Y: fit.Intercept + fit.Slope*lo}, {X: hi, Y: fit.Intercept + fit.Slope*hi}})
	if err != nil {
		return Figure{}, false, err
	}
	line.Color, line.Width, line.Dashes = color.Gray{Y: 90}, vg.Points(0.8), []vg.Length{vg.Points(3), vg.Points(2)}
	p.Add(line)
	for _, m := range order {
		sc, err := plotter.NewScatter(byMethod[m])
		if err != nil {
			return Figure{}, false, err
		}
		c, _ := style(methods[m])
		sc.Color, sc.Radius, sc.Shape = c, vg.Points(2), draw.CircleGlyph{}
		p.Add(sc)
		p.Legend.Add(m, sc)
	}
	p.Legend.Add(fmt.Sprintf("fit: %.3g·TV + %.3g", fit.Slope, fit.Intercept), line)
	headroom(p, len(order)+1)
	return Figure{Name: fmt.Sprintf("%s_%s_%s_vs_tv", fileName(ds), strings.ToLower(proto), acc), Plot: p}, true, nil
}

// Render writes a figure in one format: "png" (300 dpi), "svg" or "pdf".
func Render(w io.Writer, f Figure, format string, dpi int) error {
	var c draw.Canvas
	var out io.WriterTo
	height := f.Height
	if height == 0 {
		height = Height
	}
	switch format {
	case "png":
		img := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(Width, height), vgimg.UseDPI(dpi))}
		c, out = draw.New(img), img
	case "svg":
		s := vgsvg.New(Width, height)
		c, out = draw.New(s), s
	case "pdf":
		p := vgpdf.New(Width, height)
		p.EmbedFonts(true)
		c, out = draw.New(p), p
	default:
		return fmt.Errorf("figure format %q: png, svg or pdf", format)
	}
	f.Plot.Draw(c)
	_, err := out.WriteTo(w)
	return err
}

// Save writes every figure to dir in each format, PNG at 300 dpi.
func Save(dir string, figs []Figure, formats ...string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, f := range figs {
		for _, fm := range formats {
			var buf bytes.Buffer
			if err := Render(&buf, f, fm, 300); err != nil {
				return files, fmt.Errorf("figure %s: %w", f.Name, err)
			}
			path := filepath.Join(dir, f.Name+"."+fm)
			if err := data.WriteFileAtomic(path, buf.Bytes()); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	return files, nil
}
