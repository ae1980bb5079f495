package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --engine is checked before any work, a TorchScript model asks for the
// torch engine, and `run --engine` may move a campaign to another host of
// its engine but not to another engine.
func TestEngineFlagIsCheckedAndKeptToTheSpecsKind(t *testing.T) {
	ctx := context.Background()
	fixture := filepath.Join("..", "..", "testdata", "torch", "scripted-cnn.pt")
	if err := runEval(ctx, []string{"--model", fixture, "--engine", "gpu"}); err == nil || !strings.Contains(err.Error(), "native, torch or torch@ssh://HOST") {
		t.Errorf("eval --engine gpu: %v", err)
	}
	if err := runEval(ctx, []string{"--model", fixture}); err == nil || !strings.Contains(err.Error(), "--engine torch") {
		t.Errorf("eval of a TorchScript model on the native engine: %v", err)
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "c.yaml")
	os.WriteFile(spec, []byte("output: run\nengine: torch\ndatasets: [gmm]\nmodel: {arch: mlp}\nmethods: [gradient]\nprotocols: [deletion]\n"), 0o644)
	if err := runCampaign(ctx, []string{spec, "--engine", "native"}); err == nil || !strings.Contains(err.Error(), "filed by engine") {
		t.Errorf("run --engine native of a torch spec: %v", err)
	}
}
