//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/internal/fifotest"
)

// A named pipe where a dataset, a model or a method's maps should be is
// refused with an error naming it, instead of blocking forever in open
// (where Ctrl-C cannot reach it).
func TestNamedPipeWhereAFileShouldBeIsRefusedNotWaitedOn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	for _, name := range []string{"fifo.csv", "fifo.npz", "fifo.npy", "fifo.flm"} {
		fifotest.Make(t, p(name))
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
		{"eval --logits fifo.csv", "fifo.csv", func() error { return runEval(ctx, []string{"--model", p("m.flm"), "--logits", p("fifo.csv")}) }},
		{"a file method's maps", "fifo.npy", func() error { return runCampaign(ctx, []string{spec, "--quiet"}) }},
	} {
		err := fifotest.Refused(t, p(tc.fifo), tc.run)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), tc.fifo) {
			t.Errorf("%s: %v, want an error naming %s and saying it is not a regular file", tc.name, err, tc.fifo)
		}
	}
}
