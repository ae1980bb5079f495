package ui

// The Results screen's figures — shown, saved one at a time or all at once —
// and its table written as CSV.

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2/dialog"

	"faithlab/core/campaign"
	"faithlab/core/report"
)

// ShowFigure shows the first of the run's figures whose name ends with
// suffix, as picking it from the list does; when none does, it shows
// nothing new and says which figures the run has.
func (r *Results) ShowFigure(suffix string) error {
	if r.run == nil {
		return fmt.Errorf("no figure %s: no run open", suffix)
	}
	names := make([]string, len(r.figs))
	for i, f := range r.figs {
		if strings.HasSuffix(f.Name, suffix) {
			r.figFind.SetText("")
			r.figSel.SetSelected(figureLabel(f))
			return nil
		}
		names[i] = f.Name
	}
	if len(names) == 0 {
		return fmt.Errorf("no figure %s in %s: the run has no figures", suffix, r.run.Dir)
	}
	return fmt.Errorf("no figure %s in %s; its figures: %s", suffix, r.run.Dir, strings.Join(names, ", "))
}

// listFigures lists the figures that hold the search's words; the one
// shown stays while listed, else the first listed is shown.
func (r *Results) listFigures() {
	r.figSel.Options = figureLabels(r.figs, r.figFind.Text)
	r.figSel.Refresh()
	if len(r.figSel.Options) > 0 && !slices.Contains(r.figSel.Options, r.figSel.Selected) {
		r.figSel.SetSelected(r.figSel.Options[0])
	}
	if len(r.figSel.Options) == 0 {
		// No figure of another run, or of another search, under this
		// run's name: say why there is none.
		r.figSel.ClearSelected()
		r.figure.Image = nil
		r.figure.Refresh()
		switch {
		case r.run == nil && r.opening != "":
			r.figNone.SetText("Reading the run…")
		case r.run == nil:
			r.figNone.SetText("No run open: no figures.")
		case len(r.figs) > 0:
			r.figNone.SetText("No figure holds these words.")
		default:
			r.figNone.SetText("No figures yet: the run has no finished task to draw.")
		}
		r.figNone.Show()
	}
}

// figIndex is the figure of a list entry (−1: none).
func (r *Results) figIndex(label string) int {
	return slices.IndexFunc(r.figs, func(f report.Figure) bool { return figureLabel(f) == label })
}

// showFigure renders a figure for the window.
func (r *Results) showFigure(id int) {
	if id < 0 || id >= len(r.figs) {
		return
	}
	var buf bytes.Buffer
	if err := report.RenderInk(&buf, r.figs[id], 150, screenInk()); err != nil {
		r.s.status.Error(err)
		return
	}
	img, err := png.Decode(&buf)
	if err != nil {
		r.s.status.Error(err)
		return
	}
	r.figure.Image = img
	r.figure.Refresh()
	r.figNone.Hide()
}

// WriteCSV writes the run's CSV to path (tests; the dialog's path).
func (r *Results) WriteCSV(path string) error {
	if r.run == nil {
		return fmt.Errorf("no run open")
	}
	return r.run.WriteCSV(path)
}

// AskExportCSV asks where to save the run's CSV; the dialog asks before it
// overwrites a file.
func (r *Results) AskExportCSV() {
	if !r.exportable() {
		return
	}
	run := r.run
	r.s.askPath("Export the results CSV", saveFile, folderExport, r.s.startFolder(folderExport, run.Dir), run.Spec.Name+"-results.csv", nil, func(p string) {
		b, err := run.CSV()
		if err == nil {
			err = os.WriteFile(p, b, 0o644)
		}
		if err != nil {
			r.s.status.Error(fmt.Errorf("saving the CSV: %w", err))
			return
		}
		r.s.status.Info(fmt.Sprintf("wrote %s: all %d results of the run (the table's filter does not apply)", p, len(r.all)))
	})
}

// saveFigure asks where to save the figure on screen; the file name's
// extension (.pdf, .svg or .png) picks the format.
func (r *Results) saveFigure() {
	w := r.s.cfg.Window
	i := r.figIndex(r.figSel.Selected)
	if i < 0 {
		r.s.status.Error(fmt.Errorf("no figure shown to save"))
		return
	}
	if w == nil {
		return
	}
	fig := r.figs[i]
	r.s.askPath("Save the figure (.pdf, .svg or .png)", saveFile, folderExport, r.s.startFolder(folderExport, r.run.Dir), fig.Name+".pdf", nil, func(p string) {
		format := strings.TrimPrefix(strings.ToLower(filepath.Ext(p)), ".")
		if format != "png" && format != "svg" {
			format = "pdf"
		}
		f, err := os.Create(p)
		if err == nil {
			err = report.Render(f, fig, format, 300)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			r.s.status.Error(fmt.Errorf("saving the figure: %w", err))
			return
		}
		r.s.status.Info(fmt.Sprintf("wrote %s (%s)", p, strings.ToUpper(format)))
	})
}

// exportFigures asks for a folder and writes every figure there as PNG,
// SVG and PDF, asking first when that would replace files.
func (r *Results) exportFigures() {
	if !r.exportable() {
		return
	}
	w := r.s.cfg.Window
	r.s.askPath("Export every figure (PNG, SVG and PDF) into a folder", saveDir, folderExport, r.s.startFolder(folderExport, r.run.Dir), "", nil, func(dir string) {
		write := func() { r.ExportFigures(dir, "png", "svg", "pdf") }
		var clash []string
		for _, f := range r.figs {
			for _, ext := range []string{".png", ".svg", ".pdf"} {
				if _, err := os.Stat(filepath.Join(dir, f.Name+ext)); err == nil {
					clash = append(clash, f.Name+ext)
				}
			}
		}
		if len(clash) == 0 {
			write()
			return
		}
		dialog.ShowConfirm("Replace files?", fmt.Sprintf("%s already holds %d of these figures (%s…). Replace them?", dir, len(clash), clash[0]),
			func(ok bool) {
				if ok {
					write()
				}
			}, w)
	})
}

// ExportFigures writes the figures into dir in the background.
func (r *Results) ExportFigures(dir string, formats ...string) {
	run := r.run
	var ex campaign.Exported
	r.s.Go("exporting figures", func(context.Context) error {
		var err error
		ex, err = run.Figures(dir, "", formats...)
		return err
	}, func(err error) {
		if err == nil {
			r.s.status.Info(fmt.Sprintf("wrote %d figures (%d files) to %s", ex.Figures, ex.Files, dir))
		}
	})
}

// exportable says whether there is a run to export and a window to ask
// in; without a run it says so on the status bar.
func (r *Results) exportable() bool {
	if r.run == nil {
		r.s.status.Error(fmt.Errorf("no run open to export"))
		return false
	}
	return r.s.cfg.Window != nil
}
