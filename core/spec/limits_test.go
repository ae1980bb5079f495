package spec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A spec of thousands of unknown keys reports every problem in Problems
// but words only the first 50, then how many more.
func TestManyProblemsAreCappedInTheMessage(t *testing.T) {
	var b strings.Builder
	b.WriteString("output: o\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "unknown_key_%d: 1\n", i)
	}
	_, err := Parse("many.yaml", []byte(b.String()))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %T %v, want Problems", err, err)
	}
	if len(ps) < 5000 {
		t.Fatalf("%d problems, want at least one per unknown key", len(ps))
	}
	msg := err.Error()
	if lines := strings.Count(msg, "\n"); lines != maxProblemsShown+1 {
		t.Errorf("message of %d lines, want a title, %d problems and a count", lines+1, maxProblemsShown)
	}
	if !strings.HasPrefix(msg, fmt.Sprintf("%d problems", len(ps))) || !strings.HasSuffix(msg, fmt.Sprintf("… and %d more", len(ps)-maxProblemsShown)) {
		t.Errorf("message starts %.40q and ends %q", msg, msg[len(msg)-40:])
	}
	if !strings.Contains(msg, "many.yaml:2:1:") || strings.Contains(msg, fmt.Sprintf("many.yaml:%d:", maxProblemsShown+3)) {
		t.Errorf("not the first problems in file order:\n%.400s", msg)
	}
	// A few problems are listed in full.
	_, err = Parse("few.yaml", []byte("output: o\na: 1\nb: 2\n"))
	if err == nil || strings.Contains(err.Error(), "more") {
		t.Errorf("few problems: %v", err)
	}
}

func TestSpecFilesAreBoundedBeforeReading(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("k: 1\n", MaxFileBytes/5+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file"},
		{dir, "is a folder"},
		{big, "more than the 256 KiB"},
	} {
		_, err := Load(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: %v, want an error naming it and mentioning %q", tc.path, err, tc.want)
		}
	}
	// Parse bounds what it is handed, too (a caller that read the file
	// itself).
	_, err := Parse("big.yaml", make([]byte, MaxFileBytes+1))
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 1 || !strings.Contains(ps[0].Msg, "more than") {
		t.Errorf("oversized spec: %v", err)
	}
}
