package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/reproduce"
	"faithlab/resources"
)

// Files from others, as a user meets them: a folder of the user's given
// to reproduce, links where a run writes, a model changed under the
// shipped one's name, records edited or damaged, a TorchScript model or a
// maps file a spec names. Each test is the case as it was reproduced
// against the CLI, and fails on the code from before its fix.

// stderrOf runs f with the process's standard error captured.
func stderrOf(t *testing.T, f func() error) (string, error) { return captured(t, &os.Stderr, f) }

// captured runs f with the process's standard output or error (*stream)
// captured.
func captured(t *testing.T, stream **os.File, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := *stream
	*stream = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	ferr := f()
	*stream = old
	w.Close()
	return string(<-done), ferr
}

// tree lists a folder's files and their bytes, for "left as it was".
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			c, _ := os.ReadFile(p)
			b.WriteString(p + " " + string(c) + "\n")
		}
		return nil
	})
	return b.String()
}

// reproduce writes only into a new or empty folder, or its own: a folder
// of the user's holding a REPORT.md and a results.csv was once written
// over with exit 0. A link where it writes (OUT/figures) is refused
// before anything runs: 79 figures once landed where it led.
func TestReproduceKeepsToItsOwnFolder(t *testing.T) {
	ctx := context.Background()
	mine := t.TempDir()
	os.WriteFile(filepath.Join(mine, "REPORT.md"), []byte("mine\n"), 0o644)
	os.WriteFile(filepath.Join(mine, "results.csv"), []byte("a,b\n"), 0o644)
	before := tree(t, mine)
	err := runReproduce(ctx, []string{"goar-synthetic", "--size", "smoke", "--out", mine, "--quiet"})
	if err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("a folder of the user's: %v", err)
	}
	if after := tree(t, mine); after != before {
		t.Errorf("the user's folder changed:\n%s", after)
	}

	r, err := reproduce.Get("goar-synthetic")
	if err != nil {
		t.Fatal(err)
	}
	out, elsewhere := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(out, "campaign.yaml"), []byte(r.Sizes["smoke"].Spec), 0o644) // the reproduction's own folder
	os.WriteFile(filepath.Join(elsewhere, "precious.png"), []byte("mine"), 0o644)
	if err := os.Symlink(elsewhere, filepath.Join(out, "figures")); err != nil {
		t.Fatal(err)
	}
	before = tree(t, elsewhere)
	err = runReproduce(ctx, []string{"goar-synthetic", "--size", "smoke", "--out", out, "--quiet"})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(out, "figures")+" is a symbolic link") {
		t.Errorf("a linked figures folder: %v", err)
	}
	if after := tree(t, elsewhere); after != before {
		t.Errorf("the folder the link leads to changed:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(out, "run")); err == nil {
		t.Error("the campaign ran before the link was refused")
	}
}

// reproduce runs the model Faithlab ships, or nothing: a valid,
// checksummed goar-cnn with one bias changed, put in the report folder
// under the shipped model's name, was once run and reported as "the
// shipped goar-cnn".
func TestReproduceRefusesAModelThatIsNotTheShippedOne(t *testing.T) {
	r, err := reproduce.Get("dpi")
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Decode(resources.Model(), gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	params := m.Net.Params()
	params[len(params)-1].Data[0] += 1 // the last bias
	changed, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "campaign.yaml"), []byte(r.Sizes["smoke"].Spec), 0o644)
	mp := filepath.Join(out, resources.ModelName)
	os.WriteFile(mp, changed, 0o644)
	err = runReproduce(context.Background(), []string{"dpi", "--size", "smoke", "--out", out, "--quiet", "--figures", ""})
	if err == nil || !strings.Contains(err.Error(), mp+" is not the model Faithlab ships") {
		t.Errorf("%v, want the changed model refused", err)
	}
	if _, err := os.Stat(filepath.Join(out, "REPORT.md")); err == nil {
		t.Error("a report was written")
	}
}

// tinySpec is a campaign of four quick tasks in two shards' worth.
const tinySpec = `name: tiny
output: OUT
datasets: ["gmm:dim=4,samples=200"]
model: {arch: logreg, epochs: 1}
methods: [gradient, random]
protocols:
  - {name: deletion, params: {samples: 10}}
  - {name: pixelflipping, params: {samples: 10}}
`

func writeTiny(t *testing.T, dir, name, output string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Replace(tinySpec, "OUT", output, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// evaluate --out writes its campaign.yaml only into a folder the run may
// use: into a folder of other files it once wrote the spec, then refused.
func TestEvaluateWritesNothingIntoAFolderItRefuses(t *testing.T) {
	ctx := context.Background()
	fixture := filepath.Join(t.TempDir(), "m.flm")
	if err := runTrain(ctx, []string{"--dataset", "gmm", "--model", "logreg", "--epochs", "1", "--out", fixture}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	before := tree(t, dir)
	err := runEvaluate(ctx, []string{"--model", fixture, "--methods", "gradient", "--protocols", "deletion", "--out", dir})
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("evaluate into a folder of other files: %v", err)
	}
	if after := tree(t, dir); after != before {
		t.Errorf("the folder changed:\n%s", after)
	}
}

// A spec named spec.yaml whose output is its own folder makes that
// folder look like its run: a file of the user's there named lock was
// once emptied.
func TestOutputDotLeavesAFileNamedLockAlone(t *testing.T) {
	dir := t.TempDir()
	spec := writeTiny(t, dir, "spec.yaml", ".")
	lock := filepath.Join(dir, "lock")
	os.WriteFile(lock, []byte("the safe's combination\n"), 0o644)
	err := runCampaign(context.Background(), []string{spec, "--quiet"})
	if err == nil || !strings.Contains(err.Error(), "not a Faithlab lock") {
		t.Errorf("run: %v", err)
	}
	if b, _ := os.ReadFile(lock); string(b) != "the safe's combination\n" {
		t.Errorf("the lock file now holds %q", b)
	}
}

// runTinyShards runs the tiny campaign as two shards and returns their
// folders.
func runTinyShards(t *testing.T) []string {
	t.Helper()
	spec := writeTiny(t, t.TempDir(), "campaign.yaml", "run")
	var dirs []string
	for _, sh := range []string{"0/2", "1/2"} {
		if err := runCampaign(context.Background(), []string{spec, "--shard", sh, "--quiet"}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, filepath.Join(filepath.Dir(spec), "run", "shards", strings.Replace(sh, "/", "-of-", 1)))
	}
	return dirs
}

var sumMember = regexp.MustCompile(`,"sum":"[0-9a-f]{64}"`)

// merge carries a record read without a checksum into its run marked as
// such, never re-signed: a shard's line with its checksum removed and a
// digit changed was once merged silently, written out with a fresh valid
// checksum, and exported without a word. A damaged record is called
// damaged, not "incomplete".
func TestMergeNeverLaundersAnUncheckedRecord(t *testing.T) {
	ctx := context.Background()
	shards := runTinyShards(t)
	// Shard 0: every checksum removed, one digit changed.
	p0 := filepath.Join(shards[0], "results.jsonl")
	b, _ := os.ReadFile(p0)
	b = sumMember.ReplaceAll(b, nil)
	b = bytes.Replace(b, []byte(`"seconds":0.`), []byte(`"seconds":9.`), 1)
	os.WriteFile(p0, b, 0o644)
	// Shard 1: one digit changed under its checksum.
	p1 := filepath.Join(shards[1], "results.jsonl")
	b, _ = os.ReadFile(p1)
	os.WriteFile(p1, bytes.Replace(b, []byte(`"seconds":0.`), []byte(`"seconds":9.`), 1), 0o644)

	merged := filepath.Join(t.TempDir(), "merged")
	said, err := stderrOf(t, func() error { return runMerge(ctx, []string{"--out", merged, shards[0], shards[1]}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(said, p0+": 2 record(s) read without a checksum") {
		t.Errorf("merge did not warn of the unchecked records:\n%s", said)
	}
	if !strings.Contains(said, "shard 1/2 damaged") || strings.Contains(said, "shard 1/2 incomplete") {
		t.Errorf("merge did not call the damaged shard damaged:\n%s", said)
	}
	out, _ := os.ReadFile(filepath.Join(merged, "results.jsonl"))
	if n := bytes.Count(out, []byte(`"unchecked":"`+p0+` line `)); n != 2 {
		t.Errorf("%d merged records keep their unchecked mark, want 2:\n%s", n, out)
	}
	for _, cmd := range []func() error{
		func() error { return runStatus(ctx, []string{merged}) },
		func() error {
			return runExportResults(ctx, []string{merged, "--csv", filepath.Join(t.TempDir(), "r.csv")})
		},
	} {
		said, err := stderrOf(t, cmd)
		if err != nil || !strings.Contains(said, "2 record(s) read without a checksum (the first: "+p0+" line 1)") {
			t.Errorf("status or export of the merge: %v\n%s", err, said)
		}
	}
}

// merge reads perturbed samples only from the runs' own caches and those
// the user names: a shard's manifest naming a folder of the user's as its
// cache once had merge rename files there, fail, and leave a half-written
// output that refused the next merge.
func TestMergeReadsNoCacheAManifestNamesElsewhere(t *testing.T) {
	ctx := context.Background()
	shards := runTinyShards(t)
	recs, _ := os.ReadFile(filepath.Join(shards[0], "results.jsonl"))
	key := regexp.MustCompile(`"key":"([0-9a-f]{64})"`).FindSubmatch(recs)
	if key == nil {
		t.Fatal("no perturbed sample in the shard's records")
	}
	users := t.TempDir()
	os.MkdirAll(filepath.Join(users, string(key[1][:2])), 0o755)
	os.WriteFile(filepath.Join(users, string(key[1][:2]), string(key[1])+".npy"), []byte("the user's file"), 0o644)
	before := tree(t, users)
	mp := filepath.Join(shards[0], "manifest.json")
	var man map[string]any
	b, _ := os.ReadFile(mp)
	json.Unmarshal(b, &man)
	man["cache"] = users
	b, _ = json.Marshal(man)
	os.WriteFile(mp, b, 0o644)

	merged := filepath.Join(t.TempDir(), "merged")
	said, err := stderrOf(t, func() error { return runMerge(ctx, []string{"--out", merged, shards[0], shards[1]}) })
	if err != nil {
		t.Fatalf("%v\n%s", err, said)
	}
	if !strings.Contains(said, "names the cache "+users+", outside the runs given: not read") {
		t.Errorf("merge did not say the manifest's cache was not read:\n%s", said)
	}
	if after := tree(t, users); after != before {
		t.Errorf("the user's folder changed:\n%s", after)
	}
	entries, _ := os.ReadDir(filepath.Dir(merged))
	if len(entries) != 1 {
		t.Errorf("the merge left %d entries beside its output", len(entries))
	}
	if _, err := os.Stat(filepath.Join(merged, "REPORT.md")); err != nil {
		t.Errorf("merged run: %v", err)
	}
}

// torchScriptFixture is the TorchScript classifier of testdata/torch.
func torchScriptFixture(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "torch", "scripted-cnn.pt"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func haveTorch(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import torch (%v)", err)
	}
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist"); err != nil {
		t.Skip("Fashion-MNIST is not installed")
	}
}

// A TorchScript model a spec names runs code from its file: like a
// program, it loads only once the user allows it (--allow-torchscript,
// the configuration file); it once loaded with PyTorch's warning only. A
// model the user names by hand (evaluate --model) needs no consent.
func TestATorchScriptModelFromASpecLoadsOnlyOnceAllowed(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ctx := context.Background()
	fixture := torchScriptFixture(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "sent.yaml")
	os.WriteFile(spec, []byte(`output: run
engine: torch
datasets: [{id: fashion-mnist, train_samples: 64, test_samples: 16}]
model: {file: `+fixture+`}
methods: [gradient]
protocols: [{name: deletion, params: {samples: 8, grid: 4}}]
`), 0o644)
	err := runCampaign(ctx, []string{spec, "--quiet"})
	if err == nil || !strings.Contains(err.Error(), "loads the TorchScript model "+fixture) || !strings.Contains(err.Error(), "--allow-torchscript") {
		t.Errorf("run: %v", err)
	}
	if ran(filepath.Join(dir, "run")) {
		t.Fatal("the run folder was written before the model was allowed")
	}
	haveTorch(t)
	if err := runCampaign(ctx, []string{spec, "--quiet", "--allow-torchscript"}); err != nil {
		t.Errorf("--allow-torchscript: %v", err)
	}
	out := filepath.Join(t.TempDir(), "eval")
	if err := runEvaluate(ctx, []string{"--model", fixture, "--dataset", "fashion-mnist", "--test-samples", "16", "--train-samples", "64",
		"--methods", "gradient", "--protocols", "deletion", "--set", "deletion.samples=8", "--engine", "torch", "--out", out}); err != nil {
		t.Errorf("evaluate --model: %v", err)
	}
}

// A `file` method reads maps from the spec's folder only, unless the user
// allows another: an absolute path, or a link out of the folder, once read
// any file the spec named; and a refusal once quoted the file's first
// bytes ("root:x") into results.jsonl.
func TestMapsFilesStayInTheSpecsFolder(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ctx := context.Background()
	elsewhere, dir := t.TempDir(), t.TempDir()
	if err := runTrain(ctx, []string{"--dataset", "gmm:dim=4,samples=200", "--model", "logreg", "--epochs", "1", "--out", filepath.Join(dir, "m.flm")}); err != nil {
		t.Fatal(err)
	}
	maps := filepath.Join(elsewhere, "test.npz")
	if err := runAttribute(ctx, []string{"--model", filepath.Join(dir, "m.flm"), "--dataset", "gmm:dim=4,samples=200", "--method", "gradient", "--n", "0", "--out", maps}); err != nil {
		t.Fatal(err)
	}
	os.Symlink(maps, filepath.Join(dir, "linked.npz"))
	spec := func(name, test string) string {
		p := filepath.Join(dir, name+".yaml")
		os.WriteFile(p, []byte(`output: `+name+`
datasets: ["gmm:dim=4,samples=200"]
model: {file: m.flm}
methods: [{name: file, params: {test: `+test+`}}]
protocols: [{name: deletion, params: {samples: 10}}]
`), 0o644)
		return p
	}
	for _, tc := range []struct{ name, test string }{{"absolute", maps}, {"link", "linked.npz"}} {
		err := runCampaign(ctx, []string{spec(tc.name, tc.test), "--quiet"})
		if err == nil || !strings.Contains(err.Error(), "reads the maps file") || !strings.Contains(err.Error(), "--allow-folder") {
			t.Errorf("%s: %v", tc.name, err)
		}
		if ran(filepath.Join(dir, tc.name)) {
			t.Errorf("%s: the run folder was written", tc.name)
		}
	}
	if err := runCampaign(ctx, []string{spec("allowed", maps), "--quiet", "--allow-folder", elsewhere}); err != nil {
		t.Errorf("--allow-folder: %v", err)
	}

	os.WriteFile(filepath.Join(dir, "passwd"), []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644)
	runCampaign(ctx, []string{spec("echo", "passwd"), "--quiet"})
	recs, err := os.ReadFile(filepath.Join(dir, "echo", "results.jsonl"))
	if err != nil || !bytes.Contains(recs, []byte("neither .npy nor .npz")) || bytes.Contains(recs, []byte("root:")) {
		t.Errorf("the failed task's record (%v):\n%s", err, recs)
	}
}
