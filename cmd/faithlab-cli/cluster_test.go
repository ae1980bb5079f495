//go:build cluster

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"faithlab/internal/localcluster"
)

// cliBinary is faithlab-cli as the cluster runs it: $FAITHLAB_CLI (make
// test-cluster passes bin/faithlab-cli), or built here.
func cliBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FAITHLAB_CLI"); p != "" {
		return p
	}
	p := filepath.Join(t.TempDir(), "faithlab-cli")
	if out, err := exec.Command("go", "build", "-o", p, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return p
}

func countLines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// The script `faithlab-cli slurm` writes, submitted to a real one-node
// Slurm cluster: four shards as an array job and the merge as a job that
// waits for them (afterok). Shard 2 is killed (kill -9, as a node's OOM
// killer would) after its first task: the array ends with that task
// FAILED, Slurm cancels the merge, whose dependency can no longer be met,
// and `bash SCRIPT 2` — the README's one command — submits the shard
// again, which resumes with its finished task kept, and the merge after
// it. The merged results.csv equals a single process's run of the same
// spec, byte for byte.
func TestRealSlurmArrayShardKilledResubmittedAndMergedEqualsOneProcess(t *testing.T) {
	slurm := localcluster.StartSlurm(t)
	cli := cliBinary(t)
	// The campaign's folder has a space, a '#' and a quote in its name:
	// the script must carry them to sbatch, bash and faithlab-cli intact.
	dir, refDir := filepath.Join(t.TempDir(), "campaign #1 it's"), filepath.Join(t.TempDir(), "campaign #1 it's")
	for _, d := range []string{dir, refDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec := filepath.Join(dir, "campaign.yaml")
	for _, d := range []string{dir, refDir} {
		if err := os.WriteFile(filepath.Join(d, "campaign.yaml"), []byte(clusterSpec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "campaign.sbatch")
	if out, err := exec.Command(cli, "slurm", spec, "--shards", "4", "--cpus", "1", "--mem", "1", "--time", "0:20:00", "--out", script).CombinedOutput(); err != nil {
		t.Fatalf("faithlab-cli slurm: %v\n%s", err, out)
	}
	submitted := regexp.MustCompile(`submitted shards \S+ as job (\d+), and their merge as job (\d+)`)
	submit := func(args ...string) (shards, merge string) {
		t.Helper()
		t0 := time.Now()
		out := slurm.Run(t, "bash", append([]string{script}, args...)...)
		m := submitted.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("bash %s %s said %q", script, strings.Join(args, " "), out)
		}
		t.Logf("bash campaign.sbatch %s (%.1f s): %s", strings.Join(args, " "), time.Since(t0).Seconds(), strings.TrimSpace(out))
		return m[1], m[2]
	}
	state := func(id string) string { return slurm.JobStates(t, id)[id] }
	ended := func(s string) bool {
		return s != "" && s != "PENDING" && s != "RUNNING" && s != "CONFIGURING" && s != "COMPLETING"
	}
	logs := func() string {
		var b strings.Builder
		files, _ := filepath.Glob(filepath.Join(dir, "run", "shards", "slurm-*.out"))
		for _, f := range files {
			text, _ := os.ReadFile(f)
			b.WriteString("== " + filepath.Base(f) + "\n" + string(text))
		}
		return b.String()
	}

	t.Cleanup(func() {
		if t.Failed() {
			out, _ := slurm.Command("scontrol", "--oneliner", "show", "job").CombinedOutput()
			t.Logf("the cluster's jobs:\n%s\nthe shards' logs:\n%s", out, logs())
		}
	})
	t0 := time.Now()
	shards, merge := submit()
	shard2 := filepath.Join(dir, "run", "shards", "2-of-4")
	records := filepath.Join(shard2, "results.jsonl")
	localcluster.WaitFor(t, "shard 2's first task", 5*time.Minute, func() bool {
		if s := slurm.JobStates(t, shards)[shards+"_2"]; ended(s) {
			t.Fatalf("shard 2 ended %s before its first task did", s)
		}
		return countLines(records) >= 1
	})
	holder, err := os.ReadFile(filepath.Join(shard2, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(holder)) // "process PID on HOST"
	pid := 0
	if len(f) >= 2 {
		pid, _ = strconv.Atoi(f[1])
	}
	if pid <= 0 || countLines(records) != 1 {
		t.Fatalf("shard 2 holds %d records and its lock %q: it was to be killed while running its second task", countLines(records), holder)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing shard 2 (pid %d): %v", pid, err)
	}
	t.Logf("killed shard 2 (pid %d) %.1f s after submitting, with 1 of its 2 tasks done", pid, time.Since(t0).Seconds())

	localcluster.WaitFor(t, "the array job to end", 5*time.Minute, func() bool {
		for i := range 4 {
			if !ended(slurm.JobStates(t, shards)[shards+"_"+strconv.Itoa(i)]) {
				return false
			}
		}
		return true
	})
	st := slurm.JobStates(t, shards)
	for i := range 4 {
		want := "COMPLETED"
		if i == 2 {
			want = "FAILED"
		}
		if got := st[shards+"_"+strconv.Itoa(i)]; got != want {
			t.Errorf("shard %d ended %s, want %s\n%s", i, got, want, logs())
		}
	}
	localcluster.WaitFor(t, "Slurm to cancel the merge whose shard failed", time.Minute, func() bool { return ended(state(merge)) })
	if s := state(merge); s != "CANCELLED" {
		t.Fatalf("the merge after a failed shard ended %s, want CANCELLED\n%s", s, logs())
	}
	if _, err := os.Stat(filepath.Join(dir, "run", "merged")); err == nil {
		t.Fatal("the merge ran although shard 2 failed")
	}

	shards, merge = submit("2")
	localcluster.WaitFor(t, "the resubmitted shard and the merge to end", 5*time.Minute, func() bool { return ended(state(merge)) })
	if s, m := state(shards+"_2"), state(merge); s != "COMPLETED" || m != "COMPLETED" {
		t.Fatalf("resubmitted shard 2 ended %s, its merge %s\n%s", s, m, logs())
	}
	t.Logf("merged %.1f s after the first submission", time.Since(t0).Seconds())
	if n := countLines(records); n != 2 {
		t.Errorf("shard 2 holds %d records after resuming, want 2 (its finished task kept, the killed one run)", n)
	}

	t1 := time.Now()
	if out, err := exec.Command(cli, "run", filepath.Join(refDir, "campaign.yaml"), "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("the single-process run: %v\n%s", err, out)
	}
	t.Logf("the single-process run: %.1f s", time.Since(t1).Seconds())
	got, err := os.ReadFile(filepath.Join(dir, "run", "merged", "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(refDir, "run", "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || bytes.Count(want, []byte("\n")) < 9 {
		t.Errorf("merged results.csv (%d bytes) differs from the single-process run's (%d bytes):\n%s\nwant\n%s", len(got), len(want), got, want)
	}
}
