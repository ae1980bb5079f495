package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	imagedraw "image/draw"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/data"
	"faithlab/core/model"
	"faithlab/core/train"
)

// ModelView trains a built-in architecture on the open dataset (only the
// architectures that fit it are offered) with a live loss and accuracy
// chart, or opens a model file; it shows the model under explanation with
// its test accuracy and confusion matrix.
type ModelView struct {
	s         *State
	arch      *selectWidget
	epochs    *entryWidget
	batch     *entryWidget
	lr        *entryWidget
	optimizer *selectWidget
	patience  *entryWidget
	seed      *entryWidget
	start     *widget.Button
	stop      *widget.Button
	bar       *widget.ProgressBar
	readout   *widget.Label
	chart     *chartView
	info      *widget.Label
	confusion *widget.Table
	matrix    [][]int
	matrixOf  *widget.Label // what the matrix shows, or that it is being computed
	// The model and data of the matrix computed (or being computed) here.
	matrixFor  *model.Model
	matrixData *Loaded
	matrixAcc  string // the accuracy computed with it, for the model's description
	history    []train.Epoch
	live       [][3]float64 // (epochs so far, running loss, running accuracy) within the epochs
	cancel     context.CancelFunc
	feed       *trainFeed // the training's progress, drawn coalesced
	draws      int        // charts drawn (tests)
	content    fyne.CanvasObject
}

func newModelView(s *State) *ModelView {
	d := train.Config{}.Defaults()
	v := &ModelView{s: s, arch: newSelect(nil, nil), epochs: newEntry(), batch: newEntry(), lr: newEntry(),
		optimizer: newSelect([]string{"adam", "sgd"}, nil), patience: newEntry(), seed: newEntry(),
		bar: widget.NewProgressBar(), readout: widget.NewLabel("Open a dataset to train on."), info: widget.NewLabel("No model open."), matrixOf: wrapped(""),
		chart: newChartView(fyne.NewSize(340, 300))}
	v.epochs.SetText(strconv.Itoa(d.Epochs))
	v.batch.SetText(strconv.Itoa(d.BatchSize))
	v.lr.SetText(strconv.FormatFloat(d.LR, 'g', -1, 64))
	v.optimizer.SetSelected(d.Optimizer)
	v.patience.SetText(strconv.Itoa(d.Patience))
	v.seed.SetText("0")
	v.readout.Wrapping = fyne.TextWrapWord // in three lines' room (linesHigh): nothing below moves
	v.info.Wrapping = fyne.TextWrapWord
	v.bar.Hide() // until training runs: Fyne's empty track reads as a full bar

	v.start = widget.NewButton("Train", v.Start)
	v.start.Importance = widget.HighImportance
	v.start.Disable()
	v.stop = widget.NewButton("Cancel", v.Cancel)
	v.stop.Disable()
	form := widget.NewForm(
		widget.NewFormItem("Architecture", v.arch),
		widget.NewFormItem("Epochs (most)", v.epochs),
		widget.NewFormItem("Batch size", v.batch),
		widget.NewFormItem("Learning rate", v.lr),
		widget.NewFormItem("Optimizer", v.optimizer),
		widget.NewFormItem("Patience (epochs; 0: none)", v.patience),
		widget.NewFormItem("Seed", v.seed),
	)
	v.confusion = widget.NewTableWithHeaders(func() (int, int) { return len(v.matrix), len(v.matrix) },
		func() fyne.CanvasObject {
			// The count's colour follows its cell's (countColour): a label's
			// grey was unreadable on the light theme's saturated blue.
			l := canvas.NewText("0000", theme.Color(theme.ColorNameForeground))
			l.Alignment, l.TextSize = fyne.TextAlignCenter, theme.CaptionTextSize()
			return container.NewStack(canvas.NewRectangle(color.Transparent), container.NewCenter(l))
		},
		v.confusionCell)
	v.confusion.CreateHeader = func() fyne.CanvasObject {
		return captionLabel("9 Ankle boot")
	}
	v.confusion.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		l := o.(*widget.Label)
		switch {
		case id.Row < 0 && id.Col >= 0:
			l.SetText(strconv.Itoa(id.Col)) // the row headers name the classes
			l.Alignment = fyne.TextAlignCenter
		case id.Col < 0 && id.Row >= 0:
			l.SetText(fmt.Sprintf("%d %s", id.Row, abbrev(v.s.modelClass(id.Row), 11)))
			l.Alignment = fyne.TextAlignLeading
		}
	}
	open := widget.NewButton("Open a model file…", func() { v.s.PickFile(v.s.OpenModel, ".flm", ".onnx") })
	left := container.NewVBox(widget.NewLabelWithStyle("Train a model", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		form, container.NewHBox(v.start, v.stop), v.bar, container.New(linesHigh(3), v.readout), widget.NewSeparator(), open)
	right := container.NewBorder(container.NewVBox(widget.NewLabelWithStyle("Model under explanation", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.info,
		v.matrixOf), nil, nil, nil, v.confusion)
	center := container.NewHSplit(container.NewBorder(nil, nil, nil, nil, v.chart), right)
	center.Offset = 0.34
	panel := container.NewVScroll(container.NewGridWrap(fyne.NewSize(330, 520), left))
	s.markIn("model.epochs", v.epochs, "", panel)
	s.markIn("model.train", v.start, "", panel)
	v.content = container.NewBorder(nil, nil, panel, nil, center)
	s.OnData(v.dataChanged)
	s.OnModel(v.modelChanged)
	return v
}

// Content is the screen.
func (v *ModelView) Content() fyne.CanvasObject { return v.content }

// dataChanged offers the architectures that fit the new dataset.
func (v *ModelView) dataChanged() {
	l := v.s.Data
	v.s.offerFitting(v.arch)
	if v.cancel == nil && len(l.Fit) > 0 {
		v.start.Enable()
	}
	v.readout.SetText(fmt.Sprintf("ready to train on %s (%d samples, %d classes): %s", displayName(l.Ref), l.Train.Len(), len(l.Train.Classes), strings.Join(l.Fit, ", ")))
	v.modelChanged()
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// config reads the form.
func (v *ModelView) config() (train.Config, error) {
	var errs []error
	num := func(e *entryWidget, name string, positive bool) int {
		n, err := strconv.Atoi(strings.TrimSpace(e.Text))
		if err != nil || n < 0 || (positive && n == 0) {
			errs = append(errs, fmt.Errorf("%s %q: want a whole number%s", name, e.Text, map[bool]string{true: " above 0", false: ""}[positive]))
		}
		return n
	}
	c := train.Config{Epochs: num(v.epochs, "epochs", true), BatchSize: num(v.batch, "batch size", true), Patience: num(v.patience, "patience", false),
		Optimizer: v.optimizer.Selected}
	if c.Patience == 0 {
		c.Patience = -1 // train.Config: negative means never stop early
	}
	lr, err := strconv.ParseFloat(strings.TrimSpace(v.lr.Text), 64)
	if err != nil || !(lr > 0) {
		errs = append(errs, fmt.Errorf("learning rate %q: want a positive number", v.lr.Text))
	}
	c.LR = lr
	seed, err := strconv.ParseUint(strings.TrimSpace(v.seed.Text), 10, 64)
	if err != nil {
		errs = append(errs, fmt.Errorf("seed %q: want a whole number", v.seed.Text))
	}
	c.Seed = seed
	return c, errors.Join(errs...)
}

// Configure fills the form (screenshots, tests).
func (v *ModelView) Configure(arch string, epochs int, seed uint64) {
	v.arch.SetSelected(arch)
	v.epochs.SetText(strconv.Itoa(epochs))
	v.seed.SetText(strconv.FormatUint(seed, 10))
}

// Start trains in the background and makes the trained model current.
func (v *ModelView) Start() {
	l := v.s.Data
	if l == nil || v.cancel != nil {
		return
	}
	cfg, err := v.config()
	if err != nil {
		v.s.status.ErrorFrom(causeTraining, err)
		return
	}
	arch := v.arch.Selected
	if err := model.Fits(arch, l.Train); err != nil {
		v.s.status.ErrorFrom(causeTraining, err)
		return
	}
	v.s.status.Resolved(causeTraining)
	path := filepath.Join(v.s.cfg.dir("models"), fmt.Sprintf("%s-%s-%s.flm", arch, displayName(l.Ref), time.Now().Format("20060102-150405")))
	fit := model.Fit{Arch: arch, Config: cfg, Train: l.Train, Test: l.Test, Kernel: v.s.cfg.Kernel,
		Source: &model.Source{Ref: l.Ref, Options: data.Options{}}, Out: path}
	v.history, v.live = nil, nil
	v.drawChart()
	v.start.Disable()
	v.stop.Enable()
	v.bar.SetValue(0)
	v.bar.Show()
	var m *model.Model
	feed := &trainFeed{}
	v.feed = feed
	v.cancel = v.s.Go("training "+arch, func(ctx context.Context) error {
		var err error
		m, err = fit.Run(ctx, func(p train.Progress) { v.progress(feed, p) })
		return err
	}, func(err error) {
		v.flush(feed) // the epochs not drawn yet, before they are counted
		feed.close()
		v.cancel = nil
		v.stop.Disable()
		v.start.Enable()
		switch {
		case errors.Is(err, context.Canceled):
			v.readout.SetText(fmt.Sprintf("cancelled after %d epochs; nothing saved", len(v.history)))
			v.bar.Hide()
		case err != nil:
			v.readout.SetText("training failed: " + oneLine(err.Error()))
			v.bar.Hide()
		default:
			v.bar.SetValue(1)
			v.readout.SetText(fmt.Sprintf("test accuracy %.4f after %d epochs (%s); saved %s", m.Test.Accuracy, len(m.Training.History), stoppedWords(m.Training.Stopped), filepath.Base(path)))
			prev, prevPath := v.s.Model, v.s.ModelPath
			v.s.SetModel(m, path)
			if prev != nil {
				// Never a silent swap: say it, and offer the way back.
				v.s.status.Info(fmt.Sprintf("The model under explanation is now %s (Explain, Evaluate and Inspect use it); it was %s.", v.s.modelName(), describeWhich(prev, prevPath)))
				back := prev.Arch
				if prevPath != "" && prev.Arch == m.Arch {
					back += " in " + filepath.Base(prevPath) // the file tells two of one architecture apart
				}
				v.s.status.Offer("Switch back to "+back, func() {
					v.s.SetModel(prev, prevPath)
					v.s.status.Info("The model under explanation is " + v.s.modelName() + " again.")
				})
			}
		}
	})
}

// trainFeed carries a training's progress to the UI goroutine, coalesced:
// the trainer records every event here, and at most one redraw is queued
// at a time, at least 33 ms after the last, which draws the latest state
// and every epoch finished since. (A redraw queued per finished epoch
// backed the UI's queue up on a small table: the epoch counter trailed,
// and a click on Cancel waited behind hundreds of charts.)
type trainFeed struct {
	mu     sync.Mutex
	epochs []train.Epoch // finished since the last redraw
	live   [][3]float64  // running means since the last redraw
	frac   float64       // the progress bar's value
	line   string        // the readout
	fresh  bool          // frac and line not shown yet
	queued bool          // a redraw is queued or waiting for its time
	last   time.Time     // when the last redraw ran
	point  time.Time     // when the last running mean was kept
	done   bool          // the training ended: late redraws do nothing
}

// redrawEvery is the least time between two redraws of a training's
// progress (about 30 a second).
const redrawEvery = 33 * time.Millisecond

// progress records a training event (on the trainer's goroutine) and
// queues a redraw unless one is queued.
func (v *ModelView) progress(f *trainFeed, p train.Progress) {
	f.mu.Lock()
	defer f.mu.Unlock()
	x := float64(p.Epoch-1) + float64(p.Batch)/float64(p.Batches)
	f.frac = x / float64(p.Epochs)
	f.line = fmt.Sprintf("epoch %d/%d, batch %d/%d\nloss %.4f, accuracy %.4f", p.Epoch, p.Epochs, p.Batch, p.Batches, p.Loss, p.Accuracy)
	f.fresh = true
	switch {
	case p.EpochDone:
		f.epochs = append(f.epochs, *p.Last)
	case time.Since(f.point) > 500*time.Millisecond:
		f.point = time.Now()
		f.live = append(f.live, [3]float64{x, p.Loss, p.Accuracy})
	}
	if f.queued || f.done {
		return
	}
	f.queued = true
	v.s.pending.Add(1) // State.Wait waits for the redraw too
	queue := func() {
		v.s.cfg.Do(func() {
			defer v.s.pending.Add(-1)
			v.flush(f)
		})
	}
	if wait := redrawEvery - time.Since(f.last); wait > 0 {
		time.AfterFunc(wait, queue)
	} else {
		queue()
	}
}

// flush shows what the feed holds (on the UI goroutine).
func (v *ModelView) flush(f *trainFeed) {
	f.mu.Lock()
	epochs, live, frac, line, fresh, done := f.epochs, f.live, f.frac, f.line, f.fresh, f.done
	f.epochs, f.live, f.fresh, f.queued, f.last = nil, nil, false, false, time.Now()
	f.mu.Unlock()
	if done || v.feed != f {
		return
	}
	if fresh {
		v.bar.SetValue(frac)
		v.readout.SetText(line)
	}
	if len(epochs) > 0 || len(live) > 0 {
		v.history = append(v.history, epochs...)
		v.live = append(v.live, live...)
		v.drawChart()
	}
}

// close ends the feed: a redraw still queued does nothing.
func (f *trainFeed) close() {
	f.mu.Lock()
	f.done = true
	f.mu.Unlock()
}

// Cancel stops training within a batch.
func (v *ModelView) Cancel() {
	if v.cancel != nil {
		v.cancel()
		v.readout.SetText("cancelling…")
	}
}

// Training says whether a training runs.
func (v *ModelView) Training() bool { return v.cancel != nil }

// drawChart redraws the loss and accuracy curves of the training so far.
func (v *ModelView) drawChart() {
	var ep, loss, acc, vloss, vacc []float64
	for _, e := range v.history {
		ep, loss, acc = append(ep, float64(e.Epoch)), append(loss, e.Loss), append(acc, e.Accuracy)
		if e.ValLoss != 0 {
			vloss, vacc = append(vloss, e.ValLoss), append(vacc, e.ValAcc)
		}
	}
	// The running means restart with every epoch: one line per epoch.
	var lossS, accS []series
	for i, p := range v.live {
		if i == 0 || math.Ceil(p[0]) != math.Ceil(v.live[i-1][0]) {
			name := "running mean" // of the epoch's training batches
			lossS = append(lossS, series{Name: name, Colour: green, Thin: true, NoKey: len(lossS) > 0})
			accS = append(accS, series{Name: name, Colour: green, Thin: true, NoKey: len(accS) > 0})
		}
		l, a := &lossS[len(lossS)-1], &accS[len(accS)-1]
		l.X, l.Y = append(l.X, p[0]), append(l.Y, p[1])
		a.X, a.Y = append(a.X, p[0]), append(a.Y, p[2])
	}
	valX := ep[:len(vloss)]
	lossS = append(lossS, series{Name: "epoch mean", X: ep, Y: loss, Colour: blue}, series{Name: "validation", X: valX, Y: vloss, Colour: orange, Dashed: true})
	accS = append(accS, series{Name: "epoch mean", X: ep, Y: acc, Colour: blue}, series{Name: "validation", X: valX, Y: vacc, Colour: orange, Dashed: true})
	v.draws++
	v.chart.Draw(func(w, h int) image.Image {
		// Loss above accuracy, each half the height, at most 1.6 times as wide as high.
		h = min(h/2, w*5/8)
		both := image.NewRGBA(image.Rect(0, 0, w, 2*h))
		drawInto(both, lineChart("Loss", "epoch", "cross-entropy", lossS, w, h, 0, 0), 0)
		drawInto(both, lineChart("Accuracy", "epoch", "accuracy", accS, w, h, 0, 1), h)
		return both
	})
}

// drawInto copies src into dst at row y.
func drawInto(dst *image.RGBA, src image.Image, y int) {
	b := src.Bounds()
	imagedraw.Draw(dst, image.Rect(0, y, b.Dx(), y+b.Dy()), src, b.Min, imagedraw.Src)
}

// modelChanged shows the model under explanation and its confusion matrix
// (recorded at training, else computed on the open dataset when it fits).
//
// The matrix shown is always the named model's: another model's is
// cleared at once, and the caption says while one is being computed.
func (v *ModelView) modelChanged() {
	m := v.s.Model
	if m == nil {
		v.info.SetText("No model open: train one, or open one from the Library.")
		v.setMatrix(nil, "")
		return
	}
	text := describeModel(m)
	if v.s.ModelPath != "" {
		text = filepath.Base(v.s.ModelPath) + ": " + text
	}
	if v.s.Data != nil && !v.s.Fits() {
		text += fmt.Sprintf("\nIt does not take the open dataset's samples (%v, %d classes).", v.s.Data.Train.Shape, len(v.s.Data.Train.Classes))
	}
	v.info.SetText(text)
	caption := "Confusion matrix on the test split (rows: true class, columns: predicted)"
	if m.Test != nil && len(m.Test.Confusion) > 0 && (v.s.Data == nil || m.Source != nil && m.Source.Ref == v.s.Data.Ref) {
		v.setMatrix(m.Test.Confusion, caption+", as recorded when it was trained")
		return
	}
	if !v.s.Fits() {
		v.setMatrix(nil, "No confusion matrix: the model does not take the open dataset's samples.")
		return
	}
	if v.matrixFor == m && v.matrixData == v.s.Data {
		v.info.SetText(text + v.matrixAcc)
		return // computed, or being computed (the predictions ready wake this too)
	}
	v.matrixFor, v.matrixData, v.matrixAcc = m, v.s.Data, ""
	data := v.s.Data
	name := m.Arch
	if v.s.ModelPath != "" {
		name = filepath.Base(v.s.ModelPath)
	}
	v.setMatrix(nil, fmt.Sprintf("Computing the confusion matrix of %s on %s's test split…", name, displayName(data.Ref)))
	net, test := m.Net.Clone(), data.Test
	var ev train.Evaluation
	v.s.Go("evaluating the model", func(ctx context.Context) error {
		var err error
		ev, err = train.Evaluate(ctx, net, test, 512)
		return err
	}, func(err error) {
		if v.s.Model != m || v.s.Data != data {
			return
		}
		if err != nil {
			v.matrixFor = nil
			v.setMatrix(nil, "No confusion matrix: evaluating the model failed (the status bar says why).")
			return
		}
		v.matrixAcc = fmt.Sprintf("\nAccuracy on %s's test split: %.4f", displayName(data.Ref), ev.Accuracy)
		v.info.SetText(text + v.matrixAcc)
		v.setMatrix(ev.Confusion, caption+" of "+displayName(data.Ref))
	})
}

// setMatrix shows a confusion matrix (nil: none) under a caption saying
// what it is, or why there is none.
func (v *ModelView) setMatrix(m [][]int, caption string) {
	v.matrixOf.SetText(caption)
	v.matrix = m
	for c := range m {
		v.confusion.SetColumnWidth(c, 36)
	}
	v.confusion.Refresh()
}

// confusionCell shades a cell by its share of its row (the true class).
func (v *ModelView) confusionCell(id widget.TableCellID, o fyne.CanvasObject) {
	c := o.(*fyne.Container)
	rect, l := c.Objects[0].(*canvas.Rectangle), c.Objects[1].(*fyne.Container).Objects[0].(*canvas.Text)
	if id.Row >= len(v.matrix) || id.Col >= len(v.matrix) {
		return
	}
	row := v.matrix[id.Row]
	tot := 0
	for _, n := range row {
		tot += n
	}
	share := 0.0
	if tot > 0 {
		share = float64(row[id.Col]) / float64(tot)
	}
	base := blue
	if id.Row != id.Col {
		base = color.RGBA{213, 94, 0, 255}
	}
	fill := color.NRGBA{base.R, base.G, base.B, uint8(30 + 225*math.Sqrt(share))} // √ so that small shares still show
	rect.FillColor = fill
	l.Color = countColour(fill, theme.Color(theme.ColorNameBackground))
	if row[id.Col] == 0 {
		rect.FillColor = color.Transparent
		l.Color = theme.Color(theme.ColorNameForeground)
	}
	rect.Refresh()
	l.Text = strconv.Itoa(row[id.Col])
	l.TextSize = theme.CaptionTextSize()
	l.Refresh()
}

// countColour is black or white, whichever stands out more on a cell
// filled with fill over the background bg: by the relative luminance
// (WCAG 2) of what shows.
func countColour(fill, bg color.Color) color.Color {
	f, b := color.NRGBAModel.Convert(fill).(color.NRGBA), color.NRGBAModel.Convert(bg).(color.NRGBA)
	a := float64(f.A) / 255
	over := func(x, y uint8) float64 { return (a*float64(x) + (1-a)*float64(y)) / 255 }
	if relativeLuminance(over(f.R, b.R), over(f.G, b.G), over(f.B, b.B)) > 0.179 {
		return color.Black // 0.179: where black's contrast and white's are equal
	}
	return color.White
}

// relativeLuminance is WCAG 2's of an sRGB colour with channels in [0, 1].
func relativeLuminance(r, g, b float64) float64 {
	lin := func(c float64) float64 {
		if c <= 0.04045 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// abbrev cuts a name to n characters.
func abbrev(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
