package attr

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"
)

// mapsOf fills n maps of per values each: map i holds 100·i + j.
func mapsOf(n, per int) []float32 {
	out := make([]float32, n*per)
	for i := range n {
		for j := range per {
			out[i*per+j] = float32(100*i + j)
		}
	}
	return out
}

// A .npy in dataset order serves input i's map as map i, for the whole
// split or any positions of it, with channels kept as written.
func TestFileServesNPYInDatasetOrder(t *testing.T) {
	dir := t.TempDir()
	if err := data.SaveNPY(filepath.Join(dir, "m.npy"), []int{5, 2, 2}, mapsOf(5, 4)); err != nil {
		t.Fatal(err)
	}
	f := File{Test: "m.npy", Dir: dir}
	shape := []int{3, 2, 2}
	got, err := f.Attribute(context.Background(), nil, Input{N: 2, Shape: shape, Split: "test", Index: []int{4, 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := append(mapsOf(5, 4)[16:20:20], mapsOf(5, 4)[4:8]...)
	if !slices.Equal(got.Shape, []int{2, 1, 2, 2}) || !slices.Equal(got.Data, want) {
		t.Fatalf("inputs 4 and 1: shape %v data %v, want [2 1 2 2] %v", got.Shape, got.Data, want)
	}
	all, err := f.Attribute(context.Background(), nil, Input{N: 3, Shape: shape, Split: "test"})
	if err != nil || !slices.Equal(all.Data, mapsOf(5, 4)[:12]) {
		t.Fatalf("the first 3 inputs: %v %v", all.Data, err)
	}
	// Maps of every channel are served as written (a campaign reduces them).
	if err := data.SaveNPY(filepath.Join(dir, "c.npy"), []int{2, 3, 2, 2}, mapsOf(2, 12)); err != nil {
		t.Fatal(err)
	}
	c, err := File{Test: "c.npy", Dir: dir}.Attribute(context.Background(), nil, Input{N: 2, Shape: shape, Split: "test"})
	if err != nil || !slices.Equal(c.Shape, []int{2, 3, 2, 2}) || !slices.Equal(c.Data, mapsOf(2, 12)) {
		t.Fatalf("maps of 3 channels: %v %v", c.Shape, err)
	}
}

// Where Faithlab split the dataset's file itself, a .npy of one map per
// sample of the file, in the file's order, serves each input the map of
// its row; a .npy as long as the split is in the split's order, as before.
func TestFileServesMapsOfTheFileRowsToASplitFaithlabMade(t *testing.T) {
	dir := t.TempDir()
	if err := data.SaveNPY(filepath.Join(dir, "rows.npy"), []int{6, 1}, mapsOf(6, 1)); err != nil {
		t.Fatal(err)
	}
	rows := []int{4, 0, 5} // the test split: rows 4, 0 and 5 of a file of 6
	in := Input{N: 3, Shape: []int{1, 1, 1}, Split: "test", Rows: rows, SourceLen: 6}
	got, err := File{Test: "rows.npy", Dir: dir}.Attribute(context.Background(), nil, in)
	if err != nil || !slices.Equal(got.Data, []float32{400, 0, 500}) {
		t.Fatalf("maps of the file's rows: %v %v, want row 4's, 0's and 5's", got.Data, err)
	}
	in.N, in.Index = 1, []int{2}
	if got, err := (File{Test: "rows.npy", Dir: dir}).Attribute(context.Background(), nil, in); err != nil || !slices.Equal(got.Data, []float32{500}) {
		t.Fatalf("position 2 of the split: %v %v, want row 5's map", got.Data, err)
	}
	if err := data.SaveNPY(filepath.Join(dir, "split.npy"), []int{3, 1}, mapsOf(3, 1)); err != nil {
		t.Fatal(err)
	}
	in.N, in.Index = 3, nil
	if got, err := (File{Test: "split.npy", Dir: dir}).Attribute(context.Background(), nil, in); err != nil || !slices.Equal(got.Data, []float32{0, 100, 200}) {
		t.Fatalf("maps in the split's order: %v %v", got.Data, err)
	}
}

// An .npz with an index serves each map to the input its index names,
// whatever the order of the file, and refuses an input it does not hold.
func TestFileServesNPZByIndex(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.npz")
	if err := data.SaveNPZ(path, []data.NamedArray{
		{Name: "maps", Shape: []int{3, 4}, Data: mapsOf(3, 4)},
		{Name: "index", Shape: []int{3}, Data: []float32{7, 2, 5}},
	}); err != nil {
		t.Fatal(err)
	}
	f := File{Test: "ignored.npy", Train: path, Dir: dir}
	got, err := f.Attribute(context.Background(), nil, Input{N: 3, Shape: []int{4, 1, 1}, Split: "train", Index: []int{2, 5, 7}})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Concat(mapsOf(3, 4)[4:8], mapsOf(3, 4)[8:12], mapsOf(3, 4)[0:4])
	if !slices.Equal(got.Data, want) || !slices.Equal(got.Shape, []int{3, 4, 1, 1}) {
		t.Fatalf("inputs 2, 5, 7: %v %v, want %v", got.Shape, got.Data, want)
	}
	_, err = f.Attribute(context.Background(), nil, Input{N: 1, Shape: []int{4, 1, 1}, Split: "train", Index: []int{3}})
	if err == nil || !strings.Contains(err.Error(), "no map of train input 3") || !strings.Contains(err.Error(), path) {
		t.Fatalf("input 3 is not in the index: %v", err)
	}
}

// Every bad file is refused with its path and what is wrong, before a
// protocol sees a map.
func TestFileRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	nan := mapsOf(3, 4)
	nan[9] = float32(math.NaN())
	inf := mapsOf(2, 4)
	inf[5] = float32(math.Inf(1))
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(data.SaveNPY(p("nan.npy"), []int{3, 2, 2}, nan))
	must(data.SaveNPZ(p("inf.npz"), []data.NamedArray{{Name: "maps", Shape: []int{2, 2, 2}, Data: inf}, {Name: "index", Shape: []int{2}, Data: []float32{10, 30}}}))
	must(data.SaveNPY(p("nhwc.npy"), []int{2, 2, 2, 3}, mapsOf(2, 12)))
	must(data.SaveNPY(p("short.npy"), []int{2, 2, 2}, mapsOf(2, 4)))
	must(data.SaveNPY(p("empty.npy"), []int{0, 2, 2}, nil))
	must(data.SaveNPZ(p("dup.npz"), []data.NamedArray{{Name: "maps", Shape: []int{2, 2, 2}, Data: mapsOf(2, 4)}, {Name: "index", Shape: []int{2}, Data: []float32{1, 1}}}))
	must(data.SaveNPZ(p("frac.npz"), []data.NamedArray{{Name: "maps", Shape: []int{2, 2, 2}, Data: mapsOf(2, 4)}, {Name: "index", Shape: []int{2}, Data: []float32{0, 1.5}}}))
	must(data.SaveNPZ(p("neg.npz"), []data.NamedArray{{Name: "maps", Shape: []int{2, 2, 2}, Data: mapsOf(2, 4)}, {Name: "index", Shape: []int{2}, Data: []float32{0, -1}}}))
	must(data.SaveNPZ(p("idxlen.npz"), []data.NamedArray{{Name: "maps", Shape: []int{2, 2, 2}, Data: mapsOf(2, 4)}, {Name: "index", Shape: []int{3}, Data: []float32{0, 1, 2}}}))
	must(data.SaveNPZ(p("nomaps.npz"), []data.NamedArray{{Name: "saliency", Shape: []int{2, 2, 2}, Data: mapsOf(2, 4)}}))
	whole, _ := os.ReadFile(p("short.npy"))
	must(os.WriteFile(p("cut.npy"), whole[:len(whole)-3], 0o644))
	must(os.WriteFile(p("text.npy"), []byte("input,map\n1,2\n"), 0o644))
	must(os.Mkdir(p("folder.npy"), 0o755))
	for _, tc := range []struct {
		file, split string
		n           int
		want        string
	}{
		{"nan.npy", "test", 3, "the map of input 2 holds NaN at offset 1"},
		{"inf.npz", "test", 2, "the map of input 30 holds +Inf at offset 1"},
		{"nhwc.npy", "test", 2, "channels last?"},
		{"short.npy", "test", 3, "no map of test input 2 (it holds maps of the first 2 inputs)"},
		{"empty.npy", "test", 1, "no maps"},
		{"dup.npz", "test", 2, "index[0] and index[1] both name input 1"},
		{"frac.npz", "test", 2, "index[1] = 1.5"},
		{"neg.npz", "test", 2, "index[1] = -1"},
		{"idxlen.npz", "test", 2, "index of shape [3] for 2 maps"},
		{"nomaps.npz", "test", 2, `no array "maps"`},
		{"cut.npy", "test", 2, "truncated"},
		{"text.npy", "test", 2, "neither .npy nor .npz"},
		{"folder.npy", "test", 2, "is a folder"},
		{"missing.npy", "test", 2, "no such file"},
		{"nan.npy", "train", 2, "give params.train"},
	} {
		_, err := File{Test: tc.file, Dir: dir}.Attribute(context.Background(), nil, Input{N: tc.n, Shape: []int{3, 2, 2}, Split: tc.split})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s (%s): %v, want an error with %q", tc.file, tc.split, err, tc.want)
		} else if tc.split == "test" && !strings.Contains(err.Error(), p(tc.file)) {
			t.Errorf("%s: the error does not name the file: %v", tc.file, err)
		}
	}
	// Grey images' maps with their channel last: named as such, and the
	// shapes wanted listed once each.
	must(data.SaveNPY(p("nhwc1.npy"), []int{2, 2, 2, 1}, mapsOf(2, 4)))
	if _, err := (File{Test: "nhwc1.npy", Dir: dir}).Attribute(context.Background(), nil, Input{N: 2, Shape: []int{1, 2, 2}, Split: "test"}); err == nil ||
		!strings.Contains(err.Error(), "want (N, 2, 2) or (N, 1, 2, 2) for") || !strings.Contains(err.Error(), "channels last?") {
		t.Errorf("grey maps with the channel last: %v", err)
	}
	// An index naming a position beyond the inputs says how far it goes.
	must(data.SaveNPZ(p("far.npz"), []data.NamedArray{{Name: "maps", Shape: []int{2, 2, 2}, Data: mapsOf(2, 4)}, {Name: "index", Shape: []int{2}, Data: []float32{0, 5000}}}))
	if _, err := (File{Test: "far.npz", Dir: dir}).Attribute(context.Background(), nil, Input{N: 2, Shape: []int{1, 2, 2}, Split: "test"}); err == nil ||
		!strings.Contains(err.Error(), "no map of test input 1 (it holds an index of 2 inputs, from 0 to 5000, beyond the 2 inputs asked for)") {
		t.Errorf("an index beyond the inputs: %v", err)
	}
	if _, err := (File{Test: "nan.npy", Dir: dir}).Attribute(context.Background(), nil, Input{N: 1, Shape: []int{3, 2, 2}}); err == nil || !strings.Contains(err.Error(), "names none") {
		t.Errorf("no split: %v", err)
	}
}

// The registry builds file from a spec's parameters, requires the test
// file, and reads relative paths from the setup's folder.
func TestFileFromTheRegistry(t *testing.T) {
	var e Entry
	for _, x := range Entries() {
		if x.Info.Name == "file" {
			e = x
		}
	}
	if e.Build == nil {
		t.Fatal("no file method in the registry")
	}
	if _, err := e.Build(Setup{}, nil); err == nil || !strings.Contains(err.Error(), "test") {
		t.Errorf("no test file: %v", err)
	}
	m, err := e.Build(Setup{Dir: "/spec/folder"}, map[string]any{"test": "t.npy", "train": "/abs/tr.npz"})
	if err != nil {
		t.Fatal(err)
	}
	f := m.(File)
	if f.Path("test") != "/spec/folder/t.npy" || f.Path("train") != "/abs/tr.npz" {
		t.Errorf("paths %q %q", f.Path("test"), f.Path("train"))
	}
}

// FuzzMapsFile: whatever bytes a maps file holds, reading it returns maps
// or an error, never a panic, and never maps that are not finite.
func FuzzMapsFile(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.npz")
	if err := data.SaveNPZ(seed, []data.NamedArray{{Name: "maps", Shape: []int{2, 2, 2}, Data: mapsOf(2, 4)}, {Name: "index", Shape: []int{2}, Data: []float32{1, 0}}}); err != nil {
		f.Fatal(err)
	}
	b, _ := os.ReadFile(seed)
	f.Add(b)
	if err := data.SaveNPY(seed, []int{3, 1, 2, 2}, mapsOf(3, 4)); err != nil {
		f.Fatal(err)
	}
	b, _ = os.ReadFile(seed)
	f.Add(b)
	path := filepath.Join(dir, "fuzz")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := File{Test: path}.Attribute(context.Background(), nil, Input{N: 2, Shape: []int{1, 2, 2}, Split: "test"})
		if err != nil {
			return
		}
		for _, v := range m.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("served a non-finite value %g", v)
			}
		}
	})
}
