package campaign

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSlurmScript(t *testing.T) {
	dir := t.TempDir()
	c := load(t, dir)
	b, err := c.Slurm(ClusterOptions{Shards: 4, CPUs: 8, MemGB: 16, Time: "1:00:00", CLI: "faithlab-cli", Spec: "/x/campaign.yaml", Script: "c.sbatch"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#!/bin/bash", "#SBATCH --array=0-3", "#SBATCH --cpus-per-task=8", "#SBATCH --mem=16G", "#SBATCH --time=1:00:00",
		"exec faithlab-cli run /x/campaign.yaml --shard /4 --quiet", "--dependency=afterok:", "--kill-on-invalid-dep=yes",
		"exec faithlab-cli merge --out " + filepath.Join(dir, "run", "merged"), filepath.Join(dir, "run", "shards", "3-of-4"),
		"#   bash c.sbatch I[,J…]"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("script lacks %q:\n%s", want, b)
		}
	}
	if out, err := exec.Command("bash", "-n", "-c", string(b)).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s", err, out)
	}
	if _, err := c.Slurm(ClusterOptions{Time: "1:00:00"}); err == nil {
		t.Error("0 shards accepted")
	}
	if _, err := c.Slurm(ClusterOptions{Shards: 2, Time: "1:00\n#SBATCH --x"}); err == nil {
		t.Error("a time limit with a line break accepted")
	}
}

// stub writes an executable that logs its arguments, one per line, then
// a blank line, to dir/NAME.log, and prints out.
func stub(t *testing.T, dir, name, out string) {
	t.Helper()
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '" + filepath.Join(dir, name+".log") + "'\necho >> '" +
		filepath.Join(dir, name+".log") + "'\nprintf '" + out + "'\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A spec someone sent names the campaign and its run folder: in the
// script they are data. A name with a directive and command substitutions
// (a line break is refused when the spec is read),
// and a folder with quotes and a semicolon, reach sbatch and faithlab-cli
// as the words they are, and run nothing.
func TestSlurmScriptRunsNothingASpecSays(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out := "o'; touch PWNED; 'x y"
	spec := strings.Replace(campaignSpec, "name: kill-test\noutput: run",
		`name: "a #SBATCH --wrap=x; touch PWNED1 $(touch PWNED2) `+"`touch PWNED3`"+`"`+"\noutput: \""+out+"\"", 1)
	c := loadSpec(t, dir, spec)
	stub(t, bin, "faithlab-cli", "")
	stub(t, bin, "sbatch", "42;cluster\\n")
	stub(t, bin, "squeue", "")
	stub(t, bin, "scancel", "")
	script := filepath.Join(dir, "c.sbatch")
	b, err := c.Slurm(ClusterOptions{Shards: 2, CPUs: 1, MemGB: 1, Time: "1:00:00", CLI: filepath.Join(bin, "faithlab-cli"), Spec: filepath.Join(dir, "campaign.yaml"), Script: script})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, b, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	for _, args := range [][]string{{script}, {script, "1"}, {script, "--merge"}} {
		cmd := exec.Command("bash", args...)
		cmd.Dir, cmd.Env = dir, env
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("bash %s: %v\n%s\n%s", strings.Join(args[1:], " "), err, msg, b)
		}
	}
	if pwned, _ := filepath.Glob(filepath.Join(dir, "PWNED*")); len(pwned) > 0 {
		t.Errorf("the spec ran a command: %v\n%s", pwned, b)
	}
	run := filepath.Join(dir, out)
	logged := func(name string) string { s, _ := os.ReadFile(filepath.Join(bin, name+".log")); return string(s) }
	if want := "merge\n--out\n" + filepath.Join(run, "merged") + "\n" + filepath.Join(run, "shards", "0-of-2") + "\n" + filepath.Join(run, "shards", "1-of-2") + "\n\n"; logged("faithlab-cli") != want {
		t.Errorf("--merge ran faithlab-cli with\n%q, want\n%q", logged("faithlab-cli"), want)
	}
	for _, want := range []string{"--job-name=faithlab-a-SBATCH---wrap-x-touch-PWNED1-touch-PWNED2-touch-PWNED3-merge", "--dependency=afterok:42", "--array=1", "--output=" + filepath.Join(run, "shards", "slurm-merge-%j.out")} {
		if !strings.Contains(logged("sbatch"), want+"\n") {
			t.Errorf("sbatch was not given %q:\n%s", want, logged("sbatch"))
		}
	}
	if _, err := os.Stat(filepath.Join(run, "shards")); err != nil {
		t.Errorf("the script did not make the logs' folder: %v", err)
	}
}

func TestK8sManifestRefusesWhatThePodsCannotReach(t *testing.T) {
	dir := t.TempDir()
	c := load(t, dir)
	o := ClusterOptions{Shards: 3, CPUs: 2, MemGB: 4, CLI: "faithlab-cli", Spec: filepath.Join(dir, "campaign.yaml"), Image: "faithlab:1", Claim: "campaigns"}
	if _, err := c.K8s(o); err != nil {
		t.Fatal(err)
	}
	other := o
	other.Spec = filepath.Join(dir, "sub", "campaign.yaml") // the run folder is then outside the mounted folder
	if _, err := c.K8s(other); err == nil || !strings.Contains(err.Error(), "outside the spec's folder") {
		t.Errorf("a run folder outside the mounted folder: %v", err)
	}
	for _, bad := range []ClusterOptions{{Shards: 0, Image: "i", Claim: "c"}, {Shards: 1, Claim: "c"}, {Shards: 1, Image: "i"}} {
		bad.Spec, bad.CLI = o.Spec, o.CLI
		if _, err := c.K8s(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
