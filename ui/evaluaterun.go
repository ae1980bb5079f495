package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"faithlab/core/campaign"
	"faithlab/core/job"
	"faithlab/core/report"
)

// setLaunch says on the launch button whether it starts the campaign or
// resumes a run of it that stopped.
func (e *Evaluate) setLaunch(resumes bool) { e.launch.SetText(launchWord(resumes)) }

// Launch saves the campaign and runs it in the background.
func (e *Evaluate) Launch() {
	if e.cancel != nil {
		return
	}
	c, err := e.save()
	if err != nil {
		e.s.status.ErrorFrom(causeCampaign, err)
		return
	}
	e.run(c)
}

// run runs (or resumes) a loaded campaign in a worker process
// (Config.Worker, campaign.Serve) at a lower priority, so that the window
// stays responsive; the task list follows its events: a task's start and
// end at once, its progress at most 4 times a second (each redraw of the
// list draws the whole window again), and not at all while the screen is
// hidden (drawProgress).
func (e *Evaluate) run(c *campaign.Campaign) {
	var byHand []string // a TorchScript file opened from the Library or the File menu (UseTorchScript)
	if e.script != "" && c.Spec.Model.File == e.script {
		byHand = append(byHand, e.script)
	}
	e.s.withConsent(c, byHand, func(trust campaign.Trust) { e.start(c, trust) })
}

// start runs the campaign with what the user allowed it.
func (e *Evaluate) start(c *campaign.Campaign, trust campaign.Trust) {
	e.s.remember(prefRecentRuns, e.specPath)
	e.took = map[string][]time.Duration{}
	// The tasks in the states the last look at the run folder saw — a
	// resume's finished tasks read done from the start, not "to run"
	// until the worker skips them —, where that look was of this plan.
	rows := e.look.rows
	tasks := c.Tasks(job.Shard{})
	if len(rows) != len(tasks) || !slices.EqualFunc(rows, tasks, func(r taskRow, t job.Task) bool { return r.key == t.Key }) {
		rows = nil
		for _, t := range tasks {
			rows = append(rows, taskRow{key: t.Key, label: t.Label, state: string(job.StateToRun)})
		}
	}
	e.showRows(rows)
	e.overall.SetValue(0)
	e.overall.Show()
	e.left = countdown{}
	e.eta.SetText("")
	e.launch.Disable()
	e.stop.Enable()
	e.resume.Objects = nil
	e.resume.Refresh()
	// The estimate shown for this campaign, kept by the run beside its
	// wall time.
	var estimate float64
	if e.sizeShown.key == sizeKey(c.Spec) && e.sizeShown.output == c.Spec.Output {
		estimate = e.sizeShown.size.Seconds
	}
	child, err := campaign.StartChild(e.s.cfg.Worker(e.specPath, trust, estimate))
	if err != nil {
		e.s.status.Error(err)
		e.launch.Enable()
		e.stop.Disable()
		return
	}
	e.child = child
	pending := map[string]job.Event{}
	var done, total int
	var eta time.Duration
	flush := func() {
		if len(pending) == 0 {
			return
		}
		batch, d, t, left := pending, done, total, eta
		pending = map[string]job.Event{}
		e.s.cfg.Do(func() { e.apply(batch, d, t, left) })
	}
	follow := func() {
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			var ev job.Event
			select {
			case <-tick.C:
				flush() // the progress since the last redraw
				continue
			case got, ok := <-child.Events():
				if !ok {
					batch := pending
					e.s.cfg.Do(func() { e.apply(batch, done, total, 0) })
					return
				}
				ev = got
			}
			if ev.Kind == job.Repaired || ev.Kind == job.Warning {
				msg, warn := ev.Err, ev.Kind == job.Warning
				e.s.cfg.Do(func() {
					if warn {
						e.s.status.Warn(msg)
					} else {
						e.s.status.Info(msg)
					}
				})
				continue
			}
			pending[ev.Key] = ev
			done, total = ev.Done, ev.Total
			if ev.ETA > 0 {
				eta = ev.ETA
			}
			if ev.Kind != job.Progress {
				flush() // a task started or ended: shown at once
			}
		}
	}
	dir := c.Dir(job.Shard{})
	e.cancel = e.s.Go("campaign "+c.Spec.Name, func(ctx context.Context) error {
		stopped := make(chan struct{})
		defer close(stopped)
		go func() {
			select {
			case <-ctx.Done():
				child.Stop()
			case <-stopped:
			}
		}()
		go func() { // the time left, counted down every second
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-tick.C:
					e.s.cfg.Do(func() {
						if e.cancel != nil && e.s.isShown(TabEvaluate) {
							e.eta.SetText(e.left.text(time.Now()))
							e.list.Refresh() // the running tasks' time left
						}
					})
				case <-stopped:
					return
				}
			}
		}()
		follow()
		return child.Wait()
	}, func(err error) {
		e.cancel, e.child = nil, nil
		e.stop.Disable()
		e.drawProgress() // what came while the screen was hidden
		e.eta.SetText("")
		stopped := errors.Is(err, context.Canceled)
		// The worker says which tasks the stop cut short; one still
		// running had its worker end under it, one cancelled while queued
		// never came up.
		for i := range e.rows {
			switch r := &e.rows[i]; r.state {
			case string(job.StateRunning):
				r.state, r.stage, r.frac = string(job.StateInterrupted), "not recorded: a launch runs it", 0
			case stateCancelling:
				r.state, r.stage = string(job.StateCancelled), "not recorded: a launch runs it"
			}
		}
		e.list.Refresh()
		cancelled := e.count(string(job.StateCancelled))
		// The button and the status bar say the same word: both from one
		// look at what the run folder holds now.
		var look runLook
		s := c.Spec
		e.s.Go("reading the run", func(context.Context) error {
			look = lookAtRun(s)
			return nil
		}, func(error) {
			e.launch.Enable()
			e.setLaunch(look.resumes)
			word := launchWord(look.resumes)
			switch {
			case stopped && look.done == 0:
				e.s.status.Info(fmt.Sprintf("campaign %s stopped before a task finished: nothing kept; %s starts it again", s.Name, word))
			case stopped:
				e.s.status.Info(fmt.Sprintf("campaign %s stopped; its %s done %s kept: %s goes on from %s", s.Name, report.Count(look.done, "task"), map[bool]string{true: "is", false: "are"}[look.done == 1], word, map[bool]string{true: "it", false: "them"}[look.done == 1]))
			case err == nil && cancelled > 0:
				e.s.status.Info(fmt.Sprintf("campaign %s ended with %s cancelled, not recorded: %s runs them; results so far in %s", s.Name, report.Count(cancelled, "task"), word, dir))
			case err == nil:
				e.s.status.Info("campaign " + s.Name + " done: results in " + dir)
			}
			e.changed() // the size says what the run folder holds now
			if e.onRun != nil {
				e.onRun(dir, err == nil)
			}
		})
	})
}

// apply updates the task list with events (UI goroutine).
func (e *Evaluate) apply(evs map[string]job.Event, done, total int, eta time.Duration) {
	for key, ev := range evs {
		i, ok := e.byKey[key]
		if !ok {
			continue
		}
		r := &e.rows[i]
		switch ev.Kind {
		case job.Started:
			r.state, r.stage, r.frac, r.started = string(job.StateRunning), "starting", 0, ev.Time
			if r.started.IsZero() {
				r.started = time.Now()
			}
		case job.Progress:
			r.state, r.stage = string(job.StateRunning), ev.Stage
			if ev.Steps > 0 {
				r.frac = float64(ev.Step) / float64(ev.Steps)
			}
		case job.Finished, job.Skipped:
			if ev.Kind == job.Finished && !r.started.IsZero() && !ev.Time.IsZero() {
				p := taskProtocol(r.label)
				e.took[p] = append(e.took[p], ev.Time.Sub(r.started))
			}
			r.state, r.stage, r.frac = string(job.StateDone), "", 1
			if ev.Kind == job.Skipped {
				r.stage = "done in an earlier run"
			}
		case job.Failed:
			r.state, r.stage, r.frac = string(job.StateFailed), ev.Err, 0
		case job.Cancelled:
			r.state, r.stage, r.frac = string(job.StateCancelled), "not recorded: a launch runs it", 0
			e.s.status.Info("cancelled " + taskTitle(r.label) + ": not recorded, a launch runs it")
		case job.Interrupted:
			r.state, r.stage, r.frac = string(job.StateInterrupted), "not recorded: a launch runs it", 0
		}
	}
	// The runner counts a cancelled task as ended; the bar and the count
	// show the tasks done (earlier runs' included), which a cancelled one
	// is not.
	done, total = e.count(string(job.StateDone)), len(e.rows)
	e.left.set(done, total, eta, time.Now())
	if !e.s.isShown(TabEvaluate) {
		// Drawn when the screen is shown: a redraw of the list here drew
		// the whole window again, a screen the user is working on, for
		// nothing that it shows.
		e.unseen = true
		return
	}
	e.drawProgress()
}

// progressEvery is how often at most the task list shows the tasks'
// progress.
const progressEvery = 250 * time.Millisecond

// drawProgress shows the campaign's progress as the task rows and the
// countdown hold it: the overall bar, the time left, the list.
func (e *Evaluate) drawProgress() {
	e.unseen = false
	if c := e.left; c.total > 0 {
		e.overall.SetValue(float64(c.done) / float64(c.total))
	}
	e.eta.SetText(e.left.text(time.Now()))
	e.list.Refresh()
}

// count is the number of tasks in a state.
func (e *Evaluate) count(state string) int {
	n := 0
	for _, r := range e.rows {
		if r.state == state {
			n++
		}
	}
	return n
}

// countdown is the campaign's progress line: the runner re-estimates the
// time left only when a task ends, so between estimates the line counts
// the last one down.
type countdown struct {
	done, total int
	eta         time.Duration // as last estimated
	at          time.Time     // when it changed
}

// set takes the counts and the runner's estimate; an unchanged estimate
// keeps counting down from when it was made.
func (c *countdown) set(done, total int, eta time.Duration, now time.Time) {
	c.done, c.total = done, total
	if eta != c.eta {
		c.eta, c.at = eta, now
	}
}

// text is "3/12 · about 40s left", "3/12 · finishing the tasks under way"
// once the estimate has run out, or "3/12" before there is one.
func (c countdown) text(now time.Time) string {
	switch left, ok := c.left(now); {
	case c.total == 0:
		return ""
	case !ok:
		return fmt.Sprintf("%d/%d", c.done, c.total)
	case left == 0:
		return fmt.Sprintf("%d/%d · finishing the tasks under way", c.done, c.total)
	default:
		return fmt.Sprintf("%d/%d · about %s left", c.done, c.total, left)
	}
}

// left is the time left at now, to the second: 0 once the estimate has run
// out (under a second), ok false before there is one.
func (c countdown) left(now time.Time) (left time.Duration, ok bool) {
	if c.eta <= 0 {
		return 0, false
	}
	if left = c.eta - now.Sub(c.at); left < time.Second {
		return 0, true
	}
	return left.Round(time.Second), true
}

// Cancel stops the campaign after the tasks under way; finished ones are kept.
func (e *Evaluate) Cancel() {
	if e.cancel != nil {
		e.cancel()
	}
}

// Running says whether a campaign runs.
func (e *Evaluate) Running() bool { return e.cancel != nil }

func (e *Evaluate) newRow() fyne.CanvasObject {
	label := widget.NewLabel("")
	label.Truncation = fyne.TextTruncateEllipsis
	stage := widget.NewLabel("")
	stage.Truncation = fyne.TextTruncateEllipsis
	stage.SizeName = theme.SizeNameCaptionText
	bar := widget.NewProgressBar()
	cancel := widget.NewButtonWithIcon("", theme.CancelIcon(), nil)
	cancel.Importance = widget.LowImportance
	return container.NewBorder(nil, nil, nil, cancel, container.NewVBox(label, container.NewGridWithColumns(2, stage, bar)))
}

func (e *Evaluate) updateRow(id widget.ListItemID, o fyne.CanvasObject) {
	if id >= len(e.rows) {
		return
	}
	r := e.rows[id]
	c := o.(*fyne.Container)
	body := c.Objects[0].(*fyne.Container)
	cancel := c.Objects[1].(*widget.Button)
	body.Objects[0].(*widget.Label).SetText(taskTitle(r.label))
	line := body.Objects[1].(*fyne.Container)
	stage := line.Objects[0].(*widget.Label)
	text := r.state
	if r.stage != "" {
		text += " · " + r.stage
	}
	if r.state == string(job.StateRunning) {
		if left := e.taskLeft(r, time.Now()); left != "" {
			text += " · " + left
		}
	}
	stage.SetText(text)
	if r.state == string(job.StateFailed) {
		stage.Importance = widget.DangerImportance
	} else {
		stage.Importance = widget.MediumImportance
	}
	stage.Refresh()
	bar := line.Objects[1].(*widget.ProgressBar)
	bar.SetValue(r.frac)
	if r.state == string(job.StateRunning) || r.state == string(job.StateDone) {
		bar.Show()
	} else {
		bar.Hide() // Fyne's empty track reads as a full bar
	}
	if ic := theme.CancelIcon(); cancel.Icon == nil || cancel.Icon.Name() != ic.Name() {
		cancel.SetIcon(ic) // after a theme switch: the icon in the theme's colours
	}
	key, row := r.key, id
	cancel.OnTapped = func() {
		if e.child == nil || row >= len(e.rows) || e.rows[row].key != key {
			return
		}
		e.child.CancelTask(key)
		if r := &e.rows[row]; r.state != string(job.StateRunning) {
			// A queued task stops as it comes up (campaign.Serve).
			r.state, r.stage = stateCancelling, "stops as it comes up, not recorded: a launch runs it"
			e.list.RefreshItem(row)
		}
		e.s.status.Info("cancelling " + taskTitle(r.label))
	}
	if queued := r.state == string(job.StateToRun) || r.state == string(job.StateCancelled) || r.state == string(job.StateInterrupted); (r.state == string(job.StateRunning) || queued) && e.child != nil {
		cancel.Enable()
	} else {
		cancel.Disable()
	}
}

// stateCancelling is a queued task's state once the user cancelled it,
// until the campaign ends or the task comes up (and stops).
const stateCancelling = "cancelling"

// showRows shows rows as the task list (UI goroutine), the overall bar
// hidden until a campaign runs.
func (e *Evaluate) showRows(rows []taskRow) {
	e.rows, e.byKey = rows, map[string]int{}
	for i, r := range rows {
		e.byKey[r.key] = i
	}
	e.list.Refresh()
}

// taskProtocol is the protocol setting a task's label ends with.
func taskProtocol(label string) string {
	if i := strings.LastIndex(label, " · "); i >= 0 {
		return label[i+len(" · "):]
	}
	return label
}

// taskLeft words the time left until a running task finishes: the mean
// time of the tasks of its protocol setting finished in this run (else of
// any task finished, else the estimate's time per task) less its time so
// far — "about 40s left", "finishing" once that has run out; "" while
// nothing tells.
func (e *Evaluate) taskLeft(r taskRow, now time.Time) string {
	if r.started.IsZero() {
		return ""
	}
	var mean time.Duration
	if ds := e.took[taskProtocol(r.label)]; len(ds) > 0 {
		mean = meanDuration(ds)
	} else {
		var all []time.Duration
		for _, ds := range e.took {
			all = append(all, ds...)
		}
		if len(all) > 0 {
			mean = meanDuration(all)
		} else if e.perTask > 0 {
			mean = e.perTask
		}
	}
	if mean <= 0 {
		return ""
	}
	left := mean - now.Sub(r.started)
	if left < time.Second {
		return "finishing"
	}
	return fmt.Sprintf("about %s left", left.Round(time.Second))
}

func meanDuration(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// offerResume looks for campaigns launched here that did not finish and
// offers to resume each.
func (e *Evaluate) offerResume() {
	offered := false
	for _, p := range e.s.Recent(prefRecentRuns) {
		c, err := campaign.Load(p)
		if err != nil {
			continue
		}
		r, err := campaign.Open(c.Spec.Output)
		if err != nil {
			continue
		}
		st := r.Status()
		if len(st.Missing) == 0 || len(st.Done)+len(st.Failed) == 0 {
			continue
		}
		total := len(st.Done) + len(st.Failed) + len(st.Missing)
		if holder, ok := campaign.Running(c.Spec.Output); ok {
			// Another process (a second window, the CLI) runs it now: it is
			// not interrupted, and a resume here would be refused.
			msg := wrapped(fmt.Sprintf("Campaign %s is running now in %s: %d of %d tasks done so far.", c.Spec.Name, holder, len(st.Done), total))
			var row *fyne.Container
			row = container.NewBorder(nil, nil, nil, widget.NewButton("Not now", func() { e.resume.Remove(row) }), msg)
			e.resume.Add(row)
			continue
		}
		path := p
		if !offered {
			offered = true
			e.OpenSpec(path) // the form shows the first interrupted campaign
			e.specPath = path
			e.launch.SetText("Resume")
		}
		msg := wrapped(fmt.Sprintf("Campaign %s did not finish: %s.", c.Spec.Name, st.Words()))
		var row *fyne.Container
		resume := widget.NewButton("Resume", func() {
			c, err := campaign.Load(path)
			if err != nil {
				e.s.status.Error(err)
				return
			}
			e.OpenSpec(path)
			e.specPath = path
			e.run(c)
		})
		resume.Importance = widget.HighImportance
		dismiss := widget.NewButton("Not now", func() { e.resume.Remove(row) })
		row = container.NewBorder(nil, nil, nil, container.NewHBox(resume, dismiss), msg)
		e.resume.Add(row)
	}
}

// taskTitle puts what distinguishes a task first: "gradient · ROAR
// (fashion-mnist seed 1)" for "fashion-mnist seed 1 · gradient · ROAR".
func taskTitle(label string) string {
	data, rest, ok := strings.Cut(label, " · ")
	if !ok {
		return label
	}
	return rest + "  (" + data + ")"
}
