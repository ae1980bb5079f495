package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/data"
	"faithlab/core/reproduce"
)

// Reproduce is the Library's "Reproduce a paper…": the seed papers'
// reproductions (core/reproduce, as `faithlab-cli reproduce`), a size,
// and the REPORT.md of the chosen one, run in the background into the
// workbench's reproduce/NAME-SIZE folder (run again, it resumes).
type Reproduce struct {
	s       *State
	all     []*reproduce.Reproduction
	pick    *selectWidget
	size    *widget.RadioGroup
	about   *widget.Label
	report  *widget.RichText
	run     *widget.Button
	running bool
	content fyne.CanvasObject
}

func newReproduce(s *State) *Reproduce {
	r := &Reproduce{s: s, about: widget.NewLabel(""), report: widget.NewRichTextFromMarkdown("")}
	r.about.Wrapping, r.report.Wrapping = fyne.TextWrapWord, fyne.TextWrapWord
	all, err := reproduce.List()
	if err != nil {
		s.status.Error(err)
	}
	r.all = all
	var names []string
	for _, p := range all {
		names = append(names, p.Name)
	}
	r.size = widget.NewRadioGroup(reproduce.Sizes, func(string) { r.show() })
	r.size.Horizontal, r.size.Selected = true, "quick"
	r.pick = newSelect(names, func(string) { r.show() })
	r.run = widget.NewButton("Run", r.Run)
	r.run.Importance = widget.HighImportance
	top := container.NewVBox(container.NewBorder(nil, nil, widget.NewLabel("Paper"), nil, r.pick), r.size, r.about, container.NewHBox(r.run), widget.NewSeparator())
	r.content = container.NewBorder(top, nil, nil, nil, container.NewVScroll(r.report))
	if len(names) > 0 {
		r.pick.SetSelected(names[0])
	}
	return r
}

// Content is the pane (shown in a dialog over the Library).
func (r *Reproduce) Content() fyne.CanvasObject { return r.content }

// chosen is the reproduction picked, or nil.
func (r *Reproduce) chosen() *reproduce.Reproduction {
	for _, p := range r.all {
		if p.Name == r.pick.Selected {
			return p
		}
	}
	return nil
}

// dir is the chosen reproduction's report folder at the chosen size.
func (r *Reproduce) dir(p *reproduce.Reproduction) string {
	return r.s.cfg.dir(filepath.Join("reproduce", p.Name+"-"+r.size.Selected))
}

// show describes the chosen reproduction and shows its report where one
// was written.
func (r *Reproduce) show() {
	p := r.chosen()
	if p == nil || r.size.Selected == "" {
		return
	}
	r.about.SetText(fmt.Sprintf("%s\n%s\n%s: %s", p.Title, p.Paper, r.size.Selected, p.Sizes[r.size.Selected].Scaled))
	b, err := data.ReadFileLimit(filepath.Join(r.dir(p), "REPORT.md"), 64<<20)
	if err != nil {
		r.report.ParseMarkdown("No report yet: Run writes it (" + r.dir(p) + ").")
		return
	}
	r.report.ParseMarkdown(tablesAsLists(string(b)))
}

// tablesAsLists rewrites REPORT.md's tables, which Fyne's markdown does
// not draw (it showed their rows as one run of pipes), as lists: the
// header row as a line of its own, each row as an item, cells joined by
// " · ".
func tablesAsLists(md string) string {
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if len(t) < 2 || t[0] != '|' || t[len(t)-1] != '|' {
			out = append(out, l)
			continue
		}
		if strings.Trim(t, "|-: ") == "" { // the separator: the line above was the header
			if n := len(out); n > 0 && strings.HasPrefix(out[n-1], "- ") {
				out[n-1] = "*" + strings.TrimPrefix(out[n-1], "- ") + "*\n"
			}
			continue
		}
		cells := strings.Split(strings.ReplaceAll(t[1:len(t)-1], "\\|", "\x00"), "|")
		var kept []string
		for _, c := range cells {
			if c = strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|")); c != "" {
				kept = append(kept, c)
			}
		}
		out = append(out, "- "+strings.Join(kept, " · "))
	}
	return strings.Join(out, "\n")
}

// Run runs (or resumes) the chosen reproduction in the background and
// shows its report when it ends.
func (r *Reproduce) Run() {
	p := r.chosen()
	if p == nil || r.running {
		return
	}
	size, dir := r.size.Selected, r.dir(p)
	r.running = true
	r.run.Disable()
	r.report.ParseMarkdown(fmt.Sprintf("Running %s at size %s in %s …", p.Name, size, dir))
	r.s.Go("reproduce "+p.Name, func(ctx context.Context) error {
		_, err := reproduce.Run(ctx, p, reproduce.Options{Size: size, Out: dir, Kernel: r.s.cfg.Kernel, Figures: []string{"png"}})
		return err
	}, func(err error) {
		r.running = false
		r.run.Enable()
		r.show()
	})
}

// Running says whether a reproduction runs.
func (r *Reproduce) Running() bool { return r.running }

// showReproduce opens the pane in a dialog over the window.
func (l *Library) showReproduce() {
	if l.repro == nil {
		l.repro = newReproduce(l.s)
	}
	if w := l.s.cfg.Window; w != nil {
		l.reproDialog = dialog.NewCustom("Reproduce a paper", "Close", l.repro.Content(), w)
		l.reproDialog.Resize(fyne.NewSize(900, 700))
		l.reproDialog.Show()
	}
}

// RunReproduction opens "Reproduce a paper…" and runs one reproduction at a
// size, as a user picking them and pressing Run (the screenshot tour);
// the pane comes back, to ask whether it still runs.
func (l *Library) RunReproduction(name, size string) *Reproduce {
	l.showReproduce()
	l.repro.pick.SetSelected(name)
	l.repro.size.SetSelected(size)
	l.repro.Run()
	return l.repro
}

// CloseReproduce closes the "Reproduce a paper…" dialog if it is open.
func (l *Library) CloseReproduce() {
	if l.reproDialog != nil {
		l.reproDialog.Hide()
	}
}
