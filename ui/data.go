package ui

import (
	"fmt"
	"image"
	"math"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/data"
	"faithlab/core/report"
)

// Outcome filters of the data screen.
const (
	allOutcomes = "all samples"
	correct     = "correctly classified"
	incorrect   = "misclassified"
	allClasses  = "all classes"
)

// DataView shows the open dataset: images as a grid of thumbnails, tabular
// samples as a table with per-feature statistics; filters by class and by
// whether the open model classifies a sample correctly; the class
// histogram. Clicking a sample opens it in Inspect.
type DataView struct {
	s        *State
	split    *widget.RadioGroup
	class    *selectWidget
	outcome  *selectWidget
	count    *widget.Label
	grid     *widget.GridWrap
	table    *widget.Table
	scale    *widget.Label // over the table: how its values are scaled
	stats    *widget.Table
	statsFor *widget.Label // over the statistics: in what units
	hist     *chartView
	conv     *conversionLine // over the grid: how the files became the images shown
	center   *fyne.Container
	side     *fyne.Container
	shown    []int // indices of the samples that pass the filters
	feature  [][4]float64
	content  fyne.CanvasObject
	drawHist func() // draws the class histogram again (a new theme)
}

func newDataView(s *State) *DataView {
	v := &DataView{s: s, count: widget.NewLabel("no dataset open"), hist: newChartView(fyne.NewSize(280, 240)),
		scale: widget.NewLabel(""), statsFor: widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})}
	v.scale.Wrapping, v.statsFor.Wrapping = fyne.TextWrapWord, fyne.TextWrapWord
	v.split = widget.NewRadioGroup([]string{"train", "test"}, func(string) { v.modelChanged() })
	v.split.Horizontal = true
	v.split.SetSelected("test")
	v.class = newSelect([]string{allClasses}, func(string) { v.filter() })
	v.class.SetSelected(allClasses)
	v.outcome = newSelect([]string{allOutcomes, correct, incorrect}, func(string) { v.filter() })
	v.outcome.SetSelected(allOutcomes)
	v.outcome.Disable()
	v.grid = widget.NewGridWrap(func() int { return len(v.shown) },
		func() fyne.CanvasObject {
			img := canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
			img.FillMode = canvas.ImageFillContain
			img.ScaleMode = canvas.ImageScalePixels
			img.SetMinSize(fyne.NewSize(100, 76)) // room for "→ T-shirt/top" beneath
			lbl := captionLabel("\n")
			lbl.Alignment = fyne.TextAlignCenter
			return container.NewBorder(nil, lbl, nil, nil, img)
		},
		func(id widget.GridWrapItemID, o fyne.CanvasObject) {
			if id >= len(v.shown) || v.s.Data == nil {
				return
			}
			ds, i := v.dataset(), v.shown[id]
			c := o.(*fyne.Container)
			if name := fmt.Sprintf("data.sample.%d", id); id < 8 {
				v.s.unmark(o, name)
				v.s.markIn(name, o, fmt.Sprintf("%s %d", v.split.Selected, i), v.grid)
			} else {
				v.s.unmark(o, "")
			}
			img := c.Objects[0].(*canvas.Image)
			img.Image = Thumbnail(ds, i)
			img.Refresh()
			// The class, and on a second line the model's prediction when
			// it differs.
			text := v.s.classLabel(ds.Y[i]) + "\n"
			if p := v.s.Predictions(v.split.Selected); p != nil && p[i] != ds.Y[i] {
				text += "→ " + v.s.modelClass(p[i])
			}
			c.Objects[1].(*widget.Label).SetText(text)
		})
	v.grid.OnSelected = func(id widget.GridWrapItemID) {
		if id < len(v.shown) {
			v.s.Inspect(v.split.Selected, v.shown[id])
		}
		v.grid.UnselectAll()
	}
	v.table = widget.NewTableWithHeaders(v.tableSize, func() fyne.CanvasObject { return widget.NewLabel("00000.000") }, v.tableCell)
	v.table.UpdateHeader = v.tableHeader
	v.table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(v.shown) {
			v.s.Inspect(v.split.Selected, v.shown[id.Row])
		}
		v.table.UnselectAll()
	}
	v.stats = widget.NewTableWithHeaders(func() (int, int) { return len(v.feature), 4 },
		func() fyne.CanvasObject { return widget.NewLabel("-00000.000") },
		func(id widget.TableCellID, o fyne.CanvasObject) {
			o.(*widget.Label).SetText(report.Decimals(float64(v.feature[id.Row][id.Col]), 3))
		})
	v.stats.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		l := o.(*widget.Label)
		switch {
		case id.Row < 0 && id.Col >= 0:
			l.SetText([]string{"mean", "std", "min", "max"}[id.Col])
		case id.Col < 0 && id.Row >= 0:
			l.SetText(v.featureName(id.Row))
		}
	}
	v.conv = s.newConversionLine(nil)
	v.center = container.NewStack(widget.NewLabel("Open a dataset in the Library."))
	v.side = container.NewVBox(widget.NewLabelWithStyle("Classes", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.hist)
	top := container.NewHBox(widget.NewLabel("Split"), v.split, widget.NewLabel("Class"), v.class, widget.NewLabel("Show"), v.outcome, v.count)
	split := container.NewHSplit(v.center, container.NewVScroll(v.side))
	split.Offset = 0.74
	v.content = container.NewBorder(top, nil, nil, nil, split)
	s.OnData(v.reload)
	s.OnModel(v.modelChanged)
	return v
}

// Content is the screen.
func (v *DataView) Content() fyne.CanvasObject { return v.content }

func (v *DataView) dataset() *data.Dataset { return v.s.Data.Split(v.split.Selected) }

// reload shows a newly opened dataset: filters reset, the view that fits
// its kind, its histogram.
func (v *DataView) reload() {
	l := v.s.Data
	v.class.Options = append([]string{allClasses}, v.s.classNames()...)
	v.class.SetSelected(allClasses)
	v.outcome.SetSelected(allOutcomes)
	v.feature = nil
	if l.Tabular() {
		v.center.Objects = []fyne.CanvasObject{container.NewBorder(v.scale, nil, nil, nil, v.table)}
		v.feature = featureStats(l.Train)
		if st := l.Train.Standardization; st != nil {
			v.scale.SetText("Values standardised per feature, as models see them: (value − the file's mean) / the file's std, both of the training split (under Features).")
			v.statsFor.SetText("Features (training split, in the file's own units)")
		} else {
			v.scale.SetText("Values as the file holds them.")
			v.statsFor.SetText("Features (training split)")
		}
		v.side.Objects = []fyne.CanvasObject{widget.NewLabelWithStyle("Classes", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.hist,
			v.statsFor, container.NewGridWrap(fyne.NewSize(300, 320), v.stats)}
	} else {
		v.center.Objects = []fyne.CanvasObject{container.NewBorder(v.conv.label, nil, nil, nil, v.grid)}
		v.side.Objects = []fyne.CanvasObject{widget.NewLabelWithStyle("Classes", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.hist}
	}
	v.center.Refresh()
	v.side.Refresh()
	v.stats.Refresh()
	v.modelChanged()
	v.filter()
}

// modelChanged enables the outcome filter when the model's predictions
// on this dataset are known.
func (v *DataView) modelChanged() {
	if v.s.Data == nil {
		return
	}
	if names := append([]string{allClasses}, v.s.classNames()...); !slices.Equal(names, v.class.Options) {
		i := v.class.SelectedIndex() // the same class, under the name the model gives it
		v.class.Options = names
		if i >= 0 && i < len(names) {
			v.class.Selected = names[i]
		}
		v.class.Refresh()
	}
	if v.s.Predictions(v.split.Selected) == nil {
		v.outcome.SetSelected(allOutcomes)
		v.outcome.Disable()
	} else {
		v.outcome.Enable()
	}
	v.filter()
}

// filter recomputes the samples shown and the histogram.
func (v *DataView) filter() {
	if v.s.Data == nil {
		return
	}
	ds := v.dataset()
	preds := v.s.Predictions(v.split.Selected)
	want := v.class.SelectedIndex() - 1 // −1: all
	v.shown = v.shown[:0]
	counts := make([]float64, len(ds.Classes))
	for i, y := range ds.Y {
		if want >= 0 && y != want {
			continue
		}
		if preds != nil && v.outcome.Selected != allOutcomes && (preds[i] == y) != (v.outcome.Selected == correct) {
			continue
		}
		v.shown = append(v.shown, i)
		counts[y]++
	}
	v.count.SetText(fmt.Sprintf("%d of %d samples", len(v.shown), ds.Len()))
	title := fmt.Sprintf("%s split, %d samples", v.split.Selected, len(v.shown))
	names := v.s.classNames()
	v.drawHist = func() {
		v.hist.Draw(func(w, h int) image.Image { return barChart(title, "samples", names, counts, w, h) })
	}
	v.drawHist()
	v.grid.Refresh()
	v.grid.ScrollToTop()
	v.table.Refresh()
}

// label is a sample's caption: its class, and the model's prediction when
// it differs.
func (v *DataView) label(i int) string {
	ds := v.dataset()
	text := v.s.classLabel(ds.Y[i])
	if p := v.s.Predictions(v.split.Selected); p != nil && p[i] != ds.Y[i] {
		text += " → " + v.s.modelClass(p[i])
	}
	return text
}

func (v *DataView) tableSize() (int, int) {
	if v.s.Data == nil || !v.s.Data.Tabular() {
		return 0, 0
	}
	return len(v.shown), v.dataset().Dim() + 1
}

func (v *DataView) tableCell(id widget.TableCellID, o fyne.CanvasObject) {
	l := o.(*widget.Label)
	if id.Row >= len(v.shown) {
		return
	}
	ds, i := v.dataset(), v.shown[id.Row]
	if id.Col == 0 {
		l.SetText(v.label(i))
		return
	}
	l.SetText(report.Decimals(float64(ds.Sample(i)[id.Col-1]), 3))
}

func (v *DataView) tableHeader(id widget.TableCellID, o fyne.CanvasObject) {
	l := o.(*widget.Label)
	switch {
	case id.Row < 0 && id.Col == 0:
		l.SetText("class")
	case id.Row < 0 && id.Col > 0:
		l.SetText(v.featureName(id.Col - 1))
	case id.Col < 0 && id.Row >= 0 && id.Row < len(v.shown):
		l.SetText(fmt.Sprint(v.shown[id.Row]))
	}
}

func (v *DataView) featureName(j int) string {
	if names := v.s.Data.Train.Features; j < len(names) {
		return names[j]
	}
	return fmt.Sprintf("x%d", j)
}

// featureStats is each feature's mean, standard deviation, minimum and
// maximum over a dataset, in the file's own units: a standardised set's
// mean and std are those it was standardised with (0 and 1 as models see
// it, which says nothing), its minimum and maximum scaled back.
func featureStats(ds *data.Dataset) [][4]float64 {
	dim := ds.Dim()
	out := make([][4]float64, dim)
	st := ds.Standardization
	if st != nil && (len(st.Mean) != dim || len(st.Std) != dim) {
		st = nil
	}
	for j := range dim {
		lo, hi := math.Inf(1), math.Inf(-1)
		var s, ss float64
		for i := range ds.Len() {
			x := float64(ds.X[i*dim+j])
			if st != nil {
				x = x*float64(st.Std[j]) + float64(st.Mean[j])
			}
			s, ss = s+x, ss+x*x
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		n := float64(ds.Len())
		mean := s / n
		out[j] = [4]float64{mean, math.Sqrt(math.Max(ss/n-mean*mean, 0)), lo, hi}
		if st != nil {
			out[j][0], out[j][1] = float64(st.Mean[j]), float64(st.Std[j])
		}
	}
	return out
}

// SetFilter shows the samples of a class (or allClasses) with an outcome
// under the model (allOutcomes, correct, incorrect).
func (v *DataView) SetFilter(class, outcome string) {
	v.class.SetSelected(class)
	if !v.outcome.Disabled() {
		v.outcome.SetSelected(outcome)
	}
}

// Shown is how many samples pass the filters.
func (v *DataView) Shown() int { return len(v.shown) }

// SetSplit shows the train or test split.
func (v *DataView) SetSplit(split string) { v.split.SetSelected(split) }

// ScrollTo scrolls the grid (or table) to the i-th sample shown.
func (v *DataView) ScrollTo(i int) {
	if v.s.Data != nil && v.s.Data.Tabular() {
		v.table.ScrollTo(widget.TableCellID{Row: i})
		return
	}
	v.grid.ScrollTo(i)
}

// ScrollToOffset scrolls the grid to a pixel offset (as a wheel does).
func (v *DataView) ScrollToOffset(y float32) { v.grid.ScrollToOffset(y) }
