package data

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var fixtures = filepath.Join("..", "..", "testdata")

func fixture(parts ...string) string { return filepath.Join(append([]string{fixtures}, parts...)...) }

func TestOpenFixtures(t *testing.T) {
	for _, tc := range []struct {
		ref         string
		opt         Options
		train, test int
		shape       []int
		classes     []string
	}{
		{fixture("idx"), Options{}, 12, 6, []int{1, 6, 5}, []string{"0", "1", "2"}},
		{fixture("cifar"), Options{}, 4, 2, []int{3, 32, 32}, strings.Split("airplane,automobile,bird,cat,deer,dog,frog,horse,ship,truck", ",")},
		{fixture("csv", "tabular.csv"), Options{TestFrac: 1.0 / 3}, 4, 2, []int{2, 1, 1}, []string{"cat", "dog"}},
		{fixture("npy", "split.npz"), Options{}, 8, 4, []int{1, 4, 4}, []string{"0", "1"}},
		{fixture("npy", "xy.npz"), Options{}, 8, 2, []int{3, 1, 1}, []string{"0", "1"}},
		{fixture("images"), Options{ImageSize: 8, Channels: 3, TestFrac: 1.0 / 3}, 4, 2, []int{3, 8, 8}, []string{"dark", "light"}},
	} {
		tr, te, err := Open(tc.ref, tc.opt)
		if err != nil {
			t.Errorf("%s: %v", tc.ref, err)
			continue
		}
		if tr.Len() != tc.train || te.Len() != tc.test || !slices.Equal(tr.Shape, tc.shape) || !slices.Equal(tr.Classes, tc.classes) {
			t.Errorf("%s: %d/%d samples of %v, classes %v; want %d/%d of %v, %v", tc.ref, tr.Len(), te.Len(), tr.Shape, tr.Classes, tc.train, tc.test, tc.shape, tc.classes)
		}
	}
}

func TestIDXValues(t *testing.T) {
	d, err := LoadIDX("t", fixture("idx", "train-images-idx3-ubyte"), fixture("idx", "train-labels-idx1-ubyte.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(fixture("idx", "train-images-idx3-ubyte"))
	if got, want := d.X[7], float32(raw[16+7])/255; got != want {
		t.Errorf("pixel 7 = %g, want %g", got, want)
	}
	if !slices.Equal(d.Y[:4], []int{0, 1, 2, 0}) {
		t.Errorf("labels %v", d.Y[:4])
	}
}

func TestImageFolderPixels(t *testing.T) {
	d, err := LoadImageFolder(fixture("images"), 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Uniform images stay uniform: luma of (20,20,20) and (230,230,230).
	for i := 0; i < d.Len(); i++ {
		want := float32(20) / 255
		if d.Y[i] == 1 {
			want = float32(230) / 255
		}
		for _, v := range d.Sample(i) {
			if math.Abs(float64(v-want)) > 1e-2 {
				t.Fatalf("sample %d (%s): %g, want %g", i, d.Classes[d.Y[i]], v, want)
			}
		}
	}
}

func TestStandardisationUsesTrainSplitOnly(t *testing.T) {
	tr, te, err := Open(fixture("csv", "tabular.csv"), Options{TestFrac: 1.0 / 3})
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 2; j++ {
		var s, ss float64
		for i := 0; i < tr.Len(); i++ {
			v := float64(tr.X[i*2+j])
			s, ss = s+v, ss+v*v
		}
		n := float64(tr.Len())
		if math.Abs(s/n) > 1e-5 || math.Abs(ss/n-1) > 1e-4 {
			t.Errorf("feature %d: mean %g, variance %g after standardisation", j, s/n, ss/n)
		}
	}
	if te.Standardization != tr.Standardization {
		t.Error("test split does not share the train split's statistics")
	}
}

func TestNPYRoundTripAndDtypes(t *testing.T) {
	for _, tc := range []struct {
		file  string
		shape []int
		want  []float32
	}{
		{"f4.npy", []int{2, 3}, []float32{0, 1, 2, 3, 4, 5}},
		{"f8.npy", []int{3, 2}, []float32{0, 0.5, 1, 1.5, 2, 2.5}},
		{"u1.npy", []int{4}, []float32{0, 1, 2, 3}},
		{"i8.npy", []int{4}, []float32{0, 1, 2, 1}},
	} {
		a, err := LoadNPY(fixture("npy", tc.file))
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if !slices.Equal(a.Shape, tc.shape) || !slices.Equal(a.Data, tc.want) {
			t.Errorf("%s: %v %v, want %v %v", tc.file, a.Shape, a.Data, tc.shape, tc.want)
		}
	}
	p := filepath.Join(t.TempDir(), "x.npy")
	if err := SaveNPY(p, []int{2, 1, 2}, []float32{1, -2, 3.5, 4}); err != nil {
		t.Fatal(err)
	}
	a, err := LoadNPY(p)
	if err != nil || !slices.Equal(a.Shape, []int{2, 1, 2}) || !slices.Equal(a.Data, []float32{1, -2, 3.5, 4}) {
		t.Errorf("round trip: %v %v", a, err)
	}
}

func TestBadInputsNameTheProblem(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	good, _ := os.ReadFile(fixture("idx", "train-images-idx3-ubyte"))
	labels, _ := os.ReadFile(fixture("idx", "train-labels-idx1-ubyte.gz"))
	for _, tc := range []struct {
		name, want string
		err        func() error
	}{
		{"idx bad magic", "bad magic", func() error {
			_, err := LoadIDX("t", write("m", append([]byte{1, 2}, good[2:]...)), fixture("idx", "train-labels-idx1-ubyte.gz"), nil)
			return err
		}},
		{"idx truncated", "truncated", func() error {
			_, err := LoadIDX("t", write("tr", good[:len(good)-5]), fixture("idx", "train-labels-idx1-ubyte.gz"), nil)
			return err
		}},
		{"idx label count", "labels for", func() error {
			_, err := LoadIDX("t", fixture("idx", "t10k-images-idx3-ubyte"), write("l.gz", labels), nil)
			return err
		}},
		{"gzip truncated", "gzip", func() error {
			_, err := LoadIDX("t", fixture("idx", "train-images-idx3-ubyte"), write("l2.gz", labels[:len(labels)/2]), nil)
			return err
		}},
		{"csv non-numeric", "not a decimal number", func() error {
			_, err := LoadCSV(write("a.csv", []byte("a,b,y\n1,x,0\n")), "")
			return err
		}},
		{"csv empty", "empty", func() error { _, err := LoadCSV(write("e.csv", []byte("a,b,y\n")), ""); return err }},
		{"csv unknown label", "no column", func() error { _, err := LoadCSV(write("u.csv", []byte("a,y\n1,0\n")), "z"); return err }},
		{"sklearn count", "header says", func() error {
			_, err := LoadSklearnCSV(write("s.csv", []byte("3,1,a,b\n0.5,0\n0.1,1\n")), "s", true)
			return err
		}},
		{"sklearn label", "not a class index", func() error {
			_, err := LoadSklearnCSV(write("s2.csv", []byte("1,1,a,b\n0.5,-1\n")), "s", true)
			return err
		}},
		{"cifar truncated", "truncated", func() error { _, _, err := ParseCIFAR(make([]byte, 3000), 1); return err }},
		{"npy truncated", "truncated", func() error {
			b, _ := os.ReadFile(fixture("npy", "f4.npy"))
			_, err := ParseNPY(b[:len(b)-1])
			return err
		}},
		{"npy dtype", "unsupported or missing dtype", func() error {
			b, _ := os.ReadFile(fixture("npy", "f4.npy"))
			_, err := ParseNPY(bytes.Replace(b, []byte("<f4"), []byte("<c8"), 1))
			return err
		}},
		{"unknown id", "neither a known id", func() error { _, _, err := Open("no-such-set", Options{}); return err }},
		{"gmm empty", "at least 2 samples", func() error { _, err := GaussianMixture{Dim: 3}.Generate(); return err }},
	} {
		err := tc.err()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestGaussianMixture(t *testing.T) {
	g := GaussianMixture{Dim: 5, Samples: 20000, Seed: 3}
	d, err := g.Generate()
	if err != nil {
		t.Fatal(err)
	}
	// Each class's sample mean is ±1 per coordinate and its variance 0.3.
	for c, mu := range []float64{-1, 1} {
		var s, ss, n float64
		for i := 0; i < d.Len(); i++ {
			if d.Y[i] != c {
				continue
			}
			for _, v := range d.Sample(i) {
				s, ss, n = s+float64(v), ss+float64(v)*float64(v), n+1
			}
		}
		mean := s / n
		if math.Abs(mean-mu) > 0.02 || math.Abs(ss/n-mean*mean-0.3) > 0.02 {
			t.Errorf("class %d: mean %g variance %g, want %g and 0.3", c, mean, ss/n-mean*mean, mu)
		}
	}
	var norm float64
	for _, v := range g.Direction() {
		norm += float64(v) * float64(v)
	}
	if math.Abs(norm-1) > 1e-6 {
		t.Errorf("direction has norm² %g", norm)
	}
}

// seeds adds fixtures to a fuzz corpus, gunzipped when gzipped.
func seeds(f *testing.F, paths ...string) {
	for _, p := range paths {
		b, err := os.ReadFile(fixture(p))
		if err != nil {
			f.Fatal(err)
		}
		if strings.HasSuffix(p, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				f.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				f.Fatal(err)
			}
		}
		f.Add(b)
	}
}

func FuzzParseIDX(f *testing.F) {
	seeds(f, "idx/train-images-idx3-ubyte", "idx/train-labels-idx1-ubyte.gz")
	f.Fuzz(func(t *testing.T, b []byte) {
		dims, payload, err := ParseIDX(b)
		if err == nil {
			n := 1
			for _, d := range dims {
				n *= d
			}
			if n != len(payload) {
				t.Fatalf("dims %v but %d bytes", dims, len(payload))
			}
		}
	})
}

func FuzzParseNPY(f *testing.F) {
	seeds(f, "npy/f4.npy", "npy/f8.npy", "npy/u1.npy", "npy/i8.npy")
	f.Fuzz(func(t *testing.T, b []byte) { ParseNPY(b) })
}

func FuzzParseNPZ(f *testing.F) {
	seeds(f, "npy/split.npz", "npy/xy.npz")
	f.Fuzz(func(t *testing.T, b []byte) { ParseNPZ(b) })
}

func FuzzParseCSV(f *testing.F) {
	seeds(f, "csv/tabular.csv", "csv/sklearn.csv")
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := parseCSV("fuzz", bytes.NewReader(b), ""); err == nil {
			if err := d.Validate(); err != nil {
				t.Fatalf("parsed but invalid: %v", err)
			}
		}
		parseSklearnCSV("fuzz", bytes.NewReader(b), true)
		parseSklearnCSV("fuzz", bytes.NewReader(b), false)
	})
}

func FuzzParseCIFAR(f *testing.F) {
	// One record of the fixture: a whole batch as a seed stalled the fuzzer
	// (long inputs only cost time; one record reaches every path).
	b, err := os.ReadFile(fixture("cifar/test_batch.bin"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[:3073])
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseCIFAR(b, 1)
		ParseCIFAR(b, 2)
	})
}

// TestHeadsReadOnlyWhatTheyKeep: Options' heads give the first samples of
// each split, as cutting the whole set would, and an IDX set is read only
// that far (its memory is the head's).
func TestHeadsReadOnlyWhatTheyKeep(t *testing.T) {
	for _, ref := range []string{fixture("idx"), fixture("csv", "tabular.csv"), fixture("npy", "split.npz")} {
		opt := Options{TestFrac: 1.0 / 3}
		tr, te, err := Open(ref, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.TrainHead, opt.TestHead = 3, 1
		htr, hte, err := Open(ref, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ got, all *Dataset }{{htr, tr.Head(3)}, {hte, te.Head(1)}} {
			if !slices.Equal(c.got.X, c.all.X) || !slices.Equal(c.got.Y, c.all.Y) || !slices.Equal(c.got.Classes, c.all.Classes) {
				t.Errorf("%s: the head read differs from the whole set's head", ref)
			}
		}
	}
	dir := t.TempDir()
	const n, side = 4000, 28
	pixels := make([]byte, n*side*side)
	labels := make([]byte, n)
	for i := range pixels {
		pixels[i] = byte(i * 7)
	}
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	for name, b := range map[string][]byte{
		"train-images-idx3-ubyte": idxBytes([]int{n, side, side}, pixels), "train-labels-idx1-ubyte": idxBytes([]int{n}, labels),
		"t10k-images-idx3-ubyte": idxBytes([]int{n, side, side}, pixels), "t10k-labels-idx1-ubyte": idxBytes([]int{n}, labels),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var tr *Dataset
	var err error
	whole := allocated(func() { _, _, err = Open(dir, Options{}) })
	head := allocated(func() { tr, _, err = Open(dir, Options{TrainHead: 100, TestHead: 100}) })
	if err != nil || tr.Len() != 100 || len(tr.Classes) != 10 {
		t.Fatalf("head of %s: %v", dir, err)
	}
	if head > whole/10 {
		t.Errorf("reading 100 of %d samples allocated %d bytes, the whole set %d", n, head, whole)
	}
}

// TestHeadsBeyondTheSetAreRefused: asking for more samples than a split
// holds names the dataset, the split and both counts, rather than quietly
// keeping them all (a record would claim samples the model never saw).
func TestHeadsBeyondTheSetAreRefused(t *testing.T) {
	for _, ref := range []string{fixture("idx"), fixture("csv", "tabular.csv")} {
		tr, te, err := Open(ref, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			opt  Options
			want string
		}{
			{Options{TrainHead: tr.Len() + 1}, fmt.Sprintf("%d training samples asked for, its training split holds %d", tr.Len()+1, tr.Len())},
			{Options{TestHead: te.Len() + 5}, fmt.Sprintf("%d test samples asked for, its test split holds %d", te.Len()+5, te.Len())},
		} {
			if _, _, err := Open(ref, c.opt); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), ref) {
				t.Errorf("heads %d/%d: %v, want an error naming %s and %q", c.opt.TrainHead, c.opt.TestHead, err, ref, c.want)
			}
		}
		if htr, hte, err := Open(ref, Options{TrainHead: tr.Len(), TestHead: te.Len()}); err != nil || htr.Len() != tr.Len() || hte.Len() != te.Len() {
			t.Errorf("%s: heads equal to the splits' sizes: %v", ref, err)
		}
	}
}

// TestSplitRowsNameTheFileRows: a set Faithlab splits itself says where
// each sample of each split (and of its head) sits in the file, and a set
// whose file holds its splits apart says nothing.
func TestSplitRowsNameTheFileRows(t *testing.T) {
	ref := fixture("csv", "tabular.csv")
	whole, err := LoadCSV(ref, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, head := range []int{0, 1} {
		tr, te, err := Open(ref, Options{Raw: true, TrainHead: head, TestHead: head})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, part := range []*Dataset{tr, te} {
			if len(part.Rows) != part.Len() || part.SourceLen != whole.Len() {
				t.Fatalf("head %d: %d rows for %d samples of a file of %d (SourceLen %d)", head, len(part.Rows), part.Len(), whole.Len(), part.SourceLen)
			}
			for i, r := range part.Rows {
				if seen[r] || !slices.Equal(part.Sample(i), whole.Sample(r)) || part.Y[i] != whole.Y[r] {
					t.Errorf("head %d: sample %d is not row %d of the file (or that row is named twice)", head, i, r)
				}
				seen[r] = true
			}
		}
		if head == 0 && len(seen) != whole.Len() {
			t.Errorf("the splits name %d of the file's %d rows", len(seen), whole.Len())
		}
	}
	if tr, te, err := Open(fixture("idx"), Options{}); err != nil || tr.Rows != nil || te.Rows != nil {
		t.Errorf("IDX's own splits: rows %v, %v (%v)", tr.Rows, te.Rows, err)
	}
}

// TestDescribeSaysWhatOpenReturns: the summary from an IDX set's headers is
// what opening the set gives (shape, split sizes, classes, masks), and a
// header that disagrees with its partner is named.
func TestDescribeSaysWhatOpenReturns(t *testing.T) {
	refs := []string{fixture("idx"), fixture("cifar"), fixture("npy", "split.npz")}
	if _, err := os.Stat(FashionMNISTDir); err == nil {
		refs = append(refs, "fashion-mnist", "fashion-mnist-planted")
	}
	for _, ref := range refs {
		s, err := Describe(ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		tr, te, err := Open(ref, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Shape, tr.Shape) || s.Train != tr.Len() || s.Test != te.Len() || !slices.Equal(s.Classes, tr.Classes) || s.Masks != (tr.Masks != nil) {
			t.Errorf("%s: described %+v, opened %v %d/%d %v", ref, s, tr.Shape, tr.Len(), te.Len(), tr.Classes)
		}
	}
	dir := t.TempDir()
	for _, name := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte.gz"} {
		b, err := os.ReadFile(fixture("idx", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "t10k-images-idx3-ubyte" {
			b, _ = os.ReadFile(fixture("idx", "train-images-idx3-ubyte"))
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Describe(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("test images and labels of different counts: %v", err)
	}
}
