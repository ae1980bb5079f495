package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command refused before its run begins leaves the folder as it found
// it, so that the corrected command starts afresh: a reproduction whose
// --data does not load once left a campaign.yaml behind that refused the
// corrected retry ("holds another campaign"); evaluate on a dataset that
// is not there did the same.
func TestARefusedCommandLeavesTheFolderAsItFoundIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bad := filepath.Join(dir, "badcifar")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, "data_batch_1.bin"), []byte("junk"), 0o644)
	out := filepath.Join(dir, "report")
	if err := runReproduce(ctx, []string{"dpi", "--size", "smoke", "--data", "cifar10=" + bad, "--out", out, "--figures", "", "--quiet"}); err == nil {
		t.Fatal("a --data that does not load was accepted")
	}
	if _, err := os.Lstat(out); err == nil {
		entries, _ := os.ReadDir(out)
		t.Fatalf("the refused reproduction left %s with %d entries", out, len(entries))
	}

	// A folder that was there before keeps what it held, and only that.
	run := filepath.Join(dir, "run")
	os.MkdirAll(run, 0o755)
	err := runEvaluate(ctx, []string{"--model", filepath.Join("..", "..", "resources", "goar-cnn-fashion-mnist.flm"), "--dataset", filepath.Join(dir, "nowhere.npz"), "--out", run})
	if err == nil {
		t.Fatal("a missing dataset was accepted")
	}
	if entries, _ := os.ReadDir(run); len(entries) != 0 {
		t.Errorf("the refused evaluate left %v in the folder it found empty", entries)
	}
}

// export refuses a REPORT.md that is a link before it writes anything:
// the CSV beside it once was written first.
func TestExportRefusesALinkedReportBeforeWritingTheCSV(t *testing.T) {
	dir := t.TempDir()
	spec := writeSpec(t, dir)
	if err := runCampaign(context.Background(), []string{spec, "--quiet"}); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	csv := filepath.Join(run, "results.csv")
	before, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(csv, []byte("mine\n"), 0o644)
	victim := filepath.Join(t.TempDir(), "notes.md")
	os.WriteFile(victim, []byte("my notes\n"), 0o644)
	os.Remove(filepath.Join(run, "REPORT.md"))
	if err := os.Symlink(victim, filepath.Join(run, "REPORT.md")); err != nil {
		t.Fatal(err)
	}
	err = runExportResults(context.Background(), []string{run})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("export through a linked REPORT.md: %v", err)
	}
	if b, _ := os.ReadFile(csv); string(b) != "mine\n" {
		t.Errorf("results.csv was rewritten (%d bytes; the run's own: %d) before the refusal", len(b), len(before))
	}
	if b, _ := os.ReadFile(victim); string(b) != "my notes\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}
