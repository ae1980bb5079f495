package campaign

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/job"
)

// smallSpec is 6 quick tasks: 3 methods × 2 protocols on a small mixture.
const smallSpec = `name: small
output: run
datasets: ["gmm:dim=4,samples=200"]
model: {arch: logreg, epochs: 1}
methods: [gradient, random, gradxinput]
protocols:
  - {name: deletion, params: {samples: 20}}
  - {name: pixelflipping, params: {samples: 20}}
`

// runShards runs the small campaign as three shards and returns their
// folders.
func runShards(t *testing.T) []string {
	t.Helper()
	c := loadSpec(t, t.TempDir(), smallSpec)
	var dirs []string
	for i := range 3 {
		dirs = append(dirs, run(t, c, job.Shard{I: i, Of: 3}).Dir)
	}
	return dirs
}

// One shard of three merged alone: the merge counts the 4 tasks not run
// and names the two shards not given, and the merged run's report and
// state say the tasks are missing.
func TestMergeOfSomeShardsSaysWhichAreMissing(t *testing.T) {
	shards := runShards(t)
	out := filepath.Join(t.TempDir(), "merged")
	m, err := Merge(out, nil, shards[0])
	if err != nil {
		t.Fatal(err)
	}
	if m.Done != 2 || m.Missing != 4 || m.Shards != "shard 1/3 not given (2 tasks), shard 2/3 not given (2 tasks)" {
		t.Errorf("merge of shard 0 alone: %+v", m)
	}
	md, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Incomplete: 4 of 6 tasks are missing** (0 failed, 4 not run)") {
		t.Errorf("REPORT.md does not say 4 of 6 tasks are missing:\n%.600s", md)
	}
	host, _ := os.Hostname()
	if s := mustOpen(t, out).State(); !strings.Contains(s, "from 1 run, ") || !strings.Contains(s, "with 4 tasks to run") || !strings.Contains(s, "on "+host+" (") || strings.Contains(s, "0 CPUs") {
		t.Errorf("merged run's state does not say what it merged, where those ran and what is left: %q", s)
	}

	all := filepath.Join(t.TempDir(), "all")
	if m, err := Merge(all, nil, shards...); err != nil || m.Missing != 0 || m.Shards != "" {
		t.Errorf("merge of every shard: %+v, %v", m, err)
	}
	if s := mustOpen(t, all).State(); !strings.HasPrefix(s, "merged ") || !strings.Contains(s, "from 3 runs, ") || strings.Contains(s, "to run") {
		t.Errorf("state of a complete merge: %q", s)
	}
	if m := mustOpen(t, all).Manifest; len(m.Merged) != 3 || m.Merged[2].Shard != "2/3" || m.Merged[0].Host != host {
		t.Errorf("the merged manifest does not keep its shards' manifests: %+v", m.Merged)
	}
	// A merge of a merge names the shards beneath, not the merge's empty host.
	twice := filepath.Join(t.TempDir(), "twice")
	part := filepath.Join(t.TempDir(), "part")
	if _, err := Merge(part, nil, shards[0], shards[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(twice, nil, part, shards[2]); err != nil {
		t.Fatal(err)
	}
	if s := mustOpen(t, twice).State(); !strings.Contains(s, "from 3 runs, ") || strings.Contains(s, "(0 CPUs)") {
		t.Errorf("state of a merge of a merge: %q", s)
	}
	if md, _ := os.ReadFile(filepath.Join(all, "REPORT.md")); strings.Contains(string(md), "Incomplete") {
		t.Error("a complete merge's REPORT.md says it is incomplete")
	}
}

// A shard given twice, as the same folder or as a copy of it, is refused
// with the shard named.
func TestMergeRefusesAShardGivenTwice(t *testing.T) {
	shards := runShards(t)
	copied := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-r", shards[1], copied).CombinedOutput(); err != nil {
		t.Skipf("cp: %v %s", err, out)
	}
	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"the same folder", []string{shards[0], shards[1], shards[0] + "/"}, "given twice"},
		{"a copy of a shard", []string{shards[1], copied}, "both shard 1/3"},
	} {
		_, err := Merge(filepath.Join(t.TempDir(), "merged"), nil, tc.dirs...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Base(tc.dirs[len(tc.dirs)-1])) {
			t.Errorf("%s: %v, want an error saying %q and naming the folder", tc.name, err, tc.want)
		}
	}
}

// A sharded campaign's folder has no manifest of its own: its state is its
// shards', and agrees with its status.
func TestStateOfAShardedCampaignsFolderIsItsShards(t *testing.T) {
	shards := runShards(t)
	parent := filepath.Dir(filepath.Dir(shards[0]))
	if s := mustOpen(t, parent).State(); !strings.HasPrefix(s, "3 of 3 shards started ") || !strings.Contains(s, ", ended by ") || strings.Contains(s, "to run") {
		t.Errorf("state with every shard done: %q", s)
	}
	if err := os.RemoveAll(shards[2]); err != nil {
		t.Fatal(err)
	}
	if s := mustOpen(t, parent).State(); !strings.HasPrefix(s, "2 of 3 shards started ") || !strings.HasSuffix(s, "; 2 tasks to run") {
		t.Errorf("state with shard 2/3 never run: %q", s)
	}
}
