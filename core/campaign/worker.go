package campaign

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/report"
	"faithlab/core/spec"
)

// A campaign can run in a child process of the front end — the workbench
// runs its campaigns so: the child runs at a lower priority, so that the
// window stays responsive while the campaign takes every core, and a
// crash stays out of the window's process. The child (Serve) writes the
// runner's events to its standard output as JSON lines and reads commands
// from its standard input, a line each:
//
//	cancel KEY   stop the task with that key, running or queued (it is not recorded)
//	stop         stop the campaign after the tasks under way (the user's stop)
//
// It stops the campaign too when its standard input closes — which the
// kernel does when the front end ends, however it ends (kill -9
// included) — so that it never outlives the front end. Its last line is {"kind":"end"} with the
// run's error, if any, in "err".

// endKind marks the last line a worker writes.
const endKind job.Kind = "end"

// Serve runs (or resumes) the campaign of the spec file for a parent
// process, as described above, with o's kernel, engine and trust (its
// events and tasks are Serve's own).
func Serve(ctx context.Context, specPath string, o Options, in io.Reader, out io.Writer) error {
	lowerPriority()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	c, err := Load(specPath)
	enc := json.NewEncoder(out)
	if err != nil {
		enc.Encode(job.Event{Kind: endKind, Err: err.Error()})
		return err
	}
	tasks := &job.TaskControl{}
	// A task cancelled before it starts (queued) is cancelled as it
	// starts: the runner registers a task's cancel before it says Started,
	// and ahead's lock orders a cancel and the start it waits for.
	var mu sync.Mutex
	ahead := map[string]bool{}
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			cmd, arg, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
			switch cmd {
			case "cancel":
				mu.Lock()
				if !tasks.Cancel(arg) {
					ahead[arg] = true
				}
				mu.Unlock()
			case "stop":
				stop(job.ErrStoppedByUser) // the user's: the tasks cut short read "cancelled by you"
			}
		}
		stop(nil) // the parent is gone: the tasks cut short were interrupted
	}()
	events := make(chan job.Event, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range events {
			if e.Kind == job.Started {
				mu.Lock()
				if ahead[e.Key] {
					delete(ahead, e.Key)
					tasks.Cancel(e.Key)
				}
				mu.Unlock()
			}
			enc.Encode(e)
		}
	}()
	o.Events, o.Tasks = events, tasks
	out2, err := c.Run(ctx, o)
	<-done
	end := job.Event{Kind: endKind}
	switch {
	case err != nil:
		end.Err = err.Error()
	case out2.Failed > 0:
		end.Err = report.Count(out2.Failed, "task") + " failed"
	}
	return enc.Encode(end)
}

// Child is a campaign run by a child process (Serve).
type Child struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	mu     sync.Mutex
	events chan job.Event
	done   chan struct{}
	err    error
}

// below is the nice value a worker runs at when started at nice: 10 above
// (lower priority), 19 at most.
func below(nice int) int { return min(nice+10, 19) }

// StartChild starts the worker command cmd (a Serve behind some command
// line) and follows its events.
func StartChild(cmd *exec.Cmd) (*Child, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, left: 64 << 10}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the campaign worker %s: %w", cmd.Path, err)
	}
	c := &Child{cmd: cmd, in: in, events: make(chan job.Event, 64), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer close(c.events)
		dec := json.NewDecoder(out)
		ended := false
		for {
			var e job.Event
			if err := dec.Decode(&e); err != nil {
				break
			}
			if e.Kind == endKind {
				ended = true
				if e.Err != "" {
					c.err = errors.New(e.Err)
				}
				continue
			}
			c.events <- e
		}
		werr := cmd.Wait()
		if !ended {
			c.err = fmt.Errorf("the campaign worker ended without a result (%v): %s", werr, strings.TrimSpace(stderr.String()))
		}
	}()
	return c, nil
}

// Events are the runner's events; the channel closes when the child ends.
func (c *Child) Events() <-chan job.Event { return c.events }

// CancelTask stops one task, running or still queued (then as it starts);
// it is not recorded.
func (c *Child) CancelTask(key string) { c.send("cancel " + key) }

// Stop stops the campaign after the tasks under way.
func (c *Child) Stop() { c.send("stop") }

func (c *Child) send(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintln(c.in, line)
}

// Wait waits for the child to end (Events must be read to the end) and
// returns the run's error; a stopped campaign returns context.Canceled.
func (c *Child) Wait() error {
	<-c.done
	c.mu.Lock()
	c.in.Close()
	c.mu.Unlock()
	if c.err != nil && strings.HasSuffix(c.err.Error(), context.Canceled.Error()) {
		return context.Canceled
	}
	return c.err
}

// limitedWriter keeps the first left bytes written to it.
type limitedWriter struct {
	w    io.Writer
	left int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	n := len(p)
	if l.left > 0 {
		k := min(n, l.left)
		l.w.Write(p[:k])
		l.left -= k
	}
	return n, nil
}

// ServeSpeeds measures, for a parent process, the speeds of the campaign
// whose spec it reads from in (MeasureHere), and writes them to out as
// JSON: the workbench's estimate is measured so, where its campaigns run,
// not beside its window's own threads, at the priority a worker runs its
// campaign at (asWorker); the CLI's in a child of its own, at the CLI's
// priority, so that measuring adds nothing to a run's memory.
func ServeSpeeds(ctx context.Context, kernel gemm.Kernel, in io.Reader, out io.Writer, asWorker bool) error {
	if asWorker {
		lowerPriority()
	}
	raw, err := io.ReadAll(io.LimitReader(in, 4<<20))
	if err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	s, err := spec.Parse(filepath.Join(dir, "campaign.yaml"), raw)
	if err != nil {
		return err
	}
	m, err := MeasureHere(ctx, &Campaign{Spec: s, Raw: raw}, kernel)
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(m)
}

// MeasureIn measures the campaign's speeds in the worker process cmd
// (ServeSpeeds behind some command line); cancelling ctx ends it.
func MeasureIn(ctx context.Context, cmd *exec.Cmd, c *Campaign) (Measured, error) {
	var m Measured
	raw, err := spec.Format(c.Spec)
	if err != nil {
		return m, err
	}
	var out, stderr strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(raw), &out, &limitedWriter{w: &stderr, left: 64 << 10}
	if err := cmd.Start(); err != nil {
		return m, fmt.Errorf("starting the worker that measures the speeds %s: %w", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		return m, ctx.Err()
	case err = <-done:
	}
	if err != nil {
		return m, fmt.Errorf("measuring the speeds: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal([]byte(out.String()), &m); err != nil {
		return m, fmt.Errorf("measuring the speeds: the worker said %q: %w", out.String(), err)
	}
	return m, nil
}
