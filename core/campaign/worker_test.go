package campaign

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"faithlab/core/job"
)

// worker is a Serve in a child process: this test binary, re-run.
func worker(spec string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAITHLAB_SERVE_SPEC="+spec)
	return cmd
}

// A campaign run by a child process streams the runner's events; a task
// cancelled through the child is not recorded, and a second child resumes
// the campaign to the results of an uninterrupted run.
func TestChildRunsCancelsATaskAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two campaigns")
	}
	want := readCSV(t, run(t, load(t, t.TempDir()), job.Shard{}).Dir)
	dir := t.TempDir()
	load(t, dir)
	spec := filepath.Join(dir, "campaign.yaml")
	c, err := StartChild(worker(spec))
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	kinds := map[job.Kind]int{}
	for e := range c.Events() {
		kinds[e.Kind]++
		if e.Kind == job.Progress && victim == "" && e.Key != "" {
			victim = e.Key
			c.CancelTask(victim)
		}
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if kinds[job.Cancelled] != 1 || kinds[job.Finished] != 5 || kinds[job.Done] != 1 {
		t.Errorf("events by kind %v: want one cancelled, five finished, done", kinds)
	}
	c, err = StartChild(worker(spec))
	if err != nil {
		t.Fatal(err)
	}
	for range c.Events() {
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := readCSV(t, filepath.Join(dir, "run")); !bytes.Equal(got, want) {
		t.Error("results after a task cancelled in a child and a resume differ from an uninterrupted run's")
	}
}

// A child whose parent goes away (its standard input closes) stops the
// campaign, keeping what finished; Stop does the same on request.
func TestChildStopsWhenAsked(t *testing.T) {
	dir := t.TempDir()
	load(t, dir)
	c, err := StartChild(worker(filepath.Join(dir, "campaign.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	for e := range c.Events() {
		if e.Kind == job.Started {
			c.Stop()
		}
	}
	if err := c.Wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("a stopped campaign's child: %v, want a cancel", err)
	}
	if _, err := StartChild(exec.Command(filepath.Join(dir, "no-such-worker"))); err == nil {
		t.Error("a missing worker binary started")
	}
}

// A queued task is cancelled too: as it comes up it stops, is not
// recorded, and the others run.
func TestChildCancelsAQueuedTask(t *testing.T) {
	dir := t.TempDir()
	c := loadSpec(t, dir, `name: queued
output: run
datasets: [{id: gmm, train_samples: 600, test_samples: 60}]
model: {arch: mlp, epochs: 1}
methods: [gradient, gradxinput, random]
protocols: [{name: deletion, params: {samples: 20}}]
workers: 1
`)
	tasks := c.Tasks(job.Shard{})
	last := tasks[len(tasks)-1]
	child, err := StartChild(worker(filepath.Join(dir, "campaign.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[job.Kind]int{}
	var cancelled string
	for e := range child.Events() {
		kinds[e.Kind]++
		switch {
		case e.Kind == job.Started && kinds[job.Started] == 1:
			child.CancelTask(last.Key) // queued behind the one running
		case e.Kind == job.Cancelled:
			cancelled = e.Key
		}
	}
	if err := child.Wait(); err != nil {
		t.Fatal(err)
	}
	if cancelled != last.Key || kinds[job.Cancelled] != 1 || kinds[job.Finished] != len(tasks)-1 {
		t.Errorf("events by kind %v, cancelled %q: want the queued %s cancelled and the rest finished", kinds, cancelled, last.Label)
	}
	r, err := Open(filepath.Join(dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	if st := r.Status(); len(st.Missing) != 1 || st.Missing[0].Key != last.Key {
		t.Errorf("missing %+v: want the cancelled task alone", st.Missing)
	}
}
