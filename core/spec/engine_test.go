package spec

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

const engineSpec = `output: out
datasets: [fashion-mnist]
model: {arch: goar-cnn}
methods: [gradient]
protocols: [deletion]
engine: ENGINE
`

// The engine key takes native, torch and torch@ssh://HOST with the
// worker's options, survives Format, and a mistake is reported at its line.
func TestEngineKeyIsCheckedAndFormatted(t *testing.T) {
	for _, ok := range []string{"native", "torch", "torch@ssh://gpu1", "torch@ssh://ada@gpu1:2222?python=/opt/conda/bin/python3&device=cuda:1"} {
		s, err := Parse("e.yaml", []byte(strings.Replace(engineSpec, "ENGINE", ok, 1)))
		if err != nil {
			t.Errorf("engine %s: %v", ok, err)
			continue
		}
		if s.Engine != ok {
			t.Errorf("engine %q read as %q", ok, s.Engine)
		}
		b, err := Format(s)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := Parse("e.yaml", b); err != nil || back.Engine != ok {
			t.Errorf("engine %q formatted and read back: %q, %v\n%s", ok, back.Engine, err, b)
		}
	}
	for _, tc := range []struct{ engine, msg string }{
		{"gpu", `engine: engine "gpu": native, torch or torch@ssh://HOST`},
		{"torch@http://gpu1", "want torch@ssh://HOST"},
		{"torch?device=tpu", `device "tpu"`},
	} {
		_, err := Parse("e.yaml", []byte(strings.Replace(engineSpec, "ENGINE", tc.engine, 1)))
		var ps Problems
		if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Line != 6 || !strings.Contains(ps[0].Error(), tc.msg) {
			t.Errorf("engine %s: %v, want one problem at line 6 saying %q", tc.engine, err, tc.msg)
		}
	}
}

// A TorchScript model runs on the torch engine only: a spec that loads
// one on the native engine says so.
func TestTorchScriptModelNeedsTheTorchEngine(t *testing.T) {
	fixture, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "torch", "scripted-cnn.pt"))
	src := strings.Replace(strings.Replace(engineSpec, "ENGINE", "native", 1), "{arch: goar-cnn}", "{file: "+fixture+"}", 1)
	if _, err := Parse("e.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "add engine: torch") {
		t.Errorf("TorchScript model on the native engine: %v", err)
	}
	if _, err := Parse("e.yaml", []byte(strings.Replace(src, "engine: native", "engine: torch", 1))); err != nil {
		t.Errorf("TorchScript model on the torch engine: %v", err)
	}
}
