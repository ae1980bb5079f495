package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Maps written by attribute (.npz with their index) and read back by a
// campaign through the file method, filed under the name of the method
// that made them, give the campaign's CSV for its own maps byte for byte.
func TestAttributeMapsReadBackByACampaignGiveItsOwnResults(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model and runs two campaigns")
	}
	ctx := context.Background()
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	if err := runTrain(ctx, []string{"--dataset", "gmm:dim=16,samples=800", "--model", "mlp", "--epochs", "2", "--out", p("m.flm")}); err != nil {
		t.Fatal(err)
	}
	for _, split := range []string{"test", "train"} {
		if err := runAttribute(ctx, []string{"--model", p("m.flm"), "--method", "gradient", "--split", split, "--n", "0", "--out", p(split + ".npz")}); err != nil {
			t.Fatal(err)
		}
	}
	const tmpl = `output: %s
datasets: ["gmm:dim=16,samples=800"]
model: {file: m.flm}
methods: [%s]
protocols:
  - {name: deletion, params: {samples: 40}}
  - {name: roar, params: {rates: [0.3, 0.7]}}
retrain: {epochs: 1}
`
	write := func(name, out, method string) string {
		path := p(name)
		if err := os.WriteFile(path, []byte(fmt.Sprintf(tmpl, out, method)), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	own := write("own.yaml", "own", "gradient")
	file := write("file.yaml", "file", "{name: file, label: gradient, params: {test: test.npz, train: train.npz}}")
	for _, spec := range []string{own, file} {
		if err := runCampaign(ctx, []string{spec, "--quiet"}); err != nil {
			t.Fatal(err)
		}
	}
	// The first column names the run (its spec); every other byte is the same.
	a, b := withoutRunID(readCSV(t, p("own"))), withoutRunID(readCSV(t, p("file")))
	if a != b {
		t.Errorf("results from the file's maps differ from the campaign's own:\n%s\nvs\n%s", b, a)
	}
	if !strings.Contains(a, ",ROAR,") || strings.Count(a, "\n") < 3 {
		t.Errorf("too few results to compare:\n%s", a)
	}
}

func withoutRunID(csv []byte) string {
	var out []string
	for _, line := range strings.Split(string(csv), "\n") {
		_, rest, _ := strings.Cut(line, ",")
		out = append(out, rest)
	}
	return strings.Join(out, "\n")
}
