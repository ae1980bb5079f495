//go:build unix

package data

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// A class folder that is a symbolic link is a class like any other when it
// leads inside the dataset's folder (before, it was skipped without a
// word: 2 classes of 3 trained), and so is a linked image; a dataset with
// train/ and test/ may link to a folder beside them.
func TestImageFolderFollowsLinksInsideIt(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/0.png", "a/1.png", "b/0.png", "b/1.png", "a/more/0.png", "a/more/1.png"} {
		writeFile(t, root, p, pngBytes(t, 4, 4))
	}
	symlink(t, "a/more", filepath.Join(root, "c"))
	symlink(t, "../a/0.png", filepath.Join(root, "b", "2.png"))
	d, err := LoadImageFolder(root, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Classes, []string{"a", "b", "c"}) || !slices.Equal(d.Y, []int{0, 0, 1, 1, 1, 2, 2}) {
		t.Errorf("classes %v, labels %v", d.Classes, d.Y)
	}

	set := t.TempDir()
	for _, p := range []string{"train/a/0.png", "train/b/0.png", "all/c/0.png", "all/c/1.png", "test/a/0.png", "test/b/0.png", "test/c/0.png"} {
		writeFile(t, set, p, pngBytes(t, 4, 4))
	}
	symlink(t, "../all/c", filepath.Join(set, "train", "c"))
	tr, te, err := Open(set, Options{ImageSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tr.Classes, []string{"a", "b", "c"}) || tr.Len() != 4 || te.Len() != 3 {
		t.Errorf("classes %v, %d and %d samples", tr.Classes, tr.Len(), te.Len())
	}
}

// A link that leads out of the dataset's folder, or nowhere, is refused,
// naming the link and where it leads, before any image is read: a class
// folder, an image, a train/ part, a class in a folder given by a path
// with a link in it.
func TestImageFolderRefusesLinksLeadingOutOfIt(t *testing.T) {
	elsewhere, _ := filepath.EvalSymlinks(t.TempDir())
	writeFile(t, elsewhere, "c/0.png", pngBytes(t, 4, 4))
	for _, tc := range []struct {
		name  string
		link  string // below the dataset's folder
		to    string
		open  string // what is opened, below the dataset's folder
		wants []string
	}{
		{"class folder", "c", filepath.Join(elsewhere, "c"), ".", []string{"c leads to " + filepath.Join(elsewhere, "c"), "outside"}},
		{"class folder, relative", "c", filepath.Join("..", filepath.Base(elsewhere), "c"), ".", []string{"c leads to " + filepath.Join(elsewhere, "c"), "outside"}},
		{"image", "b/1.png", filepath.Join(elsewhere, "c", "0.png"), ".", []string{filepath.Join("b", "1.png") + " leads to " + filepath.Join(elsewhere, "c", "0.png")}},
		{"image in a linked class", "c", "a/more", ".", nil}, // and a/more/1.png below
		{"class folder leading nowhere", "c", filepath.Join(elsewhere, "gone"), ".", []string{"c is a symbolic link that cannot be followed", "no such file"}},
		{"train part", "set/train", elsewhere, "set", []string{filepath.Join("set", "train") + " leads to " + elsewhere, "outside"}},
	} {
		root := t.TempDir()
		for _, p := range []string{"a/0.png", "b/0.png", "set/test/c/0.png"} {
			writeFile(t, root, p, pngBytes(t, 4, 4))
		}
		symlink(t, tc.to, filepath.Join(root, tc.link))
		if tc.name == "image in a linked class" {
			os.Mkdir(filepath.Join(root, "a", "more"), 0o755)
			symlink(t, filepath.Join(elsewhere, "c", "0.png"), filepath.Join(root, "a", "more", "1.png"))
			tc.wants = []string{filepath.Join(root, "c", "1.png") + " leads to " + filepath.Join(elsewhere, "c", "0.png")}
		}
		var err error
		n := allocated(func() { _, _, err = Open(filepath.Join(root, tc.open), Options{ImageSize: 4}) })
		wantError(t, tc.name, err, tc.wants...)
		if err != nil && !strings.Contains(err.Error(), root) {
			t.Errorf("%s: %q does not name the dataset's folder", tc.name, err)
		}
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes", tc.name, n)
		}
	}
}

// Masks follow the images' link rules: a mask, or .masks itself, may be a
// link that leads inside the dataset's folder; one that leads outside it,
// or nowhere, is refused by name.
func TestMasksFollowTheImagesLinkRules(t *testing.T) {
	elsewhere, _ := filepath.EvalSymlinks(t.TempDir())
	writeFile(t, elsewhere, "a/0.png", pngBytes(t, 4, 4))
	for _, tc := range []struct {
		name, link, to string // link below the dataset's folder
		wants          []string
	}{
		{"mask inside", ".masks/b/0.png", "../a/0.png", nil},
		{"masks folder inside", ".masks", "drawn", nil},
		{"mask outside", ".masks/b/0.png", filepath.Join(elsewhere, "a", "0.png"), []string{filepath.Join(".masks", "b", "0.png") + " leads to " + filepath.Join(elsewhere, "a", "0.png"), "outside"}},
		{"masks folder outside", ".masks", elsewhere, []string{".masks leads to " + elsewhere, "outside"}},
		{"masks folder nowhere", ".masks", filepath.Join(elsewhere, "gone"), []string{".masks is a symbolic link that cannot be followed"}},
	} {
		root := t.TempDir()
		for _, p := range []string{"a/0.png", "b/0.png", "drawn/a/0.png", "drawn/b/0.png"} {
			writeFile(t, root, p, pngBytes(t, 4, 4))
		}
		if tc.link != ".masks" {
			writeFile(t, root, ".masks/a/0.png", pngBytes(t, 4, 4))
			os.MkdirAll(filepath.Join(root, ".masks", "b"), 0o755)
		}
		symlink(t, tc.to, filepath.Join(root, tc.link))
		d, err := LoadImageFolder(root, 4, 1)
		if tc.wants == nil && (err != nil || len(d.Masks) != 2*16) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.wants != nil {
			wantError(t, tc.name, err, tc.wants...)
		}
	}
}
