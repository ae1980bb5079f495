package ui

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/data"
)

// Loaded is a dataset's splits with their thumbnails, made off the UI goroutine.
type Loaded struct {
	ID          string
	Train, Test *data.Dataset
	thumbs      map[string][]*image.RGBA
}

// Browser shows a dataset as a grid of labelled thumbnails with its class
// counts, and lets the user pick another dataset or split.
type Browser struct {
	pick    *widget.Select
	path    *widget.Entry
	split   *widget.RadioGroup
	status  *widget.Label
	counts  *widget.Label
	grid    *widget.GridWrap
	content fyne.CanvasObject

	do      func(func()) // runs UI updates from other goroutines (fyne.Do)
	mu      sync.Mutex
	cur     *Loaded
	shown   []*image.RGBA
	labels  []string
	cancel  context.CancelFunc
	onLoad  []func(*Loaded)
	loading sync.WaitGroup
}

// NewBrowser builds the browser; call Open to load a dataset. Background
// work reaches the widgets through do (fyne.Do in the app).
func NewBrowser(do func(func())) *Browser {
	b := &Browser{do: do, status: widget.NewLabel("no dataset"), counts: widget.NewLabel("")}
	b.counts.TextStyle = fyne.TextStyle{Monospace: true}
	b.grid = widget.NewGridWrap(
		func() int { return len(b.shown) },
		func() fyne.CanvasObject {
			img := canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
			img.FillMode = canvas.ImageFillContain
			img.ScaleMode = canvas.ImageScalePixels
			img.SetMinSize(fyne.NewSize(76, 76))
			lbl := widget.NewLabel("")
			lbl.SizeName = theme.SizeNameCaptionText
			lbl.Alignment = fyne.TextAlignCenter
			lbl.Truncation = fyne.TextTruncateEllipsis
			return container.NewBorder(nil, lbl, nil, nil, img)
		},
		func(id widget.GridWrapItemID, o fyne.CanvasObject) {
			c := o.(*fyne.Container)
			img := c.Objects[0].(*canvas.Image)
			lbl := c.Objects[1].(*widget.Label)
			if id >= len(b.shown) {
				return
			}
			img.Image = b.shown[id]
			img.Refresh()
			lbl.SetText(b.labels[id])
		})
	b.pick = widget.NewSelect(data.IDs(), func(id string) { b.Open(id) })
	b.path = widget.NewEntry()
	b.path.SetPlaceHolder("or a path: IDX or CIFAR folder, image folder, .csv, .npz")
	b.path.OnSubmitted = func(p string) { b.Open(p) }
	b.split = widget.NewRadioGroup([]string{"train", "test"}, func(string) { b.show() })
	b.split.Horizontal = true
	b.split.SetSelected("train")
	pick := container.NewGridWrap(fyne.NewSize(170, b.pick.MinSize().Height), b.pick)
	openPath := widget.NewButton("Open", func() { b.Open(b.path.Text) })
	pathBox := container.NewBorder(nil, nil, nil, openPath, b.path)
	top := container.NewBorder(nil, nil, container.NewHBox(widget.NewLabel("Dataset"), pick), container.NewHBox(b.split, b.status), pathBox)
	side := container.NewVScroll(container.NewVBox(widget.NewLabelWithStyle("Class counts", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), b.counts))
	split := container.NewHSplit(b.grid, side)
	split.Offset = 0.78
	b.content = container.NewBorder(top, nil, nil, nil, split)
	return b
}

// Content is the browser's screen.
func (b *Browser) Content() fyne.CanvasObject { return b.content }

// OnLoad registers fn to run on the UI goroutine whenever a dataset loads.
func (b *Browser) OnLoad(fn func(*Loaded)) { b.onLoad = append(b.onLoad, fn) }

// Current returns the loaded dataset, or nil.
func (b *Browser) Current() *Loaded {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

// Wait blocks until the last Open has finished loading (for tests and screenshots).
func (b *Browser) Wait() { b.loading.Wait() }

// Open loads a dataset by id or path in the background (UI goroutine).
func (b *Browser) Open(id string) {
	if b.cancel != nil {
		b.cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	if slices.Contains(data.IDs(), id) && b.pick.Selected != id {
		b.pick.SetSelected(id) // re-enters Open once, harmlessly cancelled above
		return
	}
	b.status.SetText("loading " + id + "…")
	b.loading.Add(1)
	go func() {
		defer b.loading.Done()
		l, err := load(ctx, id)
		if ctx.Err() != nil {
			return
		}
		b.do(func() {
			if err != nil {
				b.status.SetText("error: " + err.Error())
				return
			}
			b.mu.Lock()
			b.cur = l
			b.mu.Unlock()
			b.status.SetText(fmt.Sprintf("%s: %d train, %d test, shape %v", id, l.Train.Len(), l.Test.Len(), l.Train.Shape))
			b.show()
			for _, fn := range b.onLoad {
				fn(l)
			}
		})
	}()
}

func load(ctx context.Context, id string) (*Loaded, error) {
	tr, te, err := data.Open(id, data.Options{})
	if err != nil {
		return nil, err
	}
	l := &Loaded{ID: id, Train: tr, Test: te, thumbs: map[string][]*image.RGBA{}}
	for name, ds := range map[string]*data.Dataset{"train": tr, "test": te} {
		th := make([]*image.RGBA, ds.Len())
		for i := range th {
			if i%4096 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			th[i] = Thumbnail(ds, i)
		}
		l.thumbs[name] = th
	}
	return l, nil
}

// show puts the selected split of the current dataset on screen (UI goroutine).
func (b *Browser) show() {
	b.mu.Lock()
	l := b.cur
	b.mu.Unlock()
	if l == nil {
		return
	}
	ds := l.Train
	if b.split.Selected == "test" {
		ds = l.Test
	}
	b.shown = l.thumbs[b.split.Selected]
	b.labels = make([]string, ds.Len())
	for i, y := range ds.Y {
		b.labels[i] = ds.Classes[y]
	}
	var sb strings.Builder
	for i, n := range ds.ClassCounts() {
		fmt.Fprintf(&sb, "%-12s %6d\n", ds.Classes[i], n)
	}
	fmt.Fprintf(&sb, "%-12s %6d", "total", ds.Len())
	b.counts.SetText(sb.String())
	b.grid.Refresh()
	b.grid.ScrollToTop()
}
