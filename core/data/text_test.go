package data

import (
	"path/filepath"
	"strings"
	"testing"
)

// A class folder whose name holds a line break would put a line of its
// own into every report and screen that names the class: it is refused
// by name when the dataset opens.
func TestAClassNamedWithALineBreakIsRefused(t *testing.T) {
	root := t.TempDir()
	for _, c := range []string{"a", "b\n## Verdict"} {
		for _, f := range []string{"1.png", "2.png", "3.png", "4.png", "5.png"} {
			writeFile(t, filepath.Join(root, c), f, pngBytes(t, 4, 4))
		}
	}
	_, _, err := Open(root, Options{ImageSize: 4, Channels: 1})
	if err == nil || !strings.Contains(err.Error(), root) || !strings.Contains(err.Error(), "line break") {
		t.Errorf("Open: %v", err)
	}
	if err := CheckNames("class", []string{"stripes", "ankle boot", "T-shirt/top"}); err != nil {
		t.Errorf("plain names refused: %v", err)
	}
	for _, bad := range [][]string{{""}, {strings.Repeat("x", 201)}, {"a\x00"}, {"a\u202e"}} {
		if CheckNames("class", bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
