package data

import (
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// imageNetLike is a 1000-class list whose first classes are ImageNet's,
// with their WordNet ids; "crane" names two classes, as in ImageNet.
func imageNetLike() *ClassList {
	l := &ClassList{}
	head := [][2]string{{"n01440764", "tench"}, {"n01443537", "goldfish"}, {"n01484850", "great white shark"}, {"n01491361", "tiger shark"}}
	for i := range 1000 {
		name, id := fmt.Sprintf("class %d", i), fmt.Sprintf("n%08d", 90000000+i)
		if i < len(head) {
			id, name = head[i][0], head[i][1]
		}
		if i == 134 || i == 517 {
			name = "crane"
		}
		l.Names, l.WNIDs = append(l.Names, name), append(l.WNIDs, id)
	}
	return l
}

// writeFolder makes root/<folder>/<k>.png, n grey images each, of value
// 10·(folder's index)+k; folder "" puts them in root itself.
func writeFolder(t *testing.T, root string, folders []string, n int) {
	t.Helper()
	for fi, f := range folders {
		dir := filepath.Join(root, f)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for k := range n {
			img := image.NewGray(image.Rect(0, 0, 5, 3))
			for i := range img.Pix {
				img.Pix[i] = uint8(10*fi + k)
			}
			w, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.png", k)))
			if err != nil {
				t.Fatal(err)
			}
			if err := png.Encode(w, img); err != nil {
				t.Fatal(err)
			}
			w.Close()
		}
	}
}

// A folder of 4 classes, named by wnids, names or names as folders spell
// them, opens for a 1000-class model: labels are the model's indices and
// the classes its list.
func TestClassFoldersMatchAThousandClassModel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		folders []string
		want    []int // label of each folder, in lexical order
	}{
		{"wnids", []string{"n01440764", "n01443537", "n01484850", "n01491361"}, []int{0, 1, 2, 3}},
		{"names", []string{"goldfish", "great white shark", "tench", "tiger shark"}, []int{1, 2, 0, 3}},
		{"folded names", []string{"Goldfish", "great_white_shark", "tench", "tiger-shark"}, []int{1, 2, 0, 3}},
		{"mixed", []string{"class 999", "n01440764", "n90000500"}, []int{999, 0, 500}},
	} {
		root := t.TempDir()
		writeFolder(t, root, tc.folders, 2)
		d, err := loadImageFolder(root, root, folderRead{size: 4, channels: 1, classes: imageNetLike()})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(d.Classes) != 1000 || d.Classes[2] != "great white shark" {
			t.Errorf("%s: classes %d, [2] %q: want the model's 1000", tc.name, len(d.Classes), d.Classes[2])
		}
		var want []int
		for _, y := range tc.want {
			want = append(want, y, y)
		}
		if !slices.Equal(d.Y, want) {
			t.Errorf("%s: labels %v, want %v", tc.name, d.Y, want)
		}
	}
}

// Folders that name no class are refused by name, with the model's first
// classes; a name two classes share asks for the wnid.
func TestUnmatchedClassFoldersAreRefusedWithAHint(t *testing.T) {
	for _, tc := range []struct {
		folders []string
		want    []string
	}{
		{[]string{"tench", "cat", "dog"}, []string{`2 of 3 class folders match none of the model's 1000 classes: "cat", "dog"`, `n01440764 "tench"`, "name or wnid"}},
		{[]string{"crane", "tench"}, []string{`"crane"`, "more than one", "wnid"}},
	} {
		root := t.TempDir()
		writeFolder(t, root, tc.folders, 1)
		_, err := loadImageFolder(root, root, folderRead{size: 4, channels: 1, classes: imageNetLike()})
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("folders %v: error %v, want it to say %q", tc.folders, err, w)
			}
		}
	}
}

// Folders that name none of the classes, as many as the model's, are its
// classes in lexical order, as before names were matched (a model trained
// on a folder of "0" … "9" opened on another such folder).
func TestUnnamedFoldersAsManyAsTheClassesKeepTheirOrder(t *testing.T) {
	root := t.TempDir()
	writeFolder(t, root, []string{"x", "y", "z"}, 1)
	d, err := loadImageFolder(root, root, folderRead{size: 4, channels: 1, classes: &ClassList{Names: []string{"c", "b", "a"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Y, []int{0, 1, 2}) || !slices.Equal(d.Classes, []string{"c", "b", "a"}) {
		t.Errorf("labels %v, classes %v", d.Y, d.Classes)
	}
}

// A folder of images with no class folders opens unlabelled where the
// command asks for it (the model's classes kept, both parts all of it),
// and is refused, saying what to do, where it does not.
func TestAFolderOfImagesAloneIsUnlabelled(t *testing.T) {
	root := t.TempDir()
	writeFolder(t, root, []string{""}, 5)
	opt := Options{ImageSize: 4, Channels: 1, Classes: imageNetLike()}
	if _, _, err := Open(root, opt); err == nil || !strings.Contains(err.Error(), "5 images and no class folders: this command needs labels") {
		t.Errorf("opened without Unlabelled: %v", err)
	}
	opt.Unlabelled = true
	tr, te, err := Open(root, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Unlabelled || !te.Unlabelled || tr.Len() != 5 || te.Len() != 5 || len(te.Classes) != 1000 {
		t.Errorf("train %d, test %d, unlabelled %v %v, %d classes", tr.Len(), te.Len(), tr.Unlabelled, te.Unlabelled, len(te.Classes))
	}
	opt.TestHead = 2
	if _, te, err = Open(root, opt); err != nil || te.Len() != 2 || !te.Unlabelled {
		t.Errorf("a head of 2: %v", err)
	}
	if _, _, err := Open(root, Options{ImageSize: 4, Channels: 1, Unlabelled: true}); err == nil || !strings.Contains(err.Error(), "read only for a model") {
		t.Errorf("opened for no model: %v", err)
	}
}

// test_samples below what a folder holds draws evenly over its classes
// with the seed (not the first images in folder order), and records where
// each sits in its part (Drawn); the same seed draws the same.
func TestTestSamplesOfAFolderAreBalancedOverClasses(t *testing.T) {
	root := t.TempDir()
	writeFolder(t, filepath.Join(root, "test"), []string{"a", "b", "c", "d"}, 10)
	writeFolder(t, filepath.Join(root, "train"), []string{"a", "b", "c", "d"}, 2)
	open := func(seed uint64) *Dataset {
		_, te, err := Open(root, Options{ImageSize: 4, Channels: 1, TestHead: 6, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return te
	}
	te := open(1)
	counts := te.ClassCounts()
	if slices.Max(counts) != 2 || slices.Min(counts) != 1 || te.Len() != 6 {
		t.Errorf("class counts %v: want 6 drawn evenly over 4 classes", counts)
	}
	index, rows := te.SplitPositions()
	if !slices.Equal(index, te.Drawn) || rows != nil || len(te.Drawn) != 6 {
		t.Fatalf("positions %v, rows %v, drawn %v", index, rows, te.Drawn)
	}
	for i, p := range te.Drawn {
		if p/10 != te.Y[i] {
			t.Errorf("sample %d of class %d drawn from position %d", i, te.Y[i], p)
		}
		if v := te.Sample(i)[0]; math.Abs(float64(v)-float64(p)/255) > 1e-6 {
			t.Errorf("sample %d: value %g is not position %d's", i, v, p)
		}
	}
	if again := open(1); !slices.Equal(again.Drawn, te.Drawn) {
		t.Errorf("seed 1 drew %v, then %v", te.Drawn, again.Drawn)
	}
	if other := open(2); slices.Equal(other.Drawn, te.Drawn) {
		t.Errorf("seeds 1 and 2 both drew %v", te.Drawn)
	}
}

// A draw from a split Faithlab made says where each sample sits in the
// split and, through it, in the folder.
func TestDrawnSamplesOfASplitFolderKnowTheirRows(t *testing.T) {
	root := t.TempDir()
	writeFolder(t, root, []string{"a", "b", "c"}, 10)
	_, whole, err := Open(root, Options{ImageSize: 4, Channels: 1, TestFrac: 0.5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, te, err := Open(root, Options{ImageSize: 4, Channels: 1, TestFrac: 0.5, Seed: 3, TestHead: 4})
	if err != nil {
		t.Fatal(err)
	}
	index, rows := te.SplitPositions()
	for j, p := range index {
		if rows[p] != te.Rows[j] || whole.Rows[p] != te.Rows[j] || rows[p]/10 != te.Y[j] {
			t.Errorf("sample %d: split position %d, row %d, the split's row there %d", j, p, te.Rows[j], whole.Rows[p])
		}
	}
}

// Class folder names are checked before they are matched or named in an
// error.
func TestClassFolderNamesAreCheckedBeforeMatching(t *testing.T) {
	root := t.TempDir()
	writeFolder(t, root, []string{"tench", "bad\x1bname"}, 1)
	_, err := loadImageFolder(root, root, folderRead{size: 4, channels: 1, classes: imageNetLike()})
	if err == nil || !strings.Contains(err.Error(), "control character") {
		t.Errorf("error %v", err)
	}
}

func TestCheckWNIDs(t *testing.T) {
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{[]string{"n01440764", "n01443537"}, ""},
		{[]string{"n01440764"}, "1 wnids for 2 classes"},
		{[]string{"n0144076", "n01443537"}, "eight digits"},
		{[]string{"n01440764", "n01440764"}, "names classes 0 and 1"},
	} {
		err := CheckWNIDs(tc.ids, 2)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v, want %q", tc.ids, err, tc.want)
		}
	}
}
