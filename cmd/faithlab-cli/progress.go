package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"faithlab/core/job"
	"faithlab/core/train"
)

// progress shows the runner's events: on a terminal a bar redrawn in
// place at most ten times a second; otherwise (a log file) plain lines,
// a task's end at once and its progress at most every ten seconds.
type progress struct {
	w        *os.File
	tty      bool
	quiet    bool
	last     time.Time
	every    time.Duration
	drawn    bool
	done     int
	total    int
	eta      time.Duration
	started  time.Time
	finished int // tasks finished in this session
}

func newProgress(w *os.File, quiet bool) *progress {
	p := &progress{w: w, quiet: quiet, every: 10 * time.Second, started: time.Now()}
	if fi, err := w.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		p.tty, p.every = true, 100*time.Millisecond
	}
	return p
}

func (p *progress) show(events <-chan job.Event) {
	for e := range events {
		p.done, p.total = e.Done, e.Total
		if e.ETA > 0 {
			p.eta = e.ETA
		}
		switch e.Kind {
		case job.Finished, job.Failed:
			msg := ""
			if e.Kind == job.Failed {
				msg = ": FAILED: " + e.Err
			}
			p.line(fmt.Sprintf("[%d/%d] %s%s%s", e.Done, e.Total, e.Task, msg, p.left()))
		case job.Repaired:
			p.line("note: " + e.Err)
		case job.Warning:
			p.line("warning: " + e.Err)
		case job.Note:
			if !p.quiet {
				p.line("note: " + e.Err)
			}
		case job.Cancelled:
			p.line(fmt.Sprintf("[%d/%d] %s: cancelled; a resume runs it", e.Done, e.Total, e.Task))
		case job.Skipped:
			if !p.quiet {
				p.line(fmt.Sprintf("[%d/%d] %s: done before", e.Done, e.Total, e.Task))
			}
		case job.Progress:
			if p.quiet || time.Since(p.last) < p.every {
				continue
			}
			p.last = time.Now()
			stage := e.Stage
			if p.tty {
				p.bar(e.Task + ": " + stage)
			} else {
				fmt.Fprintf(p.w, "[%d/%d] %s: %s%s\n", e.Done, e.Total, e.Task, stage, p.left())
			}
		case job.Done:
			p.clear()
		}
	}
	p.clear()
}

// left words the ETA.
func (p *progress) left() string {
	if p.eta <= 0 || p.done >= p.total {
		return ""
	}
	return fmt.Sprintf("  (about %s left)", p.eta.Round(time.Second))
}

// line prints a line above the bar.
func (p *progress) line(s string) {
	p.clear()
	fmt.Fprintln(p.w, s)
}

func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// bar redraws the terminal's status line: a bar of the tasks done, the
// ETA and what runs now, cut to 100 columns.
func (p *progress) bar(now string) {
	const width = 24
	filled := 0
	if p.total > 0 {
		filled = width * p.done / p.total
	}
	eta := ""
	if p.eta > 0 {
		eta = " ETA " + p.eta.Round(time.Second).String()
	}
	s := fmt.Sprintf("[%s%s] %d/%d%s  %s", strings.Repeat("█", filled), strings.Repeat("·", width-filled), p.done, p.total, eta, now)
	if r := []rune(s); len(r) > 100 {
		s = string(r[:99]) + "…"
	}
	fmt.Fprint(p.w, "\r\033[K"+s)
	p.drawn = true
}

// newTrainProgress shows training: a line per epoch and, on a terminal,
// a bar over the batches of the epoch under way.
func newTrainProgress(w *os.File) func(train.Progress) {
	p := newProgress(w, false)
	return func(q train.Progress) {
		p.done, p.total = q.Epoch-1, q.Epochs
		if q.EpochDone {
			e := q.Last
			val := ""
			if e.ValLoss != 0 {
				val = fmt.Sprintf("  val_loss %.4f  val_acc %.4f", e.ValLoss, e.ValAcc)
			}
			p.line(fmt.Sprintf("epoch %3d  loss %.4f  acc %.4f%s  %.0f img/s", e.Epoch, e.Loss, e.Accuracy, val, e.ImagesSec))
			return
		}
		if p.tty && time.Since(p.last) >= p.every {
			p.last = time.Now()
			p.bar(fmt.Sprintf("epoch %d: batch %d/%d  loss %.4f  acc %.4f", q.Epoch, q.Batch, q.Batches, q.Loss, q.Accuracy))
		}
	}
}
