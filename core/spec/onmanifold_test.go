package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The synthetic GOAR campaign parses: gmm with its settings, v_λ by λ,
// GOAR with and without projection.
func TestGOARSyntheticSpec(t *testing.T) {
	s, err := Load(filepath.Join("..", "..", "testdata", "campaigns", "goar-synthetic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, m := range s.Methods {
		labels = append(labels, m.Label())
	}
	if s.Datasets[0].Ref != "gmm:dim=64" || len(s.Protocols) != 4 ||
		strings.Join(labels, " ") != "vlambda{lambda=0} vlambda{lambda=0.25} vlambda{lambda=0.5} vlambda{lambda=0.75} vlambda{lambda=1}" {
		t.Errorf("dataset %s, methods %v, %d protocols", s.Datasets[0].Ref, labels, len(s.Protocols))
	}
}

// A prior file named by GOAR or FUD is read from the spec's folder, like
// the model file, and a missing one is a problem at its key; a gmm id
// with a bad setting is a problem at the dataset.
func TestPriorFileAndGMMSettings(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.flm"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	const src = `output: out
datasets: [gmm:dim=64, "gmm:dim=0"]
model: {arch: mlp}
methods: [gradient]
protocols:
  - {name: goar, params: {prior: p.flm}}
  - name: fud
    params: {prior: missing.flm}
`
	_, err := Parse(filepath.Join(dir, "c.yaml"), []byte(src))
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 2 {
		t.Fatalf("problems %v, want 2", err)
	}
	if ps[0].Line != 2 || !strings.Contains(ps[0].Msg, "dim=0") {
		t.Errorf("first problem %v, want the gmm setting on line 2", ps[0])
	}
	if ps[1].Line != 8 || ps[1].Path != "protocols[1].params.prior" || !strings.Contains(ps[1].Msg, filepath.Join(dir, "missing.flm")) {
		t.Errorf("second problem %v, want the missing prior on line 8", ps[1])
	}
	s, err := Parse(filepath.Join(dir, "c.yaml"), []byte(strings.ReplaceAll(strings.ReplaceAll(src, `, "gmm:dim=0"`, ""), "missing.flm", "mixture")))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Protocols[0].Params["prior"]; got != filepath.Join(dir, "p.flm") {
		t.Errorf("prior file %v, want it in the spec's folder", got)
	}
	if got := s.Protocols[1].Params["prior"]; got != "mixture" {
		t.Errorf("built-in prior %v changed", got)
	}
}
