//go:build unix

// Package fifotest checks that code refuses a named pipe where a file
// should be instead of waiting on it: opened for reading, a pipe blocks
// until a writer comes, where Ctrl-C cannot reach it.
package fifotest

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// Make makes a named pipe at path, or skips the test where none can be.
func Make(t testing.TB, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

// Refused runs f, which is given the named pipe fifo, and returns its
// error. Still blocked after 10 s, f fails the test and is released by
// opening the pipe for writing until it returns, so that the run ends.
func Refused(t testing.TB, fifo string, f func() error) error {
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
