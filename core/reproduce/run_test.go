package reproduce

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/campaign"
	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/report"
	"faithlab/resources"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// kern is the engine's fastest kernel here (OpenBLAS where it loads).
func kern() gemm.Kernel {
	k, _ := gemm.Best()
	return k
}

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from what the code writes now:\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestReportGolden writes the REPORT.md of a hand-made run: a ROAR of v_λ
// that orders the λ, checked against both of goar-synthetic's kinds of
// claim; every byte of the report is the code's (no engine, no clock).
func TestReportGolden(t *testing.T) {
	r, err := Get("goar-synthetic")
	if err != nil {
		t.Fatal(err)
	}
	recs := lambdaRun(180, 100, 20)
	claims := []Claim{r.Claims[1], r.Claims[0]}
	claims[1].Check.Setting = map[string]any{"protocol": "roar"} // GOAR's claim, asked of this ROAR
	vs := Evaluate(claims, recs, report.Diagnose(recs))
	md := Markdown(r, RunInfo{Size: "smoke", Dir: "run", ID: "hand-made", Done: 3, Manifest: "a hand-made run"}, vs)
	golden(t, "hand-made.REPORT.md", md)
}

// verdictLines are a report's verdicts without the figures, as
// `reproduce` prints them (Verdict.Line).
func verdictLines(vs []Verdict) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString(v.Line() + "\n")
	}
	return b.String()
}

// runSize runs a reproduction at a size in a temporary folder and checks
// the report's structure: a verdict row and a section for every claim.
func runSize(t *testing.T, name, size string) Ran {
	t.Helper()
	r, err := Get(name)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ran, err := Run(context.Background(), r, Options{Size: size, Out: out, Kernel: kern()})
	if err != nil {
		t.Fatal(err)
	}
	if ran.Failed > 0 {
		t.Fatalf("%d tasks failed", ran.Failed)
	}
	md, err := os.ReadFile(ran.Report)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Claims {
		if !strings.Contains(string(md), "| "+c.ID+" | ") || !strings.Contains(string(md), "## "+c.ID+" — ") {
			t.Errorf("REPORT.md has no verdict row or section for %s", c.ID)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "results.csv")); err != nil {
		t.Error(err)
	}
	// The verdicts rest on the run's own diagnosis of its tasks: the same
	// as the folder's, read afresh.
	res, err := campaign.Open(filepath.Join(out, "run"))
	if err != nil {
		t.Fatal(err)
	}
	if fresh := Evaluate(r.Claims, res.Status().Done, res.Diagnostics()); verdictLines(fresh) != verdictLines(ran.Verdicts) {
		t.Errorf("the verdicts differ from the run folder's, diagnosed afresh:\n%s\nagainst\n%s", verdictLines(ran.Verdicts), verdictLines(fresh))
	}
	// Run again: the run folder resumes with nothing to do and the same verdicts.
	again, err := Run(context.Background(), r, Options{Size: size, Out: out, Kernel: kern()})
	if err != nil {
		t.Fatal(err)
	}
	if verdictLines(again.Verdicts) != verdictLines(ran.Verdicts) {
		t.Errorf("resumed run's verdicts differ:\n%s\nagainst\n%s", verdictLines(again.Verdicts), verdictLines(ran.Verdicts))
	}
	return ran
}

// TestSmokeReproductions runs every reproduction at its smoke size: the
// pipeline from the spec to the report, claim by claim (the verdicts of a
// smoke run mean nothing: its models barely train).
func TestSmokeReproductions(t *testing.T) {
	all, err := List()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		t.Run(r.Name, func(t *testing.T) {
			if testing.Short() && r.Name != "goar-synthetic" {
				t.Skip("image reproductions take tens of seconds")
			}
			runSize(t, r.Name, "smoke")
		})
	}
}

// TestGOARSyntheticQuickVerdicts runs goar-synthetic at its quick size
// (minutes: three retraining seeds) and checks its verdicts against the golden ones: a
// regression in the science, not only in the code, changes them.
func TestGOARSyntheticQuickVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("minutes on 2 cores")
	}
	ran := runSize(t, "goar-synthetic", "quick")
	golden(t, "goar-synthetic-quick.verdicts", verdictLines(ran.Verdicts))
	// Which method to trust (report.Answer) orders v_λ by λ: the truth's
	// share in the map, the order the problem is built to have.
	res, err := campaign.Open(filepath.Join(ran.Dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	as := res.Diagnostics().Confidence.Trust
	if len(as) != 1 || len(as[0].Methods) < 3 {
		t.Fatalf("answers %+v", as)
	}
	last := math.Inf(1)
	for _, m := range as[0].Methods {
		var lambda float64
		if _, err := fmt.Sscanf(m.Method, "vlambda{lambda=%g}", &lambda); err != nil {
			t.Fatalf("%s: %v", m.Method, err)
		}
		if lambda >= last {
			t.Errorf("the answer ranks v_λ at λ %g below λ %g: %s", last, lambda, as[0].Headline)
		}
		last = lambda
	}
	if as[0].Outcome != report.Holds || as[0].Trusted != "vlambda{lambda=1}" {
		t.Errorf("answer %s: %s", as[0].Outcome, as[0].Headline)
	}
}

// A report folder of another reproduction or size is refused before any
// work, naming the folder; a size the reproduction lacks is refused too.
func TestRunRefusesAnotherFolderAndSize(t *testing.T) {
	r, err := Get("goar-synthetic")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "campaign.yaml"), []byte(r.Sizes["paper"].Spec), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), r, Options{Size: "smoke", Out: out, Kernel: kern()})
	if err == nil || !strings.Contains(err.Error(), "holds another campaign") || !strings.Contains(err.Error(), out) {
		t.Errorf("another size's folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "run")); err == nil {
		t.Error("a run folder was made")
	}
	if _, err := Run(context.Background(), r, Options{Size: "huge", Out: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no size \"huge\"") {
		t.Errorf("unknown size: %v", err)
	}
}

// Every reproduction's campaign, at every size, fits its data: no method
// or protocol that its datasets' samples cannot take (campaign.Applies),
// which Run would refuse before any work. Fashion-MNIST's are checked
// where its files are here.
func TestEveryReproductionFitsItsData(t *testing.T) {
	rs, err := List()
	if err != nil {
		t.Fatal(err)
	}
	_, fmnist := os.Stat(data.FashionMNISTDir)
	for _, r := range rs {
		for size, sz := range r.Sizes {
			if fmnist != nil && strings.Contains(sz.Spec, "fashion-mnist") {
				continue
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "campaign.yaml")
			if err := os.WriteFile(path, []byte(sz.Spec), 0o644); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(sz.Spec, resources.ModelName) {
				if err := os.WriteFile(filepath.Join(dir, resources.ModelName), resources.Model(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c, err := campaign.Load(path)
			if err != nil {
				t.Fatalf("%s (%s): %v", r.Name, size, err)
			}
			if err := c.Applies(); err != nil {
				t.Errorf("%s (%s): %v", r.Name, size, err)
			}
		}
	}
}

// --data cifar10=PATH reads the user's CIFAR-10 in place of Fashion-MNIST
// with the paper's model trained on it: a spec the campaign accepts, whose
// datasets and model are the swap and nothing else; GOAR's needs a prior.
func TestDataSwapsInThePapersDataset(t *testing.T) {
	cifar, err := filepath.Abs(filepath.Join("..", "..", "testdata", "cifar"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Get("dpi")
	if err != nil {
		t.Fatal(err)
	}
	text, err := r.SpecFor("smoke", map[string]string{"cifar10": cifar}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"id: " + cifar, "arch: resnet18", "optimizer: sgd", "schedule: cosine", "train_samples: 300", "rates: [0.1, 0.3, 0.5]"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("spec lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(string(text), "fashion-mnist") || strings.Contains(string(text), resources.ModelName) {
		t.Errorf("spec still reads Fashion-MNIST or its model:\n%s", text)
	}
	path := filepath.Join(t.TempDir(), "campaign.yaml")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := campaign.Load(path); err != nil {
		t.Errorf("the swapped spec: %v", err)
	}
	if _, err := r.SpecFor("smoke", map[string]string{"svhn": cifar}, ""); err == nil || !strings.Contains(err.Error(), "takes no dataset \"svhn\" (cifar10: CIFAR-10") {
		t.Errorf("an unknown dataset: %v", err)
	}
	g, err := Get("goar-fmnist")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.SpecFor("smoke", map[string]string{"cifar10": cifar}, ""); err == nil || !strings.Contains(err.Error(), "needs a diffusion prior trained on the data given") {
		t.Errorf("GOAR without a prior: %v", err)
	}
	text, err = g.SpecFor("smoke", map[string]string{"cifar10": cifar}, "/data/cifar-prior.flm")
	if err != nil || strings.Count(string(text), "prior: /data/cifar-prior.flm") != 2 {
		t.Errorf("GOAR's prior (%v):\n%s", err, text)
	}
}
