package ui

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/campaign"
	"faithlab/core/report"
	"faithlab/core/store"
)

// Results shows a run's tidy results as a table — sorted by a tap on a
// column's header, filtered by text — beside another run's (differences
// highlighted) when one is chosen to compare with; the run's figures drawn
// in the window; and exports the CSV and the figures (PNG, SVG, PDF)
// through file dialogs, asking before anything is overwritten.
type Results struct {
	s        *State
	runs     *selectWidget
	compare  *selectWidget
	filter   *entryWidget
	diffOnly *widget.Check
	state    *widget.Label   // the run's name, counts and manifest
	answer   *widget.Label   // which method to trust: the answers' headlines, first
	trust    *fyne.Container // the Which method to trust tab (report.Answer)
	summary  *widget.Label   // the headline scores, a monospaced table
	diag     *fyne.Container // the run's bias checks and warnings as tables (report.Diagnose)
	diagTabs []diagTable     // what it shows
	cards    *fyne.Container // the report card of each protocol setting
	drawCard func()          // draws the open run's report card (nil: none open)
	tabs     *container.AppTabs
	table    *widget.Table
	figSel   *selectWidget // the figures by protocol and kind (figureLabels)
	figFind  *entryWidget  // words the figures listed hold
	figure   *canvas.Image
	figNone  *widget.Label // in the figure's place while none is shown: why
	opening  string        // the run folder being read (Open), "" when none
	run      *campaign.Results
	other    *campaign.Results
	header   []string
	all      [][]string // the run's CSV rows, without the header
	rows     [][]string // filtered and sorted, with the comparison's columns
	sortCol  int
	desc     bool
	figs     []report.Figure
	thumbs   map[string]image.Image // the figures' thumbnails by label, of the run and theme in thumbsOf
	thumbsOf string
	onShow   func()
	content  fyne.CanvasObject
}

func newResults(s *State) *Results {
	r := &Results{s: s, filter: newEntry(), summary: widget.NewLabel(""), diag: container.NewVBox(), sortCol: -1,
		state:  widget.NewLabel("No run open: launch a campaign on Evaluate, or open a run folder."),
		figure: canvas.NewImageFromImage(nil), figNone: widget.NewLabel("No run open: no figures.")}
	r.summary.TextStyle = fyne.TextStyle{Monospace: true}
	r.answer = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	r.answer.Wrapping = fyne.TextWrapWord
	r.answer.Hide()
	s.mark("results.answer", r.answer, "")
	r.state.Wrapping = fyne.TextWrapWord
	r.runs = newSelect(nil, func(dir string) {
		if r.run == nil || r.run.Dir != dir {
			r.Open(dir, false)
		}
	})
	r.runs.PlaceHolder = "(pick a run)"
	r.compare = newSelect(nil, func(dir string) { r.setCompare(dir) })
	r.compare.PlaceHolder = "(compare with…)"
	r.filter.SetPlaceHolder("filter rows, e.g. roar accuracy")
	r.filter.OnChanged = func(string) { r.refilter() }
	r.diffOnly = widget.NewCheck("differences only", func(bool) { r.refilter() })
	r.table = widget.NewTableWithHeaders(func() (int, int) { return len(r.rows), r.columns() },
		func() fyne.CanvasObject {
			l := widget.NewLabel("0000000000000")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		r.cell)
	r.table.CreateHeader = func() fyne.CanvasObject {
		b := widget.NewButton("", nil)
		b.Importance = widget.LowImportance
		return b
	}
	r.table.UpdateHeader = r.headerCell
	r.figSel = newSelect(nil, func(label string) { r.showFigure(r.figIndex(label)) })
	r.figSel.PlaceHolder = "(no figures)"
	r.figFind = newEntry()
	r.figFind.SetPlaceHolder("find, e.g. roar curves")
	r.figFind.OnChanged = func(string) { r.listFigures() }
	r.figure.FillMode = canvas.ImageFillContain
	r.figure.SetMinSize(fyne.NewSize(360, 180))
	open := widget.NewButtonWithIcon("Open run…", theme.FolderOpenIcon(), func() {
		s.askPath("Open a run folder", openDir, folderRun, s.startFolder(folderRun, ""), "", nil, func(p string) { r.Open(p, false) })
	})
	exportCSV := widget.NewButtonWithIcon("CSV…", theme.DocumentSaveIcon(), r.AskExportCSV)
	exportFigs := widget.NewButtonWithIcon("All figures…", theme.DocumentSaveIcon(), r.exportFigures)
	saveFig := widget.NewButtonWithIcon("Save figure…", theme.DocumentSaveIcon(), r.saveFigure)
	// Six whole lines of the summary as a label draws them, and its top
	// padding: with the bottom padding too, or a glyph's height times six,
	// the top of a seventh line showed.
	six := widget.NewLabel(strings.Repeat("M\n", 5) + "M")
	six.TextStyle = r.summary.TextStyle
	top := container.NewVBox(
		container.NewBorder(nil, nil, widget.NewLabel("Run"), open, r.runs),
		container.NewBorder(nil, nil, widget.NewLabel("Compare with"), r.diffOnly, r.compare),
		container.NewBorder(nil, nil, widget.NewLabel("Filter"), container.NewHBox(widget.NewLabel("Export"), exportCSV, exportFigs), r.filter),
		// Six lines of the summary, the rest by scrolling: the table and
		// the figure below keep their room, in a window of 1024×700.
		// The answer first, in the summary's six lines: the screen is no
		// taller for it.
		r.state, cappedScroll(container.NewVBox(r.answer, r.summary), six.MinSize().Height-theme.InnerPadding()))
	// A tap enlarges the figure, with a zoom.
	enlargeFig := widget.NewButton("", func() {
		if i := r.figIndex(r.figSel.Selected); i >= 0 && r.figure.Image != nil {
			s.mark("zoom.picture", showEnlarged(s.cfg.Window, r.figs[i].Name, r.figure.Image, nil), r.figs[i].Name)
		}
	})
	enlargeFig.Importance = widget.LowImportance
	browse := widget.NewButtonWithIcon("", theme.GridIcon(), r.BrowseFigures)
	s.mark("results.browse", browse, "figures as thumbnails")
	s.mark("results.savefig", saveFig, "")
	// The list of figures on a line of its own, the panel's width: its
	// entries (protocol · kind · name) are long. It asks for no more
	// width than its neighbours leave it (narrow), never widening the
	// window past the screen.
	figs := container.NewBorder(container.NewVBox(
		container.NewBorder(nil, nil, widget.NewLabelWithStyle("Figures", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), container.NewHBox(browse, saveFig), r.figFind),
		container.New(narrow{}, r.figSel)),
		nil, nil, nil, container.NewStack(enlargeFig, r.figure, container.NewCenter(r.figNone)))
	r.cards = container.NewVBox(wrapped("Open a run to see how far to believe each protocol's ranking."))
	r.trust = container.NewVBox(wrapped("Open a run to see which method to trust on its model."))
	var tabs fyne.CanvasObject
	r.tabs, tabs = lightTabs(container.NewTabItem("Which method to trust", container.NewVScroll(r.trust)), container.NewTabItem("Table", r.table),
		container.NewTabItem("Report card", container.NewVScroll(r.cards)), container.NewTabItem("Diagnostics", container.NewVScroll(r.diag)))
	split := container.NewHSplit(tabs, figs)
	split.Offset = 0.55
	r.content = container.NewBorder(top, nil, nil, nil, split)
	r.listRuns()
	return r
}

// Content is the screen.
func (r *Results) Content() fyne.CanvasObject { return r.content }

// listRuns offers the runs under the workbench's runs folder, the open
// one and those opened before from elsewhere that are still there.
func (r *Results) listRuns() {
	var dirs []string
	matches, _ := filepath.Glob(filepath.Join(r.s.cfg.dir("runs"), "*", "manifest.json"))
	for _, m := range matches {
		dirs = append(dirs, filepath.Dir(m))
	}
	if r.run != nil && !containsString(dirs, r.run.Dir) {
		dirs = append(dirs, r.run.Dir)
	}
	for _, d := range r.s.Recent(prefOpenedRuns) {
		listed := slices.ContainsFunc(dirs, func(x string) bool { return samePlace(x) == d })
		if _, err := os.Stat(filepath.Join(d, "manifest.json")); err == nil && !listed {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	r.runs.Options, r.compare.Options = dirs, append([]string{"(none)"}, dirs...)
	r.runs.Refresh()
	r.compare.Refresh()
}

// Open reads a run folder in the background into the screen; with show,
// the workbench switches to it (a finished campaign's results). Another
// run than the one shown clears the screen at once, saying it is being
// read: nothing of one run stays under another's name.
func (r *Results) Open(dir string, show bool) {
	if r.run == nil || samePlace(r.run.Dir) != samePlace(dir) {
		r.clear("Reading run " + dir + "…")
	}
	r.opening = dir
	var res *campaign.Results
	var figs []report.Figure
	r.s.Go("reading run "+filepath.Base(dir), func(context.Context) error {
		var err error
		if res, err = campaign.Open(dir); err != nil {
			return err
		}
		figs, _, err = res.FigureList()
		return err
	}, func(err error) {
		if r.opening != dir {
			return // a later Open replaced this one
		}
		r.opening = ""
		if err != nil {
			if r.run == nil {
				r.state.SetText("Cannot read run " + dir + ": " + oneLine(err.Error()))
			}
			return
		}
		if r.run == nil || samePlace(r.run.Dir) != samePlace(dir) {
			r.tabs.SelectIndex(tabTrust) // another run opens on its answer
		}
		r.run, r.figs = res, figs
		r.s.remember(prefOpenedRuns, dir)
		r.all, r.header = nil, nil
		if b, err := res.CSV(); err == nil {
			rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err == nil && len(rows) > 0 {
				r.header, r.all = rows[0], rows[1:]
			}
		}
		st := res.Status()
		state := res.State()
		if holder, ok := campaign.Running(dir); ok {
			state = "running now in " + holder + "; " + state
		}
		r.state.SetText(fmt.Sprintf("%s (run %s): %d tasks done, %d failed, %d to run. %s", res.Spec.Name, res.ID(), len(st.Done), len(st.Failed), len(st.Missing), state))
		if len(res.Notes) > 0 {
			r.s.status.Warn(strings.Join(res.Notes, "\n"))
		}
		r.showAnalysis(st.Done, res.Diagnostics(), report.Left{Failed: len(st.Failed), NotRun: len(st.Missing)})
		r.listRuns()
		r.runs.SetSelected(dir)
		r.refilter()
		r.figSel.ClearSelected()
		r.listFigures()
		if r.onShow != nil && show {
			r.onShow()
		}
	})
}

// showAnalysis shows what a run's finished tasks say: the summary, the
// report card and the diagnostics.
func (r *Results) showAnalysis(done []store.Record, d report.Diagnostics, left report.Left) {
	r.summary.SetText(report.Summary(done, d))
	r.answer.SetText(answerHeadline(d))
	r.answer.Importance = widget.MediumImportance
	for _, a := range d.Confidence.Trust {
		if a.Outcome == report.DoesNotHold {
			r.answer.Importance = widget.WarningImportance
		}
	}
	r.answer.Show()
	r.diagTabs = diagnosticsTables(d)
	r.diag.Objects = diagnosticsView(r.diagTabs)
	r.diag.Refresh()
	// Drawn again on a theme switch: its icons take the theme's colours when made.
	r.drawCard = func() {
		r.cards.Objects = reportCard(d, left, len(done))
		r.cards.Refresh()
		r.trust.Objects = answerView(d, func(suffix string) {
			if err := r.ShowFigure(suffix); err != nil {
				r.s.status.Error(err)
			}
		})
		r.trust.Refresh()
	}
	r.drawCard()
	r.tabs.Items[tabDiagnostics].Text = "Diagnostics"
	if len(d.Weak)+len(d.WeakModels) > 0 {
		r.tabs.Items[tabDiagnostics].Text = "Diagnostics (warnings)"
	}
	r.tabs.Refresh()
}

// clear empties the screen of the run shown, saying why in its place.
func (r *Results) clear(why string) {
	r.run, r.figs, r.all, r.header, r.rows, r.drawCard = nil, nil, nil, nil, nil, nil
	r.state.SetText(why)
	r.summary.SetText("")
	r.answer.SetText("")
	r.answer.Hide()
	r.trust.Objects = []fyne.CanvasObject{wrapped(why)}
	r.trust.Refresh()
	r.diagTabs = nil
	r.diag.Objects = nil
	r.diag.Refresh()
	r.cards.Objects = []fyne.CanvasObject{wrapped(why)}
	r.cards.Refresh()
	r.table.Refresh()
	r.figSel.ClearSelected()
	r.listFigures()
}

// Shown is the run folder the screen shows ("": none; tests).
func (r *Results) Shown() string {
	if r.run == nil {
		return ""
	}
	return r.run.Dir
}

// ShowDiagnostics shows the run's bias checks in place of the table.
func (r *Results) ShowDiagnostics() { r.tabs.SelectIndex(tabDiagnostics) }

// ShowTrust shows the run's answer to "which method should I trust?",
// the tab a run opens on.
func (r *Results) ShowTrust() { r.tabs.SelectIndex(tabTrust) }

// ShowTable shows the results' table (after the report card or the
// diagnostics).
func (r *Results) ShowTable() { r.tabs.SelectIndex(tabTable) }

// ShowReportCard shows each protocol's report card in place of the table.
func (r *Results) ShowReportCard() { r.tabs.SelectIndex(tabReportCard) }

// The tabs beside Results' figures.
const (
	tabTrust = iota
	tabTable
	tabReportCard
	tabDiagnostics
)

// setCompare reads a second run to compare with.
func (r *Results) setCompare(dir string) {
	if dir == "(none)" || dir == "" {
		r.other = nil
		r.refilter()
		return
	}
	var res *campaign.Results
	r.s.Go("reading run "+filepath.Base(dir), func(context.Context) error {
		var err error
		res, err = campaign.Open(dir)
		return err
	}, func(err error) {
		if err == nil {
			r.other = res
			r.refilter()
		}
	})
}

// Rows is the table's rows as shown (tests).
func (r *Results) Rows() [][]string { return r.rows }

// shown lists the row columns the table shows: the CSV's but the run id
// and the model (the same on every row; the summary names them), and with
// a comparison its value and the difference.
func (r *Results) shown() []int {
	var cols []int
	// What tells results apart first, the value in view; then the rest.
	for _, name := range []string{"method", "protocol", "metric", "parameter", "value"} {
		if i := slices.Index(r.header, name); i >= 0 {
			cols = append(cols, i)
		}
	}
	if r.other != nil && len(r.header) > 0 {
		cols = append(cols, len(r.header), len(r.header)+1) // the compared run's value and the difference
	}
	for i, h := range r.header {
		if h != "run" && h != "model" && !slices.Contains(cols, i) {
			cols = append(cols, i)
		}
	}
	return cols
}

func (r *Results) columns() int { return len(r.shown()) }

// refilter applies the filter, the comparison and the sort.
func (r *Results) refilter() {
	words := strings.Fields(strings.ToLower(r.filter.Text))
	other := map[string]string{}
	if r.other != nil {
		if b, err := r.other.CSV(); err == nil {
			rows, _ := csv.NewReader(bytes.NewReader(b)).ReadAll()
			for _, row := range rows[min(1, len(rows)):] {
				other[rowKey(row)] = row[len(row)-1]
			}
		}
	}
	r.rows = r.rows[:0]
	var searched []int // the columns the table shows: a word matches what the user can see
	for _, c := range r.shown() {
		if c < len(r.header) {
			searched = append(searched, c)
		}
	}
	for _, row := range r.all {
		var cells []string
		for _, c := range searched {
			cells = append(cells, row[c])
		}
		line := strings.ToLower(strings.Join(cells, " "))
		keep := true
		for _, w := range words {
			keep = keep && strings.Contains(line, w)
		}
		if !keep {
			continue
		}
		if r.other != nil {
			v, ok := other[rowKey(row)]
			diff := "—"
			if ok {
				diff = difference(row[len(row)-1], v)
			} else {
				v = "(absent)"
			}
			if r.diffOnly.Checked && diff == "0" {
				continue
			}
			row = append(append([]string(nil), row...), v, diff)
		}
		r.rows = append(r.rows, row)
	}
	if cols := r.shown(); r.sortCol >= 0 && r.sortCol < len(cols) {
		c := cols[r.sortCol]
		sort.SliceStable(r.rows, func(i, j int) bool {
			a, b := r.rows[i][c], r.rows[j][c]
			fa, ea := strconv.ParseFloat(a, 64)
			fb, eb := strconv.ParseFloat(b, 64)
			less := a < b
			if ea == nil && eb == nil {
				less = fa < fb
			}
			if r.desc {
				return !less && a != b
			}
			return less
		})
	}
	// Each column as wide as its widest cell, its header's included (the
	// table scrolls sideways): no value is cut, "fashion-mnist" no more
	// than a method's name with its parameters.
	for c, col := range r.shown() {
		name := map[bool]string{true: "compared", false: "difference"}[col == len(r.header)]
		if col < len(r.header) {
			name = r.header[col]
		}
		w := fyne.MeasureText(name+" ▲", theme.TextSize(), fyne.TextStyle{}).Width
		seen := map[string]bool{}
		for _, row := range r.rows {
			if col < len(row) && !seen[row[col]] {
				seen[row[col]] = true
				w = max(w, fyne.MeasureText(shortNumber(row[col]), theme.TextSize(), fyne.TextStyle{}).Width)
			}
		}
		r.table.SetColumnWidth(c, w+2*theme.InnerPadding()+theme.Padding())
	}
	r.table.Refresh()
}

// rowKey identifies a result across runs: every column but the run id
// and the value.
func rowKey(row []string) string { return strings.Join(row[1:len(row)-1], "\x00") }

// difference is b − a of two values as text ("0" when equal).
func difference(a, b string) string {
	if a == b {
		return "0"
	}
	fa, ea := strconv.ParseFloat(a, 64)
	fb, eb := strconv.ParseFloat(b, 64)
	if ea != nil || eb != nil {
		return "≠"
	}
	return strconv.FormatFloat(fb-fa, 'g', 4, 64)
}

func (r *Results) cell(id widget.TableCellID, o fyne.CanvasObject) {
	l := o.(*widget.Label)
	if id.Row >= len(r.rows) || id.Col >= r.columns() {
		l.SetText("")
		return
	}
	row := r.rows[id.Row]
	l.SetText(shortNumber(row[r.shown()[id.Col]]))
	l.Importance = widget.MediumImportance
	if r.other != nil && row[len(row)-1] != "0" {
		l.Importance = widget.WarningImportance
	}
	l.Refresh()
}

func (r *Results) headerCell(id widget.TableCellID, o fyne.CanvasObject) {
	b := o.(*widget.Button)
	if id.Row >= 0 {
		b.SetText(strconv.Itoa(id.Row + 1))
		b.OnTapped = nil
		return
	}
	name := "difference"
	switch cols := r.shown(); {
	case id.Col >= len(cols):
		return
	case cols[id.Col] < len(r.header):
		name = r.header[cols[id.Col]]
	case cols[id.Col] == len(r.header):
		name = "compared"
	}
	if id.Col == r.sortCol {
		name += map[bool]string{false: " ▲", true: " ▼"}[r.desc]
	}
	b.SetText(name)
	col := id.Col
	b.OnTapped = func() { r.SortBy(col) }
}

// SortBy sorts by a column; a second tap reverses the order.
func (r *Results) SortBy(col int) {
	if r.sortCol == col {
		r.desc = !r.desc
	} else {
		r.sortCol, r.desc = col, false
	}
	r.refilter()
}

// shortNumber shows a number with four significant digits (the CSV keeps
// them all); other text as it is.
func shortNumber(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || len(v) <= 7 {
		return v
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}
