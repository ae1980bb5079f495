package ui

// The Evaluate screen's size line: the campaign's tasks, time and memory
// before a launch, and what a launch does with a run folder that stopped.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"faithlab/core/campaign"
	"faithlab/core/job"
	"faithlab/core/report"
	"faithlab/core/spec"
)

// Size checks the campaign and says, in the background, how many tasks,
// retrainings and maps a launch makes — a resume skips the run's finished
// tasks — about how long they take here and how much memory
// (campaign.Estimate at this machine's speeds, measured once per model,
// dataset and engine in a campaign.SpeedBook), and whether Launch starts
// it or resumes a run of it that stopped. It runs after every edit while
// the screen is shown (Evaluate does no work the user did not ask for); a
// problem of the form shows in place of the size and clears from the
// status bar once fixed.
func (e *Evaluate) Size() {
	s, err := e.build()
	if err != nil {
		e.runNote = ""
		e.showSize("Not ready: " + strings.ReplaceAll(err.Error(), "\n", "; "))
		return
	}
	e.s.status.Resolved(causeCampaign)
	edit := e.edits
	// A quick look at the run folder first: what Launch does (the label
	// and the note come from it alone), then the sizing, which may
	// measure speeds.
	if e.checking != nil {
		e.checking()
	}
	var look runLook
	e.checking = e.s.Go("looking for a stopped run", func(ctx context.Context) error {
		look = lookAtRun(s)
		return ctx.Err()
	}, func(err error) {
		if err != nil || edit != e.edits {
			return
		}
		e.look = look
		if e.cancel == nil {
			e.setLaunch(look.resumes)
			e.showRows(look.rows) // the form's campaign, not the last one's
		}
		e.runNote = look.note
		e.estimate(s, look, edit)
	})
}

// estimate sizes the campaign s, whose run folder holds look, in the
// background (the edit it belongs to: a later one drops it).
func (e *Evaluate) estimate(s *spec.Spec, look runLook, edit int) {
	c := &campaign.Campaign{Spec: s}
	what := sizeKey(s)
	if look.done+look.failed > 0 {
		what += fmt.Sprintf("|%s|%d|%d", s.Output, look.done, look.failed) // a resume's size
	}
	shown := shownSize{key: sizeKey(s), output: s.Output}
	if z, ok := e.sized[what]; ok && what != "" && z.Measured.Fresh(time.Now()) {
		shown.size = z
		e.showSized(shown) // a new name sizes nothing again
		return
	}
	e.showSize("sizing…")
	e.sizeShown = shownSize{}
	if e.sizing != nil {
		e.sizing()
	}
	var z campaign.Size
	known := e.speeds.Known(c)
	e.sizing = e.s.Go("sizing the campaign", func(ctx context.Context) error {
		if !known {
			// The app's own work (predicting a split, training, maps)
			// would take the cores the speeds are measured on.
			e.s.waitQuiet(ctx, 90*time.Second)
		}
		var err error
		z, err = e.speeds.Estimate(ctx, c, e.s.cfg.Kernel) // `run --estimate`'s, from the book's speeds
		if ctx.Err() != nil {
			return ctx.Err() // replaced by a newer edit's: whatever it failed with says nothing
		}
		return err
	}, func(err error) {
		// Kept for the spec and the run folder the look saw, and only if the
		// estimate saw the folder so too: a task that finished between the
		// two (a run going on elsewhere) had kept a resume's size under the
		// plain spec, and a new name then showed "which a resume skips".
		// Speeds measured beside other work are measured again soon
		// (Measured.Fresh), and so is the size.
		if err == nil && what != "" && z.Skipped == look.done {
			e.sized[what] = z
		}
		if edit != e.edits || errors.Is(err, context.Canceled) {
			return // the form changed meanwhile: its own size comes
		}
		if err != nil {
			e.showSize("Cannot size it: " + oneLine(err.Error()))
			return
		}
		shown.size = z
		e.showSized(shown)
	})
}

// shownSize is an estimate shown, with the campaign it sizes (sizeKey and
// run folder): the one a launch of that campaign keeps beside its wall
// time.
type shownSize struct {
	key, output string
	size        campaign.Size
}

// showSized shows an estimate, and keeps its time per task (a running
// task's time left, until tasks of the run tell it better).
func (e *Evaluate) showSized(shown shownSize) {
	z := shown.size
	e.sizeShown = shown
	e.showSize(z.String())
	e.perTask = 0
	if z.Tasks > 0 {
		e.perTask = time.Duration(z.Seconds / float64(z.Tasks) * float64(time.Second))
	}
}

// runLook is what a campaign's run folder holds, as Launch sees it: the
// one look the form's note, the launch button, the status bar and the
// task list take their counts and states from.
type runLook struct {
	done, failed, missing int
	holder                string    // the live process running it now ("": none)
	resumes               bool      // Launch resumes (Resume), rather than starts
	note                  string    // in words, for the size's first line
	rows                  []taskRow // the campaign's tasks, each in its state
}

// lookAtRun reads the run folder of the campaign s (no UI goroutine).
func lookAtRun(s *spec.Spec) (l runLook) {
	var st campaign.Status
	defer func() { l.rows = planRows(s, st) }()
	l.holder, _ = campaign.Running(s.Output)
	r, err := campaign.Open(s.Output)
	if err != nil || len(r.Records) == 0 && len(r.Manifest.Stopped) == 0 {
		if l.holder != "" {
			l.note = fmt.Sprintf("Campaign %s is running now in %s: Launch waits for it to end. ", s.Name, l.holder)
		}
		return l
	}
	if !r.Ran(s) {
		l.note = otherSpecError(s).Error() + ". " // Launch refuses it: say so before
		return l
	}
	st = r.Status()
	l.done, l.failed, l.missing = len(st.Done), len(st.Failed), len(st.Missing)
	l.resumes = l.done > 0 && l.failed+l.missing > 0 || l.failed > 0
	l.note = runNote(st)
	if l.holder != "" {
		l.note = fmt.Sprintf("Campaign %s is running now in %s (%d of %s done so far): Launch waits for it to end. ", s.Name, l.holder, l.done, report.Count(l.done+l.failed+l.missing, "task"))
	}
	return l
}

// planRows are the campaign's tasks, each in the state st gives it (the
// zero Status: all to run), as the task list shows them.
func planRows(s *spec.Spec, st campaign.Status) []taskRow {
	var rows []taskRow
	for _, t := range job.Plan(s) {
		r := taskRow{key: t.Key, label: t.Label, state: string(st.State(t.Key))}
		switch job.State(r.state) {
		case job.StateDone:
			r.stage, r.frac = "done in an earlier run", 1
		case job.StateFailed:
			r.stage = "a launch runs it again"
		case job.StateCancelled, job.StateInterrupted:
			r.stage = "not recorded: a launch runs it"
		}
		rows = append(rows, r)
	}
	return rows
}

// launchWord is what the launch button says: the one word the status bar
// uses too.
func launchWord(resumes bool) string {
	if resumes {
		return "Resume"
	}
	return "Launch"
}

// showSize shows the campaign's size (or why it has none) after what its
// run folder holds already.
func (e *Evaluate) showSize(text string) {
	e.sizeText = text
	e.size.SetText(e.runNote + text)
}

// otherSpecError is why a campaign whose run folder holds another spec's
// results does not launch.
func otherSpecError(s *spec.Spec) error {
	return fmt.Errorf("campaign %s has results from another spec in %s: give this one another name", s.Name, s.Output)
}

// runNote says what a campaign's run folder holds, in the words of the
// CLI's status — tasks done, failed, cancelled by you, interrupted, to
// run —, and what a launch does with them: it runs the failed ones again,
// and the others.
func runNote(st campaign.Status) string {
	done, left := len(st.Done), len(st.Failed)+len(st.Missing)
	if left == 0 {
		return fmt.Sprintf("%s done, all of the campaign (their results are in Results): launching runs none again. ", report.Count(done, "task"))
	}
	word := "Resume"
	if done == 0 && len(st.Failed) == 0 {
		word = "Launch"
	}
	return fmt.Sprintf("%s: %s runs the other %d. ", st.Words(), word, left)
}

// sizeKey is what a campaign's estimate depends on: its spec but for its
// name and output folder.
func sizeKey(s *spec.Spec) string {
	c := *s
	c.Name, c.Output = "", ""
	b, err := spec.Format(&c)
	if err != nil {
		return "" // sized every time
	}
	return string(b)
}
