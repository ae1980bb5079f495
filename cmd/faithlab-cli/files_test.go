package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Maps written by attribute (.npz with their index) or export --maps and
// read back by a campaign through the file method, under any label, give
// the campaign's CSV for its own maps byte for byte.
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

	// export --maps writes the run's maps as .npy in dataset order, which
	// the file method reads back to the same results again.
	if err := runExportResults(ctx, []string{p("own"), "--maps", p("exported"), "--units", p("units.csv")}); err != nil {
		t.Fatal(err)
	}
	list := readRows(t, p("exported/maps.csv"))
	if len(list) != 3 || list[1][0] != "gmm_dim=16_samples=800_seed1_gradient_test.npy" || list[2][6] != "train" || list[1][7] != "160" {
		t.Fatalf("maps.csv: %v", list)
	}
	// Under another label, too: a name is not data (the intervals' seeds
	// do not hold it).
	again := write("again.yaml", "again", "{name: file, label: theirs, params: {test: exported/"+list[1][0]+", train: exported/"+list[2][0]+"}}")
	if err := runCampaign(ctx, []string{again, "--quiet"}); err != nil {
		t.Fatal(err)
	}
	if c := strings.ReplaceAll(withoutRunID(readCSV(t, p("again"))), ",theirs,", ",gradient,"); c != a {
		t.Errorf("results from the exported maps differ from the campaign's own:\n%s\nvs\n%s", c, a)
	}

	// Every score's value is the mean of its inputs' values in --units.
	sum, n := 0.0, 0
	for _, row := range readRows(t, p("units.csv"))[1:] {
		if row[5] == "ROAR" && row[7] == "mean_accuracy" {
			v, err := strconv.ParseFloat(row[9], 64)
			if err != nil {
				t.Fatal(err)
			}
			sum, n = sum+v, n+1
		}
	}
	var want float64
	for _, row := range readRows(t, p("own/results.csv")) {
		if row[5] == "ROAR" && row[7] == "mean_accuracy" && row[8] == "" {
			want, _ = strconv.ParseFloat(row[9], 64)
		}
	}
	if n != 160 || math.Abs(sum/float64(n)-want) > 1e-6 {
		t.Errorf("ROAR's mean accuracy: %d inputs averaging %g, the CSV says %g", n, sum/float64(n), want)
	}

	// Maps that change under the same file name are new maps: the tasks
	// run again rather than being taken as done.
	if err := runAttribute(ctx, []string{"--model", p("m.flm"), "--method", "random", "--n", "0", "--out", p("test.npz")}); err != nil {
		t.Fatal(err)
	}
	if err := runCampaign(ctx, []string{file, "--quiet"}); err != nil {
		t.Fatal(err)
	}
	if c := withoutRunID(readCSV(t, p("file"))); c == a {
		t.Error("the test maps changed, and the campaign kept the results of the old ones")
	}
}

func readRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func withoutRunID(csv []byte) string {
	var out []string
	for _, line := range strings.Split(string(csv), "\n") {
		_, rest, _ := strings.Cut(line, ",")
		out = append(out, rest)
	}
	return strings.Join(out, "\n")
}
