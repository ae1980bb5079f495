package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reproduce is wiring over core/reproduce, whose tests run every
// reproduction; this checks the flags reach it: the size, the folder, the
// figures, and a wrong name or size said plainly.
func TestReproduceWiring(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "report")
	if err := runReproduce(ctx, []string{"goar-synthetic", "--size", "smoke", "--out", out, "--figures", "", "--quiet"}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	if err != nil || !strings.Contains(string(md), "Size **smoke**") || !strings.Contains(string(md), "goar-orders-lambda") {
		t.Errorf("REPORT.md: %v\n%.300s", err, md)
	}
	if _, err := os.Stat(filepath.Join(out, "figures")); err == nil {
		t.Error("--figures \"\" drew figures")
	}
	if err := runReproduce(ctx, []string{"no-such-paper", "--out", t.TempDir()}); err == nil || !strings.Contains(err.Error(), "goar-synthetic") {
		t.Errorf("unknown name: %v", err)
	}
	if err := runReproduce(ctx, []string{"goar-synthetic", "--size", "huge", "--out", t.TempDir()}); err == nil || !strings.Contains(err.Error(), "huge") {
		t.Errorf("unknown size: %v", err)
	}
	if err := runReproduce(ctx, []string{"--list"}); err != nil {
		t.Error(err)
	}
}
