package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"faithlab/core/engine/gemm"
	"faithlab/core/job"
	"faithlab/core/protocol"
	"faithlab/core/store"
)

// Two books on one file — the CLI's and the workbench's — share what
// either measured: the second estimates from the first's speeds without
// measuring, and says when they were measured.
func TestSpeedBookFileSharesSpeedsBetweenProcesses(t *testing.T) {
	c := load(t, t.TempDir())
	file := filepath.Join(t.TempDir(), "faithlab", "speeds.json")
	sp := Speeds{Train: 1000, Gradient: 2000, Forward: 5000, Compare: 1e8, Open: 0.2}
	measured := 0
	measure := func(context.Context, *Campaign) (Measured, error) {
		measured++
		return Measured{Speeds: sp, At: time.Now(), Busy: 0.1}, nil
	}
	first := &SpeedBook{File: file, Measure: measure}
	za, err := first.Estimate(context.Background(), c, best())
	if err != nil {
		t.Fatal(err)
	}
	second := &SpeedBook{File: file, Measure: measure}
	if !second.Known(c) {
		t.Fatal("the second book does not know the speeds the first kept in the file")
	}
	zb, err := second.Estimate(context.Background(), c, best())
	if err != nil {
		t.Fatal(err)
	}
	if measured != 1 || zb.Seconds != za.Seconds || zb.String() != za.String() || !zb.Measured.At.Equal(za.Measured.At) {
		t.Errorf("measured %d times; %q then %q", measured, za, zb)
	}
	// Stale in the file: measured again.
	m, _ := second.Measured(c)
	m.At = time.Now().Add(-time.Hour)
	second.Keep(c, m)
	third := &SpeedBook{File: file, Measure: measure}
	if third.Known(c) {
		t.Error("speeds measured an hour ago stand")
	}
}

// A speeds file is a cache: one that is garbage, truncated, or holds a
// speed no measurement gives (a negative one, a share of the machine
// beyond all of it, a time to come)
// is measured over, never read into an estimate, and written afresh.
func TestSpeedBookFileReadsNoForgedSpeeds(t *testing.T) {
	c := load(t, t.TempDir())
	host, _ := os.Hostname()
	key := host + "|" + c.SpeedsKey()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for name, text := range map[string]string{
		"garbage":     "\x00\x01 not json",
		"truncated":   `{"speeds": {"` + key + `": {"Speeds": {"Train": 1000`,
		"negative":    `{"speeds": {"` + key + `": {"Speeds": {"Train": -1000, "Forward": 5000}, "At": "` + now + `"}}}`,
		"prior below": `{"speeds": {"` + key + `": {"Speeds": {"Train": 1000, "Forward": 5000}, "Priors": {"x": -1}, "At": "` + now + `"}}}`,
		"future":      `{"speeds": {"` + key + `": {"Speeds": {"Train": 1000, "Forward": 5000}, "At": "2999-01-01T00:00:00Z"}}}`,
		"busy beyond": `{"speeds": {"` + key + `": {"Speeds": {"Train": 1000, "Forward": 5000}, "Busy": 7, "At": "` + now + `"}}}`,
	} {
		file := filepath.Join(t.TempDir(), "speeds.json")
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		measured := 0
		book := &SpeedBook{File: file, Measure: func(context.Context, *Campaign) (Measured, error) {
			measured++
			return Measured{Speeds: Speeds{Train: 10, Forward: 20}, At: time.Now()}, nil
		}}
		if book.Known(c) {
			t.Errorf("%s: the file's speeds stand", name)
		}
		z, err := book.Estimate(context.Background(), c, best())
		if err != nil || measured != 1 || z.Measured.Speeds.Train != 10 {
			t.Errorf("%s: measured %d times, train speed %g (%v)", name, measured, z.Measured.Speeds.Train, err)
		}
		if !(&SpeedBook{File: file}).Known(c) {
			t.Errorf("%s: the measurement is not written over the file", name)
		}
	}
}

// A model from a file gets a time too: an ONNX model's passes are timed
// on a short probe of its own inputs and its retraining on a copy; a
// TorchScript model's estimate says why it has none (its torch worker,
// which runs the file's code, starts only with a launch).
func TestEstimateOfModelsFromFiles(t *testing.T) {
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist"); err != nil {
		t.Skip("Debian's dataset-fashion-mnist is not installed")
	}
	for _, tc := range []struct{ file, engine, says string }{
		{"onnx/goar-cnn.onnx", "native", "About "},
		{"torch/scripted-cnn.pt", "torch", "No time here: a TorchScript model runs in its torch worker"},
	} {
		dir := t.TempDir()
		for _, ext := range []string{"", ".json"} {
			b, err := os.ReadFile(filepath.Join("..", "..", "testdata", tc.file+ext))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(tc.file)+ext), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c := loadSpec(t, dir, `output: run
engine: `+tc.engine+`
datasets: [{id: fashion-mnist, train_samples: 300, test_samples: 40}]
model: {file: `+filepath.Base(tc.file)+`}
methods: [gradient, random]
protocols:
  - {name: deletion, params: {samples: 10}}
  - {name: road, params: {rates: [0.5], retrain: true}}
retrain: {epochs: 1}
`)
		z, err := new(SpeedBook).Estimate(context.Background(), c, best())
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if s := z.String(); !strings.Contains(s, tc.says) || strings.Contains(s, "Not counted") {
			t.Errorf("%s: %s", tc.file, s)
		}
		if sp := z.Measured.Speeds; tc.says == "About " && !(sp.Forward > 0 && sp.Gradient > 0 && sp.Train > 0) {
			t.Errorf("%s: speeds %+v", tc.file, sp)
		}
	}
}

// A campaign whose every task is done is counted without speeds: nothing
// is measured for a launch that runs nothing.
func TestEstimateOfAFinishedCampaignMeasuresNothing(t *testing.T) {
	c := load(t, t.TempDir())
	run, err := store.Open(c.Spec.Output, c.Raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range c.Tasks(job.Shard{}) {
		if err := run.Append(store.Record{Task: task.Key, Label: task.Label, Result: &protocol.Result{Protocol: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	book := &SpeedBook{Measure: func(context.Context, *Campaign) (Measured, error) {
		t.Error("measured the speeds of a campaign with nothing to run")
		return Measured{}, nil
	}}
	for _, estimate := range []func(context.Context, *Campaign, gemm.Kernel) (Size, error){book.Estimate, book.Time} {
		z, err := estimate(context.Background(), c, best())
		if err != nil || z.Tasks != 0 || z.Skipped != len(c.Tasks(job.Shard{})) || z.Seconds != 0 {
			t.Errorf("size %+v (%v)", z, err)
		}
	}
}
