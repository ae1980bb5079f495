package campaign

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"faithlab/core/job"
)

// torchSpec evaluates the TorchScript fixture (testdata/torch, a small
// Fashion-MNIST CNN of a researcher's own) on the torch engine, with a
// protocol that retrains (ROAR: a copy of the module with its parameters
// reset) and one that does not.
const torchSpec = `name: torchscript
output: run
engine: torch?python=/usr/bin/python3
datasets: [{id: fashion-mnist, train_samples: 256, test_samples: 64}]
model: {file: MODEL}
methods: [gradient, gradcam]
protocols:
  - {name: deletion, params: {samples: 32, grid: 4}}
  - {name: roar, params: {rates: [0.5]}}
retrain: {epochs: 1}
`

func loadTorch(t *testing.T, dir string) *Campaign {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import torch (%v): apt-get install python3-torch", err)
	}
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist"); err != nil {
		t.Skip("Fashion-MNIST is not installed (dataset-fashion-mnist)")
	}
	fixture, err := filepath.Abs(filepath.Join("..", "..", "testdata", "torch", "scripted-cnn.pt"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(p, []byte(strings.Replace(torchSpec, "MODEL", fixture, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A TorchScript classifier is evaluated by a campaign on the torch
// engine, retraining included, and the manifest records the engine, the
// torch version and the device. Then the worker is killed in the middle
// of a ROAR task (as it starts the training set's maps): that task fails
// with an error saying the worker died, the others run on a new worker,
// and the resumed run ends with the same CSV, byte for byte, as the run
// never interrupted.
func TestCampaignOnTheTorchEngineEvaluatesATorchScriptModelAndSurvivesItsWorker(t *testing.T) {
	c := loadTorch(t, t.TempDir())
	out, err := c.Run(context.Background(), Options{Kernel: best(), Trust: Trust{Engines: []string{c.Spec.Engine}}.WithScripts(c.Spec.Model.File)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	st := r.Status()
	for _, rec := range st.Failed {
		t.Errorf("%s failed: %s", rec.Label, rec.Error)
	}
	if len(st.Done) != 4 {
		t.Errorf("%d tasks done, want 4", len(st.Done))
	}
	m := r.Manifest
	if m.Engine != "torch?python=/usr/bin/python3" || m.Torch == "" || !strings.HasPrefix(m.Device, "cpu") {
		t.Errorf("manifest records engine %q, torch %q, device %q", m.Engine, m.Torch, m.Device)
	}
	want := readCSV(t, out.Dir)
	if !bytes.Contains(want, []byte("scripted-cnn.pt,gradcam,,ROAR")) {
		t.Errorf("results lack ROAR for gradcam:\n%s", want)
	}
	if testing.Short() {
		return
	}

	c = loadTorch(t, t.TempDir())
	events := make(chan job.Event)
	killed := make(chan string, 1)
	go func() {
		for e := range events {
			if e.Kind == job.Progress && strings.Contains(e.Stage, "train samples") && len(killed) == 0 {
				if pid := workerChild(t); pid > 0 {
					syscall.Kill(pid, syscall.SIGKILL)
					killed <- e.Task
				}
			}
		}
	}()
	out, err = c.Run(context.Background(), Options{Kernel: best(), Events: events, Trust: Trust{Engines: []string{c.Spec.Engine}}.WithScripts(c.Spec.Model.File)})
	if err != nil {
		t.Fatal(err)
	}
	if len(killed) == 0 {
		t.Fatal("no worker to kill while a task ran")
	}
	task := <-killed
	if r, err = Open(out.Dir); err != nil {
		t.Fatal(err)
	}
	st = r.Status()
	if len(st.Failed) != 1 || st.Failed[0].Label != task || !strings.Contains(st.Failed[0].Error, "died during") {
		t.Fatalf("after the kill during %q: failed %+v", task, st.Failed)
	}
	t.Logf("%s: %s", task, st.Failed[0].Error)
	if got := readCSV(t, run(t, c, job.Shard{}).Dir); !bytes.Equal(got, want) {
		t.Errorf("resumed CSV differs from an uninterrupted run's:\n%s\nwant\n%s", got, want)
	}
}

// workerChild is the pid of this process's torch worker (0: none).
func workerChild(t *testing.T) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		stat, err := os.ReadFile(filepath.Join(p, "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so split after ')'.
		i := bytes.LastIndexByte(stat, ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		if cmd, _ := os.ReadFile(filepath.Join(p, "cmdline")); bytes.Contains(cmd, []byte("faithlab_worker.py")) {
			pid, _ := strconv.Atoi(filepath.Base(p))
			return pid
		}
	}
	return 0
}
