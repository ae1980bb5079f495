package job

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/model"
)

const healSpec = `name: heal
output: run
datasets: [{id: gmm, train_samples: 200, test_samples: 40}]
model: {arch: mlp, epochs: 1}
methods: [gradient]
protocols: [{name: deletion, params: {samples: 10}}]
`

// A damaged base model in the cache — cut short, with or without the
// cache's checksum — is reported by path, moved aside and trained again:
// the campaign succeeds instead of failing every task for ever.
func TestDamagedBaseModelInTheCacheIsReportedMovedAsideAndRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(path string) error
	}{
		{"entry cut short", func(p string) error {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, st.Size()/2)
		}},
		{"entry of an older Faithlab", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, b[8+64:], 0o644) // the model file itself, as caches held it before checksums
		}},
		{"entry swapped with another", func(p string) error {
			// A valid entry of its own (the test maps), under the base
			// model's name.
			others, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(p)), "*", "*.npy"))
			if len(others) == 0 {
				return os.ErrNotExist
			}
			b, err := os.ReadFile(others[0])
			if err != nil {
				return err
			}
			return os.WriteFile(p, b, 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := newRunner(t, t.TempDir(), healSpec)
			if failed, err := first.Execute(context.Background()); err != nil || failed != 0 {
				t.Fatalf("first run: %d failed, %v", failed, err)
			}
			entry := first.Cache.Path(Plan(first.Spec)[0].Base, ".flm")
			if err := tc.damage(entry); err != nil {
				t.Fatal(err)
			}
			// Another campaign on the same cache needs the base model.
			second := newRunner(t, t.TempDir(), healSpec)
			second.Cache = first.Cache
			events := make(chan Event, 100)
			second.Events = events
			failed, err := second.Execute(context.Background())
			close(events)
			if err != nil || failed != 0 {
				log, _ := second.Run.Read()
				t.Fatalf("run on the damaged cache: %d failed, %v (%+v)", failed, err, log.Records)
			}
			var reports []string
			for e := range events {
				if e.Kind == Repaired {
					reports = append(reports, e.Err)
				}
			}
			if len(reports) != 1 || !strings.Contains(reports[0], entry) || !strings.Contains(reports[0], entry+".damaged") {
				t.Errorf("repair events %q, want one naming %s", reports, entry)
			}
			if _, err := os.Stat(entry + ".damaged"); err != nil {
				t.Errorf("damaged entry not kept aside: %v", err)
			}
			b, ok, err := second.Cache.Get(Plan(second.Spec)[0].Base, ".flm")
			if !ok || err != nil {
				t.Fatalf("rebuilt entry: ok %v, %v", ok, err)
			}
			if _, err := model.Decode(b, second.Kernel); err != nil {
				t.Errorf("rebuilt entry does not decode: %v", err)
			}
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(entry), "*.damaged")); len(m) != 1 {
				t.Errorf("damaged files %v", m)
			}
		})
	}
}

// Maps entries swapped among their names, each with a valid checksum of
// its own, are caught and rebuilt: the second run's results equal the
// first's. Served as they were, Gradient's maps stood in for Random's and
// every result changed with exit 0.
func TestSwappedMapsInTheCacheAreRebuiltNotUsed(t *testing.T) {
	const src = `name: swap
output: run
datasets: [{id: gmm, train_samples: 200, test_samples: 40}]
model: {arch: mlp, epochs: 1}
methods: [gradient, random]
protocols: [{name: deletion, params: {samples: 20}}]
`
	first := newRunner(t, t.TempDir(), src)
	if failed, err := first.Execute(context.Background()); err != nil || failed != 0 {
		t.Fatalf("first run: %d failed, %v", failed, err)
	}
	maps, _ := filepath.Glob(filepath.Join(first.Cache.Dir, "*", "*.npy"))
	var pair []string
	for _, p := range maps {
		if b, _ := os.ReadFile(p); len(b) > 1000 { // test maps, not the samples
			pair = append(pair, p)
		}
	}
	if len(pair) < 2 {
		t.Fatalf("maps entries %v", maps)
	}
	a, _ := os.ReadFile(pair[0])
	b, _ := os.ReadFile(pair[1])
	os.WriteFile(pair[0], b, 0o644)
	os.WriteFile(pair[1], a, 0o644)
	second := newRunner(t, t.TempDir(), src)
	second.Cache = first.Cache
	events := make(chan Event, 100)
	second.Events = events
	if failed, err := second.Execute(context.Background()); err != nil || failed != 0 {
		t.Fatalf("second run: %d failed, %v", failed, err)
	}
	close(events)
	repaired := 0
	for e := range events {
		if e.Kind == Repaired && strings.Contains(e.Err, "answers another request") {
			repaired++
		}
	}
	if repaired < 2 {
		t.Errorf("%d swapped entries reported, want 2", repaired)
	}
	if got, want := csvOf(t, second), csvOf(t, first); got != want {
		t.Errorf("results after the swap differ:\n%s\nwant\n%s", got, want)
	}
}
