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
		{"entry from before checksums, cut short", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			bare := b[8+32:] // the model file itself, as caches held it before checksums
			return os.WriteFile(p, bare[:len(bare)-100], 0o644)
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
				recs, _ := second.Run.Records()
				t.Fatalf("run on the damaged cache: %d failed, %v (%+v)", failed, err, recs)
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
