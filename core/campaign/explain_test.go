package campaign

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"faithlab/core/data"
	"faithlab/core/job"
	"faithlab/core/model"
	"faithlab/core/protocol"
	"faithlab/core/report"
	"faithlab/core/store"
)

// GradientSHAP draws its references from the training data: maps made by
// Attribute (faithlab-cli attribute, the workbench) and by a campaign are
// the same, bit for bit (they once differed: 100 training references
// against a zero image).
func TestGradientSHAPSameMapsInAttributeAndCampaign(t *testing.T) {
	dir := t.TempDir()
	spec := `name: shap
output: run
datasets: [{id: gmm, train_samples: 600, test_samples: 40}]
model: {arch: mlp, epochs: 2}
methods: [{name: gradientshap, params: {samples: 8}}]
protocols: [{name: deletion, params: {samples: 40}}]
seeds: [4]
`
	p := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, c, job.Shard{})
	// The campaign's base model and its test maps, from the cache.
	var m *model.Model
	var campaignMaps [][]float32
	cache := &store.Cache{Dir: filepath.Join(out.Dir, "cache")}
	files, _ := filepath.Glob(filepath.Join(cache.Dir, "*", "*"))
	for _, f := range files {
		ext := filepath.Ext(f)
		b, ok, err := cache.Get(strings.TrimSuffix(filepath.Base(f), ext), ext)
		if !ok || err != nil {
			t.Fatalf("cache entry %s: %v", f, err)
		}
		switch ext {
		case ".flm":
			if m, err = model.Decode(b, best()); err != nil {
				t.Fatal(err)
			}
		case ".npy":
			if a, err := data.ParseNPY(b); err == nil && len(a.Shape) == 3 && a.Shape[0] == 40 {
				campaignMaps = append(campaignMaps, a.Data)
			}
		}
	}
	if m == nil || len(campaignMaps) != 1 {
		t.Fatalf("cache holds model %v and %d test map sets, want a model and one", m != nil, len(campaignMaps))
	}
	trainSet, testSet, err := m.Data("", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Attribute(context.Background(), m, trainSet.Head(600), testSet.Head(40),
		Request{Method: "gradientshap", Params: map[string]any{"samples": 8}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ex.Maps.Data, campaignMaps[0]) {
		t.Error("Attribute's GradientSHAP maps differ from the campaign's")
	}
}

func TestEstimateCountsTheCampaignsWork(t *testing.T) {
	c := load(t, t.TempDir())
	z, err := c.Estimate(context.Background(), Speeds{Train: 1000, Gradient: 2000}, best())
	if err != nil {
		t.Fatal(err)
	}
	// campaignSpec: 3 methods × (ROAR at 5 rates, deletion); gmm capped
	// at 3000 training and 300 test samples; one seed.
	// The answer's checks (job.Checked: deletion's tasks) map the first 32
	// test inputs again on two other models.
	want := Size{Tasks: 6, BaseModels: 1, Retrainings: 15, MapSets: 6,
		Images: 3*3000 + 15*3*3000, MapPasses: (1 + 1 + 0) * (3000 + 300 + 2*32)}
	if z.Tasks != want.Tasks || z.BaseModels != want.BaseModels || z.Retrainings != want.Retrainings || z.MapSets != want.MapSets || z.Images != want.Images || z.MapPasses != want.MapPasses {
		t.Errorf("size %+v, want %+v", z, want)
	}
	if z.Seconds != z.Images/1000+z.MapPasses/2000 {
		t.Errorf("%g s for %g images at 1000 images/s and %g map passes at 2000/s", z.Seconds, z.Images, z.MapPasses)
	}
	// ROAR: per rate, the 300 test inputs through the retrained model
	// and their energies, beside the explained model's energies once;
	// deletion: 100 inputs on 20 + 1 steps (gmm's 20 features each
	// removed alone) of both orders, the clean energies and the energies
	// at three fractions. For 3 methods; and once, the predictions the
	// maps explain on both splits. Each deletion task's checks: the model's
	// classes of its first 32 test inputs, and per check another model's
	// classes of them and deletion on them.
	roar := 300 + 5*(300+300)
	deletion := 100 + 2*(100*21+3*100)
	checks := 32 + 2*(32+(32+2*(32*21+3*32)))
	if want := float64(3*(roar+deletion+checks) + 3000 + 300); z.Work.Forward != want {
		t.Errorf("%g forward passes, want %g", z.Work.Forward, want)
	}
}

// GOAR's projections and FUD's in-painting are counted, one sample at one
// sampler step each, and timed at the prior's own measured speed.
func TestEstimateCountsThePriorsPasses(t *testing.T) {
	c := loadSpec(t, t.TempDir(), `name: size
output: run
datasets: [{id: gmm, train_samples: 2000, test_samples: 300}]
model: {arch: mlp, epochs: 1}
seeds: [1, 2]
methods: [gradient, random]
protocols:
  - {name: goar, params: {strengths: [0], steps: 10, advance: 0.5}}
  - {name: goar, params: {strengths: [0], no_projection: true}}
  - {name: fud, params: {samples: 10, ratios: [0.5, 0.2], steps: 20}}
retrain: {epochs: 1}
`)
	z, err := c.Estimate(context.Background(), Speeds{Train: 1000}, best())
	if err != nil {
		t.Fatal(err)
	}
	// GOAR at s = 0 starts 0.5·T above step 0 on a grid of 10 steps over
	// T = 1000: steps 500, 400, …, 0, six of them, on 2 300 inputs, the
	// same for every method (s = 0 shifts nothing): once a seed; FUD: 10
	// inputs × 2 ratios × 20 steps for each of 2 methods; without
	// projection, none. For 2 seeds.
	if want := 2.0 * (6*2300 + 2*10*2*20); z.PriorPasses != want {
		t.Errorf("%g prior passes, want %g", z.PriorPasses, want)
	}
	// Both GOARs' models at s = 0 are the same for every method: one each
	// a seed, and no maps of the training set.
	if z.Retrainings != 2*2 || z.MapSets != 2*2 {
		t.Errorf("%d retrainings and %d map sets, want 4 (GOAR's and the ablation's at s = 0, once a seed) and 4 (test maps)", z.Retrainings, z.MapSets)
	}
	if !(z.Seconds > z.Images/1000) {
		t.Errorf("%g s for %g images at 1000 images/s and %g prior passes", z.Seconds, z.Images, z.PriorPasses)
	}
}

func TestMeasureSpeed(t *testing.T) {
	ds, err := data.GaussianMixture{Dim: 8, Samples: 2000}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	v, err := MeasureSpeed(context.Background(), "mlp", ds, best())
	if err != nil || !(v > 100) {
		t.Errorf("%g images/s (%v): an mlp on 8 features trains far faster", v, err)
	}
	if _, err := MeasureSpeed(context.Background(), "goar-cnn", ds, best()); err == nil {
		t.Error("goar-cnn on tabular data measured")
	}
}

// A model every method shares (the data randomisation test's, Eval-X's
// proxy) is counted once a seed, and asks for no training-set maps.
func TestEstimateCountsSharedModelsOnce(t *testing.T) {
	c := loadSpec(t, t.TempDir(), strings.Replace(campaignSpec, "  - {name: roar, params: {rates: [0.1, 0.3, 0.5, 0.7, 0.9]}}", "  - datarandomisation\n  - evalx", 1))
	z, err := c.Estimate(context.Background(), Speeds{Train: 1000, Gradient: 2000}, best())
	if err != nil {
		t.Fatal(err)
	}
	if z.Retrainings != 2 || z.MapSets != 3 || z.Images != 3*3000+2*3*3000 {
		t.Errorf("size %+v: want 2 retrainings (one each), 3 map sets (test only), base and 2 models' training images", z)
	}
}

// A launch resumes: the estimate counts only what is left — the tasks the
// run folder holds done are skipped, with the base model and the maps
// they made (in the cache) — not the whole campaign again.
func TestEstimateCountsWhatAResumeRedoes(t *testing.T) {
	c := load(t, t.TempDir())
	full, err := c.Estimate(context.Background(), Speeds{Train: 1000, Gradient: 2000, Forward: 5000}, best())
	if err != nil {
		t.Fatal(err)
	}
	// campaignSpec's plan: per method, ROAR then deletion. The first
	// method's two tasks are done.
	run, err := store.Open(c.Spec.Output, c.Raw)
	if err != nil {
		t.Fatal(err)
	}
	tasks := c.Tasks(job.Shard{})
	for _, task := range tasks[:2] {
		if err := run.Append(store.Record{Task: task.Key, Label: task.Label, Result: &protocol.Result{Protocol: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	left, err := c.Estimate(context.Background(), Speeds{Train: 1000, Gradient: 2000, Forward: 5000}, best())
	if err != nil {
		t.Fatal(err)
	}
	// Two methods of three left: their ROAR retrainings and maps, no base
	// model; gradxinput's maps take one pass an input, random's none.
	want := Size{Tasks: 4, Skipped: 2, BaseModels: 0, Retrainings: 10, MapSets: 4,
		Images: 10 * 3 * 3000, MapPasses: 1 * (3000 + 300 + 2*32)}
	if left.Tasks != want.Tasks || left.Skipped != want.Skipped || left.BaseModels != want.BaseModels || left.Retrainings != want.Retrainings ||
		left.MapSets != want.MapSets || left.Images != want.Images || left.MapPasses != want.MapPasses {
		t.Errorf("left %+v, want %+v", left, want)
	}
	roar := 300 + 5*(300+300)
	deletion := 100 + 2*(100*21+3*100)
	checks := 32 + 2*(32+(32+2*(32*21+3*32)))
	if want := float64(2*(roar+deletion+checks) + 3000 + 300); left.Work.Forward != want {
		t.Errorf("%g forward passes left, want %g", left.Work.Forward, want)
	}
	if !(left.Seconds < full.Seconds*0.7) || !strings.Contains(left.String(), "4 tasks to run (2 done already, which a resume skips)") {
		t.Errorf("%.1f s left of %.1f s: %s", left.Seconds, full.Seconds, left)
	}
}

// A book measures a campaign's speeds once per model, dataset and engine:
// other sample caps, seeds or protocols reuse them.
func TestSpeedBookMeasuresOncePerModelDataAndEngine(t *testing.T) {
	a := load(t, t.TempDir())
	b := load(t, t.TempDir())
	b.Spec.Datasets[0].TestSamples = 200
	b.Spec.Seeds = []uint64{1, 2}
	measured := 0
	book := SpeedBook{Measure: func(context.Context, *Campaign) (Measured, error) {
		measured++
		return Measured{Speeds: Speeds{Train: 1000, Gradient: 2000, Forward: 5000}, At: time.Now()}, nil
	}}
	if book.Known(a) {
		t.Fatal("known before measured")
	}
	za, err := book.Estimate(context.Background(), a, best())
	if err != nil {
		t.Fatal(err)
	}
	if !book.Known(b) {
		t.Error("another test cap and seeds: measured again")
	}
	zb, _ := book.Estimate(context.Background(), b, best())
	if measured != 1 || za.Measured.Speeds != zb.Measured.Speeds {
		t.Errorf("measured %d times: %+v then %+v", measured, za.Measured.Speeds, zb.Measured.Speeds)
	}
	b.Spec.Engine = "torch"
	if book.Known(b) {
		t.Error("another engine shares the native engine's speeds")
	}
}

// Speeds measured long ago, or beside other work, do not stand: they are
// measured again (a loaded machine's soon), and an estimate from loaded
// ones says the run may well be quicker.
func TestSpeedsStaleOrMeasuredUnderLoadAreMeasuredAgain(t *testing.T) {
	c := load(t, t.TempDir())
	sp := Speeds{Train: 1000, Gradient: 2000, Forward: 5000}
	now := time.Now()
	for _, tc := range []struct {
		m     Measured
		known bool
	}{
		{Measured{Speeds: sp, At: now.Add(-time.Minute)}, true},
		{Measured{Speeds: sp, At: now.Add(-11 * time.Minute)}, false},
		{Measured{Speeds: sp, At: now, Busy: 0.6}, true},
		{Measured{Speeds: sp, At: now.Add(-2 * time.Minute), Busy: 0.6}, false},
		{Measured{Speeds: sp, At: now, Busy: -1}, true}, // load unknown
	} {
		measured := 0
		book := SpeedBook{Measure: func(context.Context, *Campaign) (Measured, error) {
			measured++
			return Measured{Speeds: sp, At: time.Now()}, nil
		}}
		book.Keep(c, tc.m)
		if got := book.Known(c); got != tc.known {
			t.Errorf("measured %v ago, busy %.1f: known %v", now.Sub(tc.m.At).Round(time.Minute), tc.m.Busy, got)
		}
		z, err := book.Estimate(context.Background(), c, best())
		if err != nil {
			t.Fatal(err)
		}
		if again := measured > 0; again == tc.known {
			t.Errorf("measured %v ago, busy %.1f: measured again %v", now.Sub(tc.m.At).Round(time.Minute), tc.m.Busy, again)
		}
		if loaded := strings.Contains(z.String(), "Other work took 60% of this machine"); loaded != (tc.known && tc.m.Busy > 0.5) {
			t.Errorf("busy %.1f: %s", tc.m.Busy, z)
		}
	}
}

// A launch reads each dataset to check the campaign applies, for its
// memory plan and once a seed for its tasks: the estimate counts those
// openings at the measured time of one; a launch with nothing to run
// opens none.
func TestEstimateCountsTheDataReadings(t *testing.T) {
	c := load(t, t.TempDir())
	c.Spec.Seeds = []uint64{1, 2}
	z, err := c.Estimate(context.Background(), Speeds{Open: 1.5}, best())
	if err != nil {
		t.Fatal(err)
	}
	if want := 1.5 * 4; z.Seconds != want {
		t.Errorf("%g s for the readings of one dataset over two seeds, want %g", z.Seconds, want)
	}
}

// The report compares every pair of a setting's methods on its inputs:
// the estimate counts those comparisons (report.ComparisonUnits) and
// times them at the measured speed.
func TestEstimateCountsTheReportsComparisons(t *testing.T) {
	c := load(t, t.TempDir())
	z, err := c.Estimate(context.Background(), Speeds{Compare: 1e6}, best())
	if err != nil {
		t.Fatal(err)
	}
	// campaignSpec: 3 methods under ROAR (300 test inputs) and deletion
	// (100 of them), one seed.
	want := report.ComparisonUnits(3, 300, 1) + report.ComparisonUnits(3, 100, 1)
	if z.Compared != want || z.Seconds != want/1e6 {
		t.Errorf("%g inputs compared in %g s, want %g in %g s", z.Compared, z.Seconds, want, want/1e6)
	}
}

// A base model whose recipe sets its batch trains at that batch's speed
// (a batch of 32 trains several times slower an image than the default),
// the retrainings at theirs; its speed is measured apart, under its own
// key.
func TestEstimateTimesTheBaseModelAtItsBatch(t *testing.T) {
	c := load(t, t.TempDir())
	c.Spec.Model.Batch = 32
	z, err := c.Estimate(context.Background(), Speeds{Train: 1000, Base: 250}, best())
	if err != nil {
		t.Fatal(err)
	}
	// campaignSpec: the base model's 3 epochs on 3000 images, ROAR's 15
	// retrainings of 3 epochs.
	if want := 3*3000/250.0 + 15*3*3000/1000.0; math.Abs(z.Seconds-want) > 1e-9 {
		t.Errorf("%g s, want %g: the base model at 250 images/s, the retrainings at 1000", z.Seconds, want)
	}
	other := load(t, t.TempDir())
	if other.SpeedsKey() == c.SpeedsKey() {
		t.Error("a base model's batch does not key its speeds")
	}
	sp, err := c.Speeds(context.Background(), best())
	if err != nil || !(sp.Base > 0) || !(sp.Train > 0) {
		t.Errorf("speeds %+v (%v): want the base model's batch measured apart", sp, err)
	}
}
