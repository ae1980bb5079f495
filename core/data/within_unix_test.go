//go:build unix

package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A folder on a file's way, or the file itself, that is a symbolic link
// out of the folder written is refused by name, and nothing lands where it
// leads (the file there stays as it was, no temporary file is left).
func TestWriteFileInRefusesLinksOutOfTheFolder(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	victim := filepath.Join(elsewhere, "a.png")
	os.WriteFile(victim, []byte("mine"), 0o644)
	if err := os.Symlink(elsewhere, filepath.Join(root, "figures")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(root, "REPORT.md")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(root, "deep"), 0o755)
	os.Symlink(elsewhere, filepath.Join(root, "deep", "er"))
	for _, tc := range []struct{ name, link string }{
		{"figures/a.png", "figures"},
		{"REPORT.md", "REPORT.md"},
		{"deep/er/a.png", "deep/er"},
		{"deep/er/new/b.png", "deep/er"},
	} {
		err := WriteFileIn(root, tc.name, []byte("theirs"))
		if err == nil || !strings.Contains(err.Error(), filepath.Join(root, tc.link)+" is a symbolic link") {
			t.Errorf("%s: %v, want the link %s named", tc.name, err, tc.link)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine" {
		t.Errorf("the file the link leads to holds %q", b)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 1 {
		t.Errorf("the folder the link leads to holds %d entries", len(entries))
	}
	if err := MkdirIn(root, "figures"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("MkdirIn through a link: %v", err)
	}
	if err := WriteFileIn(root, "../x", []byte("x")); err == nil {
		t.Error("a name out of the folder was written")
	}
}

// Inside the folder, missing folders are made, a regular file is replaced
// whole, and no temporary file is left behind.
func TestWriteFileInMakesFoldersAndReplacesFiles(t *testing.T) {
	root := t.TempDir()
	for _, s := range []string{"one", "two"} {
		if err := WriteFileIn(root, "a/b/c.txt", []byte(s[:1]), []byte(s[1:])); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a", "b", "c.txt")); string(b) != "two" {
		t.Errorf("holds %q", b)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "a", "b")); len(entries) != 1 {
		t.Errorf("%d entries: a temporary file was left", len(entries))
	}
	if st, _ := os.Stat(filepath.Join(root, "a", "b", "c.txt")); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	os.Mkdir(filepath.Join(root, "d"), 0o755)
	if err := WriteFileIn(root, "d", []byte("x")); err == nil || !strings.Contains(err.Error(), "folder") {
		t.Errorf("over a folder: %v", err)
	}
}
