package spec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestExampleSpec(t *testing.T) {
	s, err := Load(filepath.Join("..", "..", "testdata", "campaigns", "fmnist-roar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "fmnist-roar" || len(s.Datasets) != 1 || s.Datasets[0].Ref != "fashion-mnist" || s.Model.Arch != "goar-cnn" || s.Model.Epochs != 10 {
		t.Errorf("spec %+v", s)
	}
	var labels []string
	for _, m := range s.Methods {
		labels = append(labels, m.Label())
	}
	if got := strings.Join(labels, " "); got != "gradient ig smoothgrad{samples=15,noise_frac=0.15} gradxinput random" {
		t.Errorf("methods %s", got)
	}
	if len(s.Protocols) != 1 || s.Protocols[0].Name != "roar" || s.Retrain.Epochs != 5 || len(s.Seeds) != 1 || s.Seeds[0] != 1 {
		t.Errorf("protocols %+v retrain %+v seeds %v", s.Protocols, s.Retrain, s.Seeds)
	}
	if !filepath.IsAbs(s.Output) && !strings.HasSuffix(s.Output, filepath.Join("campaigns", "runs", "fmnist-roar")) {
		t.Errorf("output %s", s.Output)
	}
}

// Every mistake is reported, each at its own line.
func TestFiveMistakes(t *testing.T) {
	const src = `output: out
datasets: [fashion-mnist]
model: {arch: goar-cnn, epochs: -3}
methods:
  - gradient
  - name: smoothgrad
    params: {samples: many}
  - gradiant
protocols:
  - name: roar
    params: {rates: [0.1], retrain_epochs: 2}
seeds: [1]
colour: blue
`
	_, err := Parse("bad.yaml", []byte(src))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v, want Problems", err)
	}
	want := []struct {
		line int
		has  string
	}{
		{3, "model.epochs: -3"},
		{7, `methods[1].params.samples: is a string: want an integer`},
		{8, `unknown attribution method "gradiant"`},
		{11, "retrain_epochs: does not apply (it takes rates, keep, reference, rank)"},
		{13, `unknown key "colour"`},
	}
	if len(ps) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(ps), len(want), err)
	}
	for i, w := range want {
		if ps[i].Line != w.line || !strings.Contains(ps[i].Error(), w.has) {
			t.Errorf("problem %d: %v, want line %d with %q", i, ps[i], w.line, w.has)
		}
	}
	if !strings.Contains(err.Error(), "bad.yaml:8:5:") {
		t.Errorf("no file:line:col in\n%v", err)
	}
}

func TestSpecErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, has string }{
		{"empty", "", "not a YAML mapping"},
		{"syntax", "output: [a\n", "bad.yaml:"},
		{"indent", "name: x\noutput: o\ndatasets:\n  - id: iris\n   train_samples: 5\n", "bad.yaml:3:1: YAML syntax: did not find expected '-' indicator (in the block from this line"},
		{"list at top", "- a\n- b\n", "want a mapping"},
		{"missing all", "name: x\n", `missing key "output"`},
		{"empty output", "name: x\noutput: \"\"\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\n", "bad.yaml:2:9: output: empty: name the run folder"},
		{"file and arch", "output: o\ndatasets: [iris]\nmodel: {arch: mlp, file: x.flm}\nmethods: [gradient]\nprotocols: [deletion]\n", "cannot read model file"},
		{"unknown arch", "output: o\ndatasets: [iris]\nmodel: {arch: vgg}\nmethods: [gradient]\nprotocols: [deletion]\n", `unknown architecture "vgg"`},
		{"unknown dataset", "output: o\ndatasets: [nowhere]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\n", "neither a known id"},
		{"bad post", "output: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\npost: [blur]\nprotocols: [deletion]\n", "post[0]"},
		{"unknown protocol", "output: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [goar2]\n", `unknown protocol "goar2"`},
		{"twice", "output: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient, gradient]\nprotocols: [deletion]\n", "listed twice"},
		{"bad rate type", "output: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [{name: roar, params: {rates: fast}}]\n", "protocols[0]"},
		{"negative seed", "output: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\nseeds: [-1]\n", "seeds[0]"},
		{"negative memory", "output: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\nmemory_gb: -2\n", "memory_gb"},
		{"memory past any machine", "output: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\nmemory_gb: 1e300\n", "memory_gb: 1e+300 GiB: more than any machine holds"},
		{"name of two lines", "name: \"a\\n## Verdict\"\noutput: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\n", `bad.yaml:1:7: name: "a\n## Verdict" holds a line break`},
		{"name with NUL", "name: \"a\\0b\"\noutput: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\n", `another control character`},
		{"empty name", "name: \" \"\noutput: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\n", `name: empty`},
		{"long name", "name: " + strings.Repeat("a", 101) + "\noutput: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\n", `name: 101 characters: a name is at most 100`},
		{"label of two lines", "output: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [{name: gradient, label: \"g\\rx\"}]\nprotocols: [deletion]\n", `want a name on one line`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.has) {
				t.Errorf("error %v, want %q", err, tc.has)
			}
		})
	}
}

// FuzzParse: no input makes Parse panic, and a failure is always Problems.
func FuzzParse(f *testing.F) {
	f.Add([]byte("output: o\ndatasets: [iris]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("methods: [{name: ig, params: {steps: 1e99}}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := Parse("f.yaml", b); err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error %T %v", err, err)
			}
		}
	})
}

// Format writes what Parse reads back unchanged.
func TestFormatRoundTrip(t *testing.T) {
	s, err := Load(filepath.Join("..", "..", "testdata", "campaigns", "fmnist-roar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s.Output, s.Reduce, s.Workers, s.MemoryGB = "out", "max", 2, 3.5
	s.Datasets = append(s.Datasets, Dataset{Ref: "iris", TestSamples: 30})
	b, err := Format(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("again.yaml", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip:\n%+v\nwant\n%+v\nYAML:\n%s", back, s, b)
	}
}

// A spec with twenty-one mistakes of every kind a user makes reports them
// all, each at its own line and column, before any work starts.
func TestTwentyOneMistakesAllReported(t *testing.T) {
	const src = `output: out
datasets:
  - id: fashion-mnist
    train_samples: -1
model: {arch: goar-cnn, epochs: -3, lr: -0.1}
methods:
  - gradient
  - name: ig
    params: {steps: -3}
  - name: ig
    params: {baseline: nonsense}
  - name: smoothgrad
    params: {noise_frac: -1}
  - name: kernelshap
    params: {grid: -4}
  - name: gradient
    params: {steps: 5}
  - name: trace-sa
    params: {cooling: 1.5}
  - gradiant
post: ["", abs, abs, blur]
reduce: median
protocols:
  - name: roar
    params: {rates: [1.5]}
  - name: kar
    params: {rates: [0.1, 0.1]}
  - name: road
    params: {reference: nonsense}
  - name: deletion
    params: {grid: -4}
  - name: roar
    params: {rank: loudest}
seeds: [1, 1]
retrain: {epochs: 0}
workers: -2
`
	_, err := Parse("bad.yaml", []byte(src))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v, want Problems", err)
	}
	want := []struct {
		line int
		has  string
	}{
		{4, "train_samples: -1"},
		{5, "model.epochs: -3"},
		{5, "model.lr"},
		{9, "params.steps: -3: want ≥ 1"},
		{11, "baseline"},
		{13, "params.noise_frac: -1: want ≥ 0"},
		{15, "params.grid: -4: want ≥ 0"},
		{17, "params.steps: does not apply (it takes none)"},
		{19, "params.cooling: 1.5: want a value in [0, 1)"},
		{20, `unknown attribution method "gradiant"`},
		{21, `post-processing "abs" listed twice`},
		{21, `unknown post-processing "blur"`},
		{22, `channel reduction "median"`},
		{25, "params.rates: [0] 1.5: want a value in (0, 1)"},
		{27, "params.rates: lists 0.1 twice"},
		{29, "nonsense"},
		{31, "params.grid: -4: want ≥ 1"},
		{33, `params.rank: "loudest": want one of magnitude, signed`},
		{34, "seed 1 listed twice"},
		{35, "retrain.epochs: 0 epochs"},
		{36, "workers: -2 workers"},
	}
	if len(ps) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(ps), len(want), err)
	}
	for i, w := range want {
		if ps[i].Line != w.line || !strings.Contains(ps[i].Error(), w.has) {
			t.Errorf("problem %d: %v, want line %d with %q", i, ps[i], w.line, w.has)
		}
	}
}

// A spec evaluating maps from files under a protocol that retrains needs
// the training inputs' maps, and says so before any work; one that does
// not retrain needs only the test maps.
func TestFileMethodWithoutTrainingMapsIsRefusedForRetraining(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "m.npy"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	src := func(protocols string) []byte {
		return []byte("output: out\ndatasets: [gmm]\nmodel: {arch: mlp}\nmethods:\n  - {name: file, params: {test: m.npy}}\nprotocols: " + protocols + "\n")
	}
	_, err := Parse(filepath.Join(dir, "s.yaml"), src("[deletion, {name: road, params: {retrain: true}}]"))
	if err == nil || !strings.Contains(err.Error(), "s.yaml:5:5: methods[0]: ROAD retrains") || !strings.Contains(err.Error(), "params.train") {
		t.Errorf("ROAD with retraining, no training maps: %v", err)
	}
	if _, err := Parse(filepath.Join(dir, "s.yaml"), src("[deletion, road]")); err != nil {
		t.Errorf("no retraining: %v", err)
	}
	if _, err := Parse(filepath.Join(dir, "s.yaml"), src("[roar]")); err == nil || !strings.Contains(err.Error(), "ROAR retrains") {
		t.Errorf("ROAR, no training maps: %v", err)
	}
	_, err = Parse(filepath.Join(dir, "s.yaml"), []byte("output: out\ndatasets: [gmm]\nmodel: {arch: mlp}\nmethods: [{name: file, params: {test: gone.npy}}]\nprotocols: [deletion]\n"))
	if err == nil || !strings.Contains(err.Error(), "cannot read maps file "+filepath.Join(dir, "gone.npy")) {
		t.Errorf("a missing maps file: %v", err)
	}
}

// A recipe's optimiser, momentum, weight decay and schedule (the DPI
// paper's SGD with cosine annealing) parse, format back, and are checked;
// unset, they leave a recipe's cache key as it was before they existed.
func TestModelRecipeOptimiser(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	text := "name: c\noutput: run\ndatasets: [{id: iris}]\nmodel: {arch: mlp, epochs: 50, lr: 0.1, batch: 128, optimizer: sgd, momentum: 0.9, weight_decay: 0.0005, schedule: cosine}\nmethods: [gradient]\nprotocols: [{name: deletion}]\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Model; m.Optimizer != "sgd" || m.Momentum != 0.9 || m.WeightDecay != 0.0005 || m.Schedule != "cosine" {
		t.Errorf("model %+v", m)
	}
	b, err := Format(s)
	if err != nil || !strings.Contains(string(b), "optimizer: sgd") || !strings.Contains(string(b), "schedule: cosine") {
		t.Errorf("formatted %s (%v)", b, err)
	}
	key, _ := json.Marshal(Model{Arch: "mlp", Epochs: 50})
	if string(key) != `{"File":"","Arch":"mlp","Epochs":50,"Patience":0,"LR":0,"Batch":0}` {
		t.Errorf("an Adam recipe's key changed: %s", key)
	}
	for old, bad := range map[string]string{"optimizer: sgd": "optimizer: rmsprop", "schedule: cosine": "schedule: step", "momentum: 0.9": "momentum: -1"} {
		if err := os.WriteFile(path, []byte(strings.Replace(text, old, bad, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
