package campaign

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/job"
	"faithlab/core/protocol"
)

// memorySpec is campaignSpec run one task at a time, with methods and
// rates to vary.
func memorySpec(methods, rates, extra string) string {
	return `name: memory-test
output: run
datasets: [{id: gmm, train_samples: 3000, test_samples: 300}]
model: {arch: mlp, epochs: 3}
methods: [` + methods + `]
protocols:
  - {name: roar, params: {rates: [` + rates + `]}}
  - {name: deletion, params: {samples: 100}}
retrain: {epochs: 3}
` + extra
}

// near says whether two byte counts of the plan agree to 1 % or 8 KiB:
// the network's pass buffers are measured, to within a few KiB.
func near(a, b int64) bool {
	return math.Abs(float64(a-b)) <= max(0.01*math.Abs(float64(b)), 8<<10)
}

// planAlone plans memorySpec's campaign, one worker, with the protocol
// alone on 100 inputs.
func planAlone(t *testing.T, protocol string) MemoryPlan {
	t.Helper()
	spec := memorySpec("gradient", "0.5", "workers: 1\n")
	i, j := strings.Index(spec, "protocols:\n"), strings.Index(spec, "retrain:")
	return planOf(t, spec[:i]+"protocols:\n  - {name: "+protocol+", params: {samples: 100}}\n"+spec[j:])
}

func planOf(t *testing.T, spec string) MemoryPlan {
	t.Helper()
	p, err := loadSpec(t, t.TempDir(), spec).Memory()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The plan holds the data once and grows with the tasks run at once, never
// with the number of tasks: more methods and rates leave it as it is, a
// second worker adds one task's working set.
func TestMemoryPlanGrowsWithWorkersNotTasks(t *testing.T) {
	one := planOf(t, memorySpec("gradient, random", "0.5", "workers: 1\n"))
	many := planOf(t, memorySpec("gradient, gradxinput, ig, smoothgrad, random", "0.1, 0.3, 0.5, 0.7, 0.9", "workers: 1\n"))
	two := planOf(t, memorySpec("gradient, random", "0.5", "workers: 2\n"))
	if one.Data != many.Data || one.Workers != many.Workers || !near(one.Task, many.Task) {
		t.Errorf("plan for 2 methods × 1 rate %+v, for 5 × 5 %+v: want the same", one, many)
	}
	if one.Data <= 0 || one.Task <= 0 || one.Workers != 1 {
		t.Fatalf("plan %+v: want data, a task's working set and one worker", one)
	}
	if two.Workers != 2 || !near(two.Live, one.Live+one.Task) {
		t.Errorf("two workers plan %+v: want one worker's live %d plus a task's %d", two, one.Live, one.Task)
	}
	if one.Peak < one.Live {
		t.Errorf("peak %d below the live heap %d", one.Peak, one.Live)
	}
}

// A campaign that cannot fit its memory cap is refused before any work,
// with the figure it would need.
func TestMemoryCapRefusesBeforeAnyWork(t *testing.T) {
	dir := t.TempDir()
	c := loadSpec(t, dir, memorySpec("gradient", "0.5", "memory_gb: 0.01\n"))
	_, err := c.Run(context.Background(), Options{Kernel: best(), Trust: Trust{Engines: []string{c.Spec.Engine}}.WithScripts(c.Spec.Model.File)})
	if err == nil || !strings.Contains(err.Error(), "memory_gb caps it at") || !strings.Contains(err.Error(), "needs about") {
		t.Fatalf("Run under a 10 MiB cap: %v, want a refusal naming what it needs", err)
	}
	// The run folder holds its spec and lock, nothing a task made.
	entries, _ := os.ReadDir(filepath.Join(dir, "run"))
	for _, e := range entries {
		if e.Name() != "spec.yaml" && e.Name() != "lock" {
			t.Errorf("the refused campaign left %s in its run folder", e.Name())
		}
	}
}

// MPRT holds the original maps and the current randomised model's beside
// the method's, and a randomised copy of the model: on 100 inputs, 100
// maps more than Deletion, which holds the maps, a perturbed copy of the
// inputs and, while the answer's checks run, a copy of the model.
func TestMPRTFootprintCountsItsMapsAndModel(t *testing.T) {
	mprt, err := protocol.New("mprt", nil)
	if err != nil {
		t.Fatal(err)
	}
	f, plain := protocol.FootprintOf(mprt, 784, 784), protocol.FootprintOf(protocol.Deletion{}, 784, 784)
	if !f.Model || f.Test <= plain.Test {
		t.Errorf("MPRT's footprint %+v against a plain protocol's %+v", f, plain)
	}
	with, without := planAlone(t, "mprt"), planAlone(t, "deletion")
	c := loadSpec(t, t.TempDir(), memorySpec("gradient", "0.5", ""))
	trainSet, _, err := c.samples(c.Spec.Datasets[0])
	if err != nil {
		t.Fatal(err)
	}
	// gmm's rows: one map value per feature.
	if want := int64(100 * 4 * trainSet.Dim()); !near(with.Task-without.Task, want) {
		t.Errorf("a task's working set with MPRT %d, with Deletion %d: MPRT's 100 more maps are %d", with.Task, without.Task, want)
	}
}

// A faithfulness protocol whose tasks run the answer's checks (job.Checked)
// plans a second network beside the explained one — each check runs a
// copy of it — where one the checks skip (Complexity) plans one: a
// vit_b_16 campaign of Deletion and ROAD peaked at 7.3 GiB on a plan of
// 4.4 GiB, its live heap at 5.9 GB while a check's copy ran.
func TestMemoryPlanCountsTheChecksCopyOfTheModel(t *testing.T) {
	c := loadSpec(t, t.TempDir(), memorySpec("gradient", "0.5", ""))
	trainSet, _, err := c.samples(c.Spec.Datasets[0])
	if err != nil {
		t.Fatal(err)
	}
	net, err := netBytes(c.Spec, trainSet)
	if err != nil {
		t.Fatal(err)
	}
	del, cx := protocol.Deletion{}, protocol.Complexity{}
	if !job.Checked(del) || job.Checked(cx) {
		t.Fatalf("Deletion checked %v, Complexity %v: want true, false", job.Checked(del), job.Checked(cx))
	}
	dim, hw := trainSet.Dim(), trainSet.Dim() // gmm's rows: one map value per feature
	fd, fc := protocol.FootprintOf(del, dim, hw), protocol.FootprintOf(cx, dim, hw)
	want := net.explained + int64(100*(fd.Test-fc.Test)+fd.Held-fc.Held)
	if got := planAlone(t, "deletion").Task - planAlone(t, "complexity").Task; !near(got, want) {
		t.Errorf("a Deletion task's working set exceeds a Complexity task's by %d, want the network's %d and the footprints' difference: %d", got, net.explained, want)
	}
}
