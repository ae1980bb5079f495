//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// refusedWithoutHanging runs f, which is given the named pipe fifo where a
// file is expected, and returns its error. Opening a pipe for reading
// blocks until a writer comes: if f has not returned within a few seconds,
// the test fails and writers come and go until f returns.
func refusedWithoutHanging(t *testing.T, fifo string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Errorf("still blocked after 10 s on the named pipe %s", fifo)
	}
	for {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case err := <-done:
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// A named pipe where a dataset, a model or a method's maps should be is
// refused with an error naming it, instead of blocking forever in open
// (where Ctrl-C cannot reach it).
func TestNamedPipeWhereAFileShouldBeIsRefusedNotWaitedOn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	for _, name := range []string{"fifo.csv", "fifo.npz", "fifo.npy", "fifo.flm"} {
		if err := syscall.Mkfifo(p(name), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	if err := runTrain(ctx, []string{"--dataset", "gmm:dim=4,samples=200", "--model", "logreg", "--epochs", "1", "--out", p("m.flm")}); err != nil {
		t.Fatal(err)
	}
	spec := p("file.yaml")
	if err := os.WriteFile(spec, []byte(fmt.Sprintf(`output: %s
datasets: ["gmm:dim=4,samples=200"]
model: {file: m.flm}
methods: [{name: file, params: {test: fifo.npy}}]
protocols:
  - {name: deletion, params: {samples: 20}}
`, p("out"))), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, fifo string
		run        func() error
	}{
		{"train --dataset fifo.csv", "fifo.csv", func() error {
			return runTrain(ctx, []string{"--dataset", p("fifo.csv"), "--model", "logreg", "--epochs", "1", "--out", p("a.flm")})
		}},
		{"train --dataset fifo.npz", "fifo.npz", func() error {
			return runTrain(ctx, []string{"--dataset", p("fifo.npz"), "--model", "logreg", "--epochs", "1", "--out", p("b.flm")})
		}},
		{"eval --model fifo.npz", "fifo.npz", func() error { return runEval(ctx, []string{"--model", p("fifo.npz")}) }},
		{"eval --model fifo.flm", "fifo.flm", func() error { return runEval(ctx, []string{"--model", p("fifo.flm")}) }},
		{"a file method's maps", "fifo.npy", func() error { return runCampaign(ctx, []string{spec, "--quiet"}) }},
	} {
		err := refusedWithoutHanging(t, p(tc.fifo), tc.run)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), tc.fifo) {
			t.Errorf("%s: %v, want an error naming %s and saying it is not a regular file", tc.name, err, tc.fifo)
		}
	}
}
