package campaign

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"faithlab/core/job"
)

// A TorchScript model a spec names is asked for like a program: the ask
// names the file in full; the consent (the workbench's dialog, Allow),
// the command line RunArgs writes and the configuration file each allow
// it; nothing else does.
func TestATorchScriptModelIsAskedForLikeAProgram(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	fixture, err := filepath.Abs(filepath.Join("..", "..", "testdata", "torch", "scripted-cnn.pt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "sent.yaml")
	os.WriteFile(p, []byte("output: run\nengine: torch\ndatasets: [fashion-mnist]\nmodel: {file: "+fixture+"}\nmethods: [gradient]\nprotocols: [deletion]\n"), 0o644)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var consent *ConsentError
	if err := c.Check(Trust{Engines: []string{"torch"}, Folders: []string{"/"}}, ""); !errors.As(err, &consent) || len(consent.Asks) != 1 ||
		consent.Asks[0].Field != "model" || consent.Asks[0].What != fixture || !strings.Contains(err.Error(), "runs code from the file") {
		t.Fatalf("Check: %v", err)
	}
	if err := c.Check(consent.Allow(Trust{}), ""); err != nil {
		t.Errorf("after the dialog's consent: %v", err)
	}
	if args, err := c.RunArgs(); err != nil || !slices.Contains(args, "--allow-torchscript") {
		t.Errorf("RunArgs: %v %v", args, err)
	}
	cfg := filepath.Join(home, "faithlab", "config.yaml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte("torchscript:\n  - "+filepath.Dir(fixture)+"\n"), 0o644)
	tr, err := UserTrust()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(tr, ""); err != nil {
		t.Errorf("a folder listed under torchscript: %v", err)
	}
	os.WriteFile(cfg, []byte("torchscript: [models/x.pt]\n"), 0o644)
	if _, err := UserTrust(); err == nil || !strings.Contains(err.Error(), "torchscript") {
		t.Errorf("a relative path under torchscript: %v", err)
	}
}

// A maps file outside the spec's folder is asked for, with the folder
// that allows it on the command line (--allow-folder, RunArgs).
func TestAMapsFileOutsideTheSpecsFolderIsAskedFor(t *testing.T) {
	elsewhere, dir := t.TempDir(), t.TempDir()
	maps := filepath.Join(elsewhere, "maps.npy")
	os.WriteFile(maps, nil, 0o644)
	p := filepath.Join(dir, "sent.yaml")
	os.WriteFile(p, []byte("output: run\ndatasets: [gmm]\nmodel: {arch: logreg}\nmethods: [{name: file, params: {test: "+maps+"}}]\nprotocols: [deletion]\n"), 0o644)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var consent *ConsentError
	if err := c.Check(Trust{}, ""); !errors.As(err, &consent) || len(consent.Asks) != 1 || consent.Asks[0].Field != "maps" || consent.Asks[0].What != maps {
		t.Fatalf("Check: %v", err)
	}
	if args, _ := c.RunArgs(); !strings.Contains(strings.Join(args, " "), "--allow-folder "+elsewhere) {
		t.Errorf("RunArgs: %v", args)
	}
	if err := c.Check(Trust{Folders: []string{elsewhere}}, ""); err != nil {
		t.Errorf("with the folder allowed: %v", err)
	}
}

// A resumed run writes records read without a checksum again with one,
// but keeps them marked unchecked: it once signed them as checked. The
// user's --accept-unchecked (AcceptUnchecked) drops the marks.
func TestAResumedRunKeepsUncheckedRecordsMarkedUntilAccepted(t *testing.T) {
	c := loadSpec(t, t.TempDir(), smallSpec)
	dir := run(t, c, job.Shard{}).Dir
	p := filepath.Join(dir, "results.jsonl")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, regexp.MustCompile(`,"sum":"[0-9a-f]{64}"`).ReplaceAll(b, nil), 0o644)
	run(t, c, job.Shard{})
	b, _ = os.ReadFile(p)
	if n := strings.Count(string(b), `"unchecked":"`+p+" line "); n != 6 {
		t.Errorf("%d of 6 records marked unchecked after the resume:\n%s", n, b)
	}
	if r := mustOpen(t, dir); len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "6 record(s) read without a checksum") {
		t.Errorf("notes: %q", r.Notes)
	}
	if _, err := c.Run(context.Background(), Options{Kernel: best(), Trust: Trust{}, AcceptUnchecked: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); strings.Contains(string(b), `"unchecked"`) {
		t.Error("the marks stayed after --accept-unchecked")
	}
	if r := mustOpen(t, dir); len(r.Notes) != 0 || len(r.Status().Done) != 6 {
		t.Errorf("after --accept-unchecked: notes %q, %d done", r.Notes, len(r.Status().Done))
	}
}

// A shard's folder is made inside its campaign's, through no link: a
// campaign folder someone sent with shards/0-of-3 leading elsewhere once
// had the shard's run written there.
func TestAShardNeverRunsThroughALink(t *testing.T) {
	dir := t.TempDir()
	c := loadSpec(t, dir, smallSpec)
	elsewhere := t.TempDir()
	os.MkdirAll(filepath.Join(c.Spec.Output, "shards"), 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(c.Spec.Output, "shards", "0-of-3")); err != nil {
		t.Fatal(err)
	}
	_, err := c.Run(context.Background(), Options{Shard: job.Shard{I: 0, Of: 3}, Kernel: best()})
	if err == nil || !strings.Contains(err.Error(), "0-of-3 is a symbolic link") {
		t.Errorf("run: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the shard's run was written where the link leads: %d entries", len(entries))
	}
}
