package campaign

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
	"faithlab/core/train"
)

// trustSpec is a small campaign whose engine and folders the tests set.
const trustSpec = `name: trust
output: OUTPUT
ENGINE
datasets: [{id: gmm, train_samples: 200, test_samples: 40}]
model: {arch: mlp, epochs: 1}
methods: [gradient]
protocols: [{name: deletion, params: {samples: 10}}]
`

// writeTrustSpec writes the spec into dir and loads it.
func writeTrustSpec(t *testing.T, dir, output, engine string) *Campaign {
	t.Helper()
	text := strings.Replace(strings.Replace(trustSpec, "OUTPUT", output, 1), "ENGINE", engine, 1)
	p := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// marker writes a program that leaves a file behind when it runs, and
// returns both paths.
func marker(t *testing.T) (program, ran string) {
	dir := t.TempDir()
	program, ran = filepath.Join(dir, "program"), filepath.Join(dir, "it-ran")
	if err := os.WriteFile(program, []byte("#!/bin/sh\ntouch "+ran+"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return program, ran
}

// A spec that names an interpreter or a host runs nothing and writes
// nothing until the user allows it: a spec once made faithlab-cli run
// execute the program it named, with no question.
func TestASpecNamingAProgramOrHostRunsNothingUntilAllowed(t *testing.T) {
	program, ran := marker(t)
	// A stand-in ssh that marks that it ran, first on the PATH.
	bin := t.TempDir()
	sshRan := filepath.Join(bin, "ssh-ran")
	os.WriteFile(filepath.Join(bin, "ssh"), []byte("#!/bin/sh\ntouch "+sshRan+"\nexit 255\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, tc := range []struct {
		engine, want, marker string
	}{
		{"torch?python=" + program, "runs the program " + program, ran},
		{"torch@ssh://alice@gpu1.example:2222", "connects to the host alice@gpu1.example:2222", sshRan},
		{"torch@ssh://gpu1?python=" + program, "runs the program " + program + " and connects to the host gpu1", sshRan},
	} {
		dir := t.TempDir()
		c := writeTrustSpec(t, dir, "run", "engine: \""+tc.engine+"\"")
		_, err := c.Run(context.Background(), Options{Kernel: best()})
		var consent *ConsentError
		if !errors.As(err, &consent) || len(consent.Asks) != 1 || consent.Asks[0].Field != "engine" || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--allow-engine") {
			t.Errorf("%s: %v", tc.engine, err)
		}
		if _, err := os.Stat(tc.marker); err == nil {
			t.Errorf("%s: the program ran", tc.engine)
		}
		if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
			t.Errorf("%s: the run folder was written", tc.engine)
		}
	}
	// Allowed by the user (the CLI's --allow-engine, Settings, the
	// configuration file), the same spec runs its program.
	c := writeTrustSpec(t, t.TempDir(), "run", "engine: \"torch?python="+program+"\"")
	if _, err := c.Run(context.Background(), Options{Kernel: best(), Trust: Trust{Engines: []string{"torch?python=" + program}}}); err == nil {
		t.Error("a program that is no Python ran as a worker")
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("allowed, the program did not run: %v", err)
	}
}

// Harmless engine settings need no consent: native, and torch with only
// device= and threads= (Faithlab's own worker under this machine's
// python3). A setting the user gives replaces the spec's and is theirs.
func TestHarmlessEnginesNeedNoConsent(t *testing.T) {
	for _, engine := range []string{"", "engine: native", "engine: torch", `engine: "torch?device=cpu&threads=2"`} {
		c := writeTrustSpec(t, t.TempDir(), "run", engine)
		if err := c.Check(Trust{}, ""); err != nil {
			t.Errorf("%q: %v", engine, err)
		}
	}
	c := writeTrustSpec(t, t.TempDir(), "run", `engine: "torch@ssh://gpu1"`)
	if err := c.Check(Trust{}, "torch@ssh://gpu2"); err != nil {
		t.Errorf("the user's own engine: %v", err)
	}
	if err := c.Check(Trust{Engines: []string{"torch@ssh://gpu1?device=auto"}}, ""); err != nil {
		t.Errorf("the same engine written otherwise: %v", err)
	}
}

// A spec's output and cache lie inside its own folder or a folder the
// user chose: an absolute path elsewhere, a way out with .., or a link out
// of the spec's folder is refused with nothing written, unless the user
// chooses the folder (--out, --cache, Trust.Folders).
func TestASpecWritesOnlyInsideItsFolderOrOneTheUserChose(t *testing.T) {
	elsewhere := t.TempDir()
	for _, tc := range []struct {
		name, output, cache string
		field               string
	}{
		{"absolute output", filepath.Join(elsewhere, "run"), "", "output"},
		{"output out by ..", "../run", "", "output"},
		{"output through a link out", "out/run", "", "output"},
		{"output through a dangling link out", "gone/run", "", "output"},
		{"cache out by ..", "run", "../cache", "cache"},
	} {
		dir := t.TempDir()
		if err := os.Symlink(elsewhere, filepath.Join(dir, "out")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(elsewhere, "missing"), filepath.Join(dir, "gone")); err != nil {
			t.Fatal(err)
		}
		c := writeTrustSpec(t, dir, tc.output, map[bool]string{true: "cache: " + tc.cache}[tc.cache != ""])
		_, err := c.Run(context.Background(), Options{Kernel: best()})
		var consent *ConsentError
		if !errors.As(err, &consent) || len(consent.Asks) != 1 || consent.Asks[0].Field != tc.field {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
			t.Errorf("%s: written outside: %v", tc.name, entries)
		}
		if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) > 1 {
			// dir's parent holds dir alone (and a run folder beside it
			// would be a write outside the spec's folder).
			for _, e := range entries {
				if e.Name() == "run" || e.Name() == "cache" {
					t.Errorf("%s: %s written beside the spec's folder", tc.name, e.Name())
				}
			}
		}
		// Chosen by the user, the same folders are allowed.
		if err := c.Check(Trust{Folders: []string{elsewhere, filepath.Dir(dir)}}, ""); err != nil {
			t.Errorf("%s, chosen: %v", tc.name, err)
		}
	}
	// --out puts the run where the user says.
	c := writeTrustSpec(t, t.TempDir(), "/etc/faithlab-run", "")
	trust, err := c.Relocate(Trust{}, filepath.Join(elsewhere, "mine"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(trust, ""); err != nil || c.Spec.Output != filepath.Join(elsewhere, "mine") {
		t.Errorf("relocated to %s: %v", c.Spec.Output, err)
	}
}

// The user's configuration file lists the engines and folders campaign
// files may name; a mistake in it is an error naming the file.
func TestUserTrustReadsTheConfigurationFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	if tr, err := UserTrust(); err != nil || len(tr.Engines)+len(tr.Folders) != 0 {
		t.Fatalf("no file: %+v %v", tr, err)
	}
	p := filepath.Join(home, "faithlab", "config.yaml")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("engines:\n  - torch@ssh://gpu1\nfolders:\n  - /data/runs\n"), 0o644)
	tr, err := UserTrust()
	if err != nil || len(tr.Engines) != 1 || tr.Folders[0] != "/data/runs" {
		t.Fatalf("%+v %v", tr, err)
	}
	for _, bad := range []string{"engines: [warp-drive]\n", "folders: [relative/path]\n", "engine: [torch]\n"} {
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := UserTrust(); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A run put elsewhere with --out reads back whole: the spec's relative
// paths (here its model file) resolve where it was run from, as in the
// run, so that status and export find every task done.
func TestARelocatedRunReadsBackWhole(t *testing.T) {
	dir := t.TempDir()
	const ref = "gmm:dim=8,samples=400"
	trainSet, _, err := data.Open(ref, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Fit{Arch: "mlp", Config: train.Config{Epochs: 1, Seed: 1}, Train: trainSet, Source: &model.Source{Ref: ref}, Kernel: gemm.Gonum{}}.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(filepath.Join(dir, "m.flm")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("output: run\ndatasets: ['"+ref+"']\nmodel: {file: m.flm}\nmethods: [gradient, random]\nprotocols: [{name: deletion, params: {samples: 20}}]\n"), 0o644)
	c, err := Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "elsewhere")
	trust, err := c.Relocate(Trust{}, out, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), Options{Kernel: best(), Trust: trust}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if st := r.Status(); len(st.Done) != 2 || len(st.Missing) != 0 {
		t.Errorf("%d done, %d missing", len(st.Done), len(st.Missing))
	}
}

// A spec someone sent reads datasets only inside its own folder, as it
// reads maps files: one that names a folder elsewhere (a colleague's
// photos, say) is refused, naming the folder, until the user allows it;
// the built-in ids need nothing.
func TestASpecReadsADatasetOutsideItsFolderOnlyWhenAllowed(t *testing.T) {
	elsewhere, dir := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "campaign.yaml")
	text := strings.Replace(trustSpec, "{id: gmm, train_samples: 200, test_samples: 40}", "{id: "+elsewhere+"}", 1)
	text = strings.Replace(strings.Replace(text, "OUTPUT", "run", 1), "ENGINE", "", 1)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Run(context.Background(), Options{Kernel: best()})
	var consent *ConsentError
	if !errors.As(err, &consent) || len(consent.Asks) != 1 || consent.Asks[0].Field != "dataset" || consent.Asks[0].What != elsewhere {
		t.Fatalf("a dataset outside the spec's folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
		t.Error("the refused run made its folder")
	}
	if err := c.Check(consent.Allow(Trust{}), ""); err != nil {
		t.Errorf("allowed: %v", err)
	}
	if err := writeTrustSpec(t, t.TempDir(), "run", "").Check(Trust{}, ""); err != nil {
		t.Errorf("a built-in dataset: %v", err)
	}
}
