package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/data"
	"faithlab/core/job"
	"faithlab/core/report"
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
	stop    *widget.Button
	bar     *widget.ProgressBar
	running bool
	// While one runs: which (name at size, in its folder), how far it
	// is, and what stops it.
	ranName, ranSize, ranDir string
	left                     countdown
	cancel                   context.CancelFunc
	// reopen shows the pane on the reproduction that ran (the status
	// bar's "Open report" once it ends).
	reopen  func(name, size string)
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
	// A click on the size chosen keeps it (a radio group lets it go).
	r.size.Horizontal, r.size.Selected, r.size.Required = true, "quick", true
	r.pick = newSelect(names, func(name string) {
		if p := s.cfg.Prefs; p != nil {
			p.SetString(prefReproduce, name) // offered first next time
		}
		r.show()
	})
	r.run = widget.NewButton("Run", r.Run)
	r.run.Importance = widget.HighImportance
	r.stop = widget.NewButton("Cancel", r.Cancel)
	r.stop.Disable()
	r.bar = widget.NewProgressBar()
	r.bar.Hide()
	// Run above the paper's description, whose length varies: the button
	// stays where it is whichever paper is picked.
	top := container.NewVBox(container.NewBorder(nil, nil, widget.NewLabel("Paper"), nil, r.pick), r.size,
		container.NewBorder(nil, nil, container.NewHBox(r.run, r.stop), nil, r.bar), r.about, widget.NewSeparator())
	r.content = container.NewBorder(top, nil, nil, nil, container.NewVScroll(r.report))
	if len(names) > 0 {
		first := names[0]
		if p := s.cfg.Prefs; p != nil && slices.Contains(names, p.String(prefReproduce)) {
			first = p.String(prefReproduce) // the paper chosen last
		}
		r.pick.SetSelected(first)
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
	if r.running {
		if p.Name == r.ranName && r.size.Selected == r.ranSize {
			r.report.ParseMarkdown(r.runningText())
			return
		}
		r.report.ParseMarkdown(fmt.Sprintf("No report yet (%s). Run waits: %s runs at size %s — Cancel stops it.", r.dir(p), r.ranName, r.ranSize))
		return
	}
	b, err := data.ReadFileLimit(filepath.Join(r.dir(p), "REPORT.md"), 64<<20)
	if err != nil {
		r.report.ParseMarkdown("No report yet: Run writes it (" + r.dir(p) + ").")
		return
	}
	r.report.ParseMarkdown(tablesAsLists(string(b)))
	joinSplitWords(r.report.Segments)
	r.report.Refresh()
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

// Run runs (or resumes) the chosen reproduction in the background, with
// its tasks done of all and the time left, and shows its report when it
// ends; the status bar says it ended, with the report a tap away.
func (r *Reproduce) Run() {
	p := r.chosen()
	if p == nil || r.running {
		return
	}
	size, dir := r.size.Selected, r.dir(p)
	r.running, r.ranName, r.ranSize, r.ranDir, r.left = true, p.Name, size, dir, countdown{}
	r.run.Disable()
	r.stop.Enable()
	r.bar.SetValue(0)
	r.bar.Show()
	r.report.ParseMarkdown(r.runningText())
	events := make(chan job.Event, 64)
	what := "reproduce " + p.Name
	r.cancel = r.s.Go(what, func(ctx context.Context) error {
		stopped := make(chan struct{})
		defer close(stopped)
		go r.follow(events, stopped)
		_, err := reproduce.Run(ctx, p, reproduce.Options{Size: size, Out: dir, Kernel: r.s.cfg.Kernel, Figures: []string{"png"}, Events: events})
		return err
	}, func(err error) {
		r.running, r.cancel = false, nil
		r.run.Enable()
		r.stop.Disable()
		r.bar.Hide()
		r.show()
		name := p.Name + " at size " + size
		switch {
		case errors.Is(err, context.Canceled):
			r.s.status.Info("reproduction " + name + " stopped; finished tasks are kept: Run goes on from them")
		case err != nil: // Go said why
		default:
			r.s.status.Info("reproduction " + name + " done: report in " + filepath.Join(dir, "REPORT.md"))
			if r.reopen != nil {
				r.s.status.Offer("Open report", func() { r.reopen(p.Name, size) })
			}
		}
	})
}

// follow counts the runner's events into the progress until the channel
// closes, and counts the time left down every second until stopped.
func (r *Reproduce) follow(events <-chan job.Event, stopped <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last time.Time
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Total == 0 || (ev.Kind == job.Progress && time.Since(last) < 100*time.Millisecond) {
				continue
			}
			last = time.Now()
			r.s.cfg.Do(func() {
				if r.running {
					r.left.set(ev.Done, ev.Total, ev.ETA, time.Now())
					r.showProgress()
				}
			})
		case <-tick.C:
			r.s.cfg.Do(func() {
				if r.running {
					r.showProgress()
				}
			})
		case <-stopped:
			return
		}
	}
}

// showProgress shows how far the running reproduction is (UI goroutine).
func (r *Reproduce) showProgress() {
	if r.left.total > 0 {
		r.bar.SetValue(float64(r.left.done) / float64(r.left.total))
	}
	if p := r.chosen(); p != nil && p.Name == r.ranName && r.size.Selected == r.ranSize {
		r.report.ParseMarkdown(r.runningText())
	}
}

// runningText says which reproduction runs and how far it is.
func (r *Reproduce) runningText() string {
	t := fmt.Sprintf("Running %s at size %s in %s", r.ranName, r.ranSize, r.ranDir)
	c := r.left
	if c.total == 0 {
		return t + " … (counting its tasks)"
	}
	t += fmt.Sprintf(": %d of %s done", c.done, report.Count(c.total, "task"))
	if left, _ := c.left(time.Now()); left > 0 {
		t += fmt.Sprintf(", about %s left", left)
	}
	return t + ". Cancel stops it (finished tasks are kept: Run goes on from them)."
}

// Cancel stops the running reproduction after the tasks under way;
// finished ones are kept, and Run resumes it.
func (r *Reproduce) Cancel() {
	if r.cancel != nil {
		r.cancel()
		r.stop.Disable()
	}
}

// Running says whether a reproduction runs.
func (r *Reproduce) Running() bool { return r.running }

// showReproduce opens the pane in a dialog over the window.
func (l *Library) showReproduce() {
	if l.repro == nil {
		l.repro = newReproduce(l.s)
		l.repro.reopen = func(name, size string) {
			l.showReproduce()
			l.repro.pick.SetSelected(name)
			l.repro.size.SetSelected(size)
		}
	}
	l.repro.show() // a reproduction running says so
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

// joinSplitWords takes out the spaces Fyne's markdown puts between the
// pieces a word is parsed into at a '_' or a '[' ("lerf_ minus_ morf",
// "[ 0.006, 0.035]" for lerf_minus_morf, [0.006, 0.035]): it ends every
// text piece followed by another inline piece with a space.
func joinSplitWords(segs []widget.RichTextSegment) {
	for i, seg := range segs {
		switch s := seg.(type) {
		case *widget.ParagraphSegment:
			joinSplitWords(s.Texts)
		case *widget.ListSegment:
			joinSplitWords(s.Items)
		case *widget.TextSegment:
			if i+1 < len(segs) && segs[i+1].Inline() && (strings.HasSuffix(s.Text, "_ ") || strings.HasSuffix(s.Text, "[ ")) {
				s.Text = strings.TrimSuffix(s.Text, " ")
			}
		}
	}
}
