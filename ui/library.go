package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/data"
	"faithlab/core/model"
)

// Library lists what the workbench can open: datasets (the built-in ids,
// opened files and folders) and models (those trained here, the shipped
// one, opened files), each with what it is.
type Library struct {
	s           *State
	datasets    []string
	dsInfo      map[string]string // what each dataset holds, by datasetKey
	dsConv      map[string]string // how an image folder's files became its samples, by datasetKey
	reading     map[string]bool   // datasets being described
	models      []string
	mdInfo      map[string]string
	dsList      *widget.List
	mdList      *widget.List
	dsDetail    *widget.Label
	current     *widget.Label // what is open now
	mdDetail    *widget.Label
	selDS       string
	selMD       string
	onOpen      func(tab int)
	openPath    func(path string) // opens a model file as what it is (Workbench.OpenPath)
	repro       *Reproduce        // "Reproduce a paper…", made when first asked for
	reproDialog dialog.Dialog     // its dialog, while shown or since
	content     fyne.CanvasObject
}

func newLibrary(s *State) *Library {
	l := &Library{s: s, dsInfo: map[string]string{}, dsConv: map[string]string{}, reading: map[string]bool{}, mdInfo: map[string]string{},
		dsDetail: widget.NewLabel("Pick a dataset to see what it holds."), mdDetail: widget.NewLabel("Pick a model to see what it is.")}
	l.dsDetail.Wrapping, l.mdDetail.Wrapping = fyne.TextWrapWord, fyne.TextWrapWord
	l.dsList = widget.NewList(func() int { return len(l.datasets) },
		func() fyne.CanvasObject { return twoLines() },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			ref := l.datasets[id]
			setTwoLines(o, displayName(ref), l.dsInfo[l.datasetKey(ref)])
		})
	l.dsList.OnSelected = func(id widget.ListItemID) {
		l.selDS = l.datasets[id]
		l.describeDataset(l.selDS)
	}
	l.mdList = widget.NewList(func() int { return len(l.models) },
		func() fyne.CanvasObject { return twoLines() },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			p := l.models[id]
			setTwoLines(o, filepath.Base(p), l.mdInfo[p])
		})
	l.mdList.OnSelected = func(id widget.ListItemID) {
		l.selMD = l.models[id]
		l.mdDetail.SetText(l.mdInfo[l.selMD])
	}
	openDS := widget.NewButton("Open", func() {
		if l.selDS != "" {
			s.OpenData(l.selDS)
			l.open(TabData)
		}
	})
	openDS.Importance = widget.HighImportance
	path := newEntry()
	path.SetPlaceHolder("a path: IDX or CIFAR folder, image folder, .csv, .npz")
	path.OnSubmitted = func(p string) {
		if p = strings.TrimSpace(p); p != "" {
			s.OpenData(p)
			l.open(TabData)
		}
	}
	openMD := widget.NewButton("Open", func() {
		if l.selMD != "" && l.openPath != nil {
			l.openPath(l.selMD)
		}
	})
	openMD.Importance = widget.HighImportance
	refresh := widget.NewButton("Refresh", l.Refresh)
	l.current = widget.NewLabel("")
	l.current.Truncation = fyne.TextTruncateEllipsis
	dsPane := container.NewBorder(
		container.NewVBox(widget.NewLabelWithStyle("Datasets", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
			container.NewBorder(nil, nil, nil, widget.NewButton("Open path", func() { path.OnSubmitted(path.Text) }), path)),
		container.NewVBox(widget.NewSeparator(), l.dsDetail, container.NewHBox(openDS)), nil, nil, l.dsList)
	mdPane := container.NewBorder(
		container.NewHBox(widget.NewLabelWithStyle("Models", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), refresh),
		container.NewVBox(widget.NewSeparator(), l.mdDetail, container.NewHBox(openMD)), nil, nil, l.mdList)
	split := container.NewHSplit(dsPane, mdPane)
	reproduceBtn := widget.NewButton("Reproduce a paper…", l.showReproduce)
	l.content = container.NewBorder(container.NewVBox(container.NewBorder(nil, nil, nil, reproduceBtn, l.current), widget.NewSeparator()), nil, nil, nil, split)
	s.OnData(l.Refresh)
	s.OnModel(l.Refresh)
	l.Refresh()
	return l
}

// Content is the screen.
func (l *Library) Content() fyne.CanvasObject { return l.content }

func (l *Library) open(tab int) {
	if l.onOpen != nil {
		l.onOpen(tab)
	}
}

// Refresh lists the datasets and models again and describes them in the
// background.
func (l *Library) Refresh() {
	open := "Open now: no dataset"
	if d := l.s.Data; d != nil {
		open = "Open now: dataset " + displayName(d.Ref)
	}
	if l.s.ModelPath != "" {
		open += ", model " + filepath.Base(l.s.ModelPath)
	} else {
		open += ", no model"
	}
	l.current.SetText(open)
	ds := append([]string{}, data.IDs()...)
	for _, r := range l.s.Recent(prefRecentData) {
		ds = appendNew(ds, r)
	}
	if d := l.s.Data; d != nil {
		ds = appendNew(ds, d.Ref)
	}
	l.datasets = ds
	files, _ := filepath.Glob(filepath.Join(l.s.cfg.dir("models"), "*.flm"))
	scripts, _ := filepath.Glob(filepath.Join(l.s.cfg.dir("models"), "*.pt"))
	onnxs, _ := filepath.Glob(filepath.Join(l.s.cfg.dir("models"), "*.onnx"))
	files = append(append(files, scripts...), onnxs...)
	sort.Sort(sort.Reverse(sort.StringSlice(files))) // newest first: names end in a time stamp
	var models []string
	for _, p := range append(files, l.s.Recent(prefRecentModels)...) {
		models = appendNew(models, p)
	}
	files = models
	l.models = files
	l.dsList.Refresh()
	l.mdList.Refresh()
	// The highlighted rows stay on the items they were on, which the new
	// lists may hold elsewhere, and the details describe them.
	reselect(l.dsList, l.datasets, &l.selDS, func() { l.dsDetail.SetText("Pick a dataset to see what it holds.") })
	reselect(l.mdList, l.models, &l.selMD, func() { l.mdDetail.SetText("Pick a model to see what it is.") })
	l.describeDatasets()
	var todo []string
	for _, p := range files {
		if _, ok := l.mdInfo[p]; !ok {
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		return
	}
	info := map[string]string{}
	l.s.Go("reading models", func(ctx context.Context) error {
		for _, p := range todo {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if model.IsTorchScript(p) {
				m, err := model.LoadTorchScript(p)
				if err != nil {
					info[p] = "cannot be read: " + err.Error()
					continue
				}
				info[p] = fmt.Sprintf("TorchScript classifier for %v inputs, %d classes: evaluated by campaigns on the torch engine", m.InputShape, len(m.Classes))
				continue
			}
			m, err := model.Load(p, l.s.cfg.Kernel)
			if err != nil {
				info[p] = "cannot be read: " + err.Error()
				continue
			}
			info[p] = describeModel(m)
		}
		return nil
	}, func(error) {
		for k, v := range info {
			l.mdInfo[k] = v
		}
		l.mdList.Refresh()
		if l.selMD != "" {
			l.mdDetail.SetText(l.mdInfo[l.selMD])
		}
	})
}

// describeDataset shows what a dataset holds (once read by
// describeDatasets).
func (l *Library) describeDataset(ref string) {
	key := l.datasetKey(ref)
	if d, ok := l.dsInfo[key]; ok {
		if c := l.dsConv[key]; c != "" {
			d += "; " + c
		}
		l.dsDetail.SetText(ref + ": " + d)
		return
	}
	l.dsDetail.SetText("reading " + ref + "…")
}

// datasetKey is what a dataset's description depends on: its reference
// and, for a folder, the options the workbench reads it with
// (State.dataOptions: the open model's side, channels, resize and
// classes), so that another model describes a folder of images again.
// The open dataset is described as it was read.
func (l *Library) datasetKey(ref string) string {
	if d := l.s.Data; d != nil && d.Ref == ref {
		return fmt.Sprintf("%s\x00open %p", ref, d)
	}
	if st, err := os.Stat(ref); err != nil || !st.IsDir() || data.IsID(ref) {
		return ref
	}
	opt := l.s.dataOptions(ref)
	key := fmt.Sprintf("%s\x00%d %d %v", ref, opt.ImageSize, opt.Channels, opt.Resize)
	if c := opt.Classes; c != nil {
		key += "\x00" + strings.Join(c.Names, "\x00") + "\x00" + strings.Join(c.WNIDs, "\x00")
	}
	return key
}

// describeDatasets reads the listed datasets not yet described, in the
// background, to say what each holds: an image folder as the workbench
// would open it now (State.dataOptions), the open dataset as it was read.
func (l *Library) describeDatasets() {
	type job struct {
		ref, key string
		opt      data.Options
	}
	var todo []job
	for _, ref := range l.datasets {
		key := l.datasetKey(ref)
		if _, ok := l.dsInfo[key]; ok || l.reading[key] {
			continue
		}
		if d := l.s.Data; d != nil && d.Ref == ref {
			l.dsInfo[key] = summaryText(data.Summary{Shape: d.Train.Shape, Train: d.Train.Len(), Test: d.Test.Len(), Classes: d.Train.Classes,
				Masks: d.Train.Masks != nil})
			if c := d.Train.Conversion; c != nil {
				l.dsConv[key] = c.String()
			}
			continue
		}
		todo = append(todo, job{ref, key, l.s.dataOptions(ref)})
		l.reading[key] = true
	}
	if len(todo) == 0 {
		return
	}
	info, conv := map[string]string{}, map[string]string{}
	l.s.Go("reading datasets", func(ctx context.Context) error {
		for _, j := range todo {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			d, err := data.DescribeWith(j.ref, j.opt)
			if err != nil {
				info[j.key] = "cannot be opened: " + err.Error()
				continue
			}
			info[j.key] = summaryText(d)
			if d.Conversion != nil {
				conv[j.key] = d.Conversion.String()
			}
		}
		return nil
	}, func(error) {
		for k, v := range info {
			l.dsInfo[k], l.dsConv[k] = v, conv[k]
			delete(l.reading, k)
		}
		if l.selDS != "" {
			l.describeDataset(l.selDS)
		}
		l.dsList.Refresh()
	})
}

// summaryText says what a dataset holds: its kind and shape, its splits
// and classes, its masks.
func summaryText(d data.Summary) string {
	kind := "images"
	if data.Kind(d.Shape) == "tabular" {
		kind = fmt.Sprintf("tabular, %d features", d.Shape[0])
	}
	text := fmt.Sprintf("%s of shape %v; %d training and %d test samples; %d classes: %s", kind, d.Shape, d.Train, d.Test,
		len(d.Classes), strings.Join(d.Classes[:min(len(d.Classes), 10)], ", "))
	if d.Masks {
		text += "; a ground-truth mask per sample"
	}
	return text
}

// describeModel says what a model is: architecture, data, accuracy and
// how it was trained.
func describeModel(m *model.Model) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s for %v inputs, %d classes", m.Arch, m.InputShape, len(m.Classes))
	if m.Source != nil {
		fmt.Fprintf(&b, "; trained on %s", displayName(m.Source.Ref))
	}
	if m.Test != nil {
		fmt.Fprintf(&b, "; test accuracy %.4f", m.Test.Accuracy)
	}
	if r := m.Training; r != nil {
		fmt.Fprintf(&b, "; trained %d epochs (%s; weights of epoch %d), %s, lr %g, seed %d, %s s", len(r.History), stoppedWords(r.Stopped), r.BestEpoch,
			r.Config.Optimizer, r.Config.LR, r.Config.Seed, secondsText(r.Seconds))
	}
	return b.String()
}

// displayName is how a dataset reference is shown: an id as it is, a path
// by its last element.
func displayName(ref string) string {
	if slices.Contains(data.IDs(), ref) {
		return ref
	}
	if _, err := os.Stat(ref); err == nil {
		return filepath.Base(ref)
	}
	return ref
}

// twoLines is a list row: a bold name over a one-line description.
// twoLines is a list row: a name, and its description wrapped in two
// lines' room (whole under the pointer, and below the list for the row
// picked, should it need more).
func twoLines() fyne.CanvasObject {
	name := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	name.Truncation = fyne.TextTruncateEllipsis
	desc := newHint("")
	desc.Truncation, desc.Wrapping = fyne.TextTruncateOff, fyne.TextWrapWord
	return container.NewVBox(name, container.New(captionLines(2), desc))
}

func setTwoLines(o fyne.CanvasObject, name, desc string) {
	c := o.(*fyne.Container)
	c.Objects[0].(*widget.Label).SetText(name)
	c.Objects[1].(*fyne.Container).Objects[0].(*hint).SetText(desc)
}

// stoppedWords says why a training run ended (train.Record.Stopped).
func stoppedWords(stopped string) string {
	if w, ok := map[string]string{"epochs": "all epochs run", "early-stopping": "stopped early", "cancelled": "cancelled"}[stopped]; ok {
		return w
	}
	return stopped
}

// samePlace is a path as the file system resolves it (absolute, links
// followed), so that one file reached by two paths is one item; ids and
// paths that do not exist stay as they are.
func samePlace(p string) string {
	if slices.Contains(data.IDs(), p) {
		return p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// appendNew appends item unless list holds it already, by another path too.
func appendNew(list []string, item string) []string {
	key := samePlace(item)
	if slices.ContainsFunc(list, func(v string) bool { return samePlace(v) == key }) {
		return list
	}
	return append(list, item)
}

// reselect highlights *sel in list again at its new row, or clears it (and
// the details, with none) when the list no longer holds it.
func reselect(list *widget.List, items []string, sel *string, none func()) {
	if *sel == "" {
		return
	}
	if i := slices.Index(items, *sel); i >= 0 {
		list.Select(i)
		return
	}
	*sel = ""
	list.UnselectAll()
	none()
}

// secondsText writes a duration in seconds with a decimal below 10 s, so
// that a short training is not "0 s".
func secondsText(s float64) string {
	if s < 10 {
		return strconv.FormatFloat(s, 'f', 1, 64)
	}
	return strconv.FormatFloat(s, 'f', 0, 64)
}
