package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
)

// readLogits reads eval --logits' CSV: its header, and per row the input,
// label and predicted class and the logits, each parsed as a float32.
func readLogits(t *testing.T, path string) (header []string, idx [][3]int, logits [][]float32) {
	t.Helper()
	rows := readRows(t, path)
	for r, row := range rows[1:] {
		var ids [3]int
		for c := range ids {
			v, err := strconv.Atoi(row[c])
			if err != nil {
				t.Fatalf("%s row %d column %s: %v", path, r+1, rows[0][c], err)
			}
			ids[c] = v
		}
		l := make([]float32, len(row)-3)
		for c, s := range row[3:] {
			v, err := strconv.ParseFloat(s, 32)
			if err != nil {
				t.Fatalf("%s row %d column %s: %v", path, r+1, rows[0][3+c], err)
			}
			l[c] = float32(v)
		}
		idx, logits = append(idx, ids), append(logits, l)
	}
	return rows[0], idx, logits
}

// wantHeader is the CSV's header for k classes.
func wantHeader(k int) []string {
	h := []string{"input", "label", "predicted"}
	for c := range k {
		h = append(h, "logit_"+strconv.Itoa(c))
	}
	return h
}

// eval --logits writes, for every input of the test split, its position,
// label, the network's logits (as the forward pass gives them; the .csv's
// decimals read back as the .npy's float32 to the bit) and the predicted
// class, the logits' argmax. An existing file is replaced.
func TestEvalLogitsAreTheForwardPass(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	const ref = "gmm:dim=16,samples=600"
	tr, _, err := data.Open(ref, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New("mlp", tr, gemm.Gonum{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(p("m.flm")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("l.csv"), []byte("an older file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{"l.csv", "l.npy"} {
		if err := runEval(ctx, []string{"--model", p("m.flm"), "--dataset", ref, "--logits", p(out)}); err != nil {
			t.Fatal(err)
		}
	}
	back, err := model.Load(p("m.flm"), gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	_, te, err := back.Data(ref, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, k := te.Len(), len(te.Classes)
	want, err := back.Net.Forward(te.X, n)
	if err != nil {
		t.Fatal(err)
	}
	header, idx, logits := readLogits(t, p("l.csv"))
	if !slices.Equal(header, wantHeader(k)) {
		t.Errorf("header %v, want %v", header, wantHeader(k))
	}
	if len(logits) != n {
		t.Fatalf("%d rows for %d test inputs", len(logits), n)
	}
	npy, err := data.LoadNPY(p("l.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(npy.Shape, []int{n, k}) {
		t.Fatalf(".npy of shape %v, want [%d %d]", npy.Shape, n, k)
	}
	for i, row := range logits {
		if idx[i][0] != i || idx[i][1] != te.Y[i] {
			t.Fatalf("row %d: input %d, label %d; want %d, %d", i, idx[i][0], idx[i][1], i, te.Y[i])
		}
		if got := idx[i][2]; got != engine.Argmax(row) {
			t.Fatalf("row %d: predicted %d, the logits' argmax is %d", i, got, engine.Argmax(row))
		}
		for c, v := range row {
			w := want[i*k+c]
			if math.Abs(float64(v-w)) > 1e-5*math.Max(1, math.Abs(float64(w))) {
				t.Fatalf("input %d, logit %d: %g, the forward pass gives %g", i, c, v, w)
			}
			if npy.Data[i*k+c] != v {
				t.Fatalf("input %d, logit %d: %g in the .npy, %g in the .csv", i, c, npy.Data[i*k+c], v)
			}
		}
	}
}

// eval --logits refuses, before the model is opened (the path here does
// not exist, so a later check would report that instead), a file that is
// neither .csv nor .npy, a folder, a missing folder, and a symbolic link,
// dangling or not, which it neither follows nor replaces (a named pipe:
// TestNamedPipeWhereAFileShouldBeIsRefusedNotWaitedOn).
func TestEvalLogitsRefusesWhatIsNoFileToReplace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	if err := os.Mkdir(p("folder.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	victim := p("victim.txt")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ link, to string }{{"link.csv", victim}, {"dangling.npy", p("made-through-the-link")}} {
		if err := os.Symlink(l.to, p(l.link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ out, want string }{
		{p("l.txt"), "want a .csv or .npy file"},
		{p("folder.csv"), "is a folder"},
		{p("missing/l.csv"), "missing"},
		{p("link.csv"), "is a symbolic link"},
		{p("dangling.npy"), "is a symbolic link"},
	} {
		err := runEval(ctx, []string{"--model", p("nonexistent.flm"), "--dataset", "gmm", "--logits", tc.out})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--logits %s: %v, want an error saying %q", tc.out, err, tc.want)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	if _, err := os.Lstat(p("made-through-the-link")); err == nil {
		t.Error("a file was made through the dangling link")
	}
}

// eval --logits gives PyTorch's logits (float64, on the same weights, after
// the description's normalisation) for one PyTorch module opened as ONNX
// on the native engine and as TorchScript on the torch engine, on an .npz
// dataset: to 1e-5 of the largest logit, and the class PyTorch predicts
// wherever its two largest logits are apart. Class names with a slash, a
// comma and a quote leave the header to the classes' indices.
func TestEvalLogitsMatchPyTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("exports a module with PyTorch and starts a PyTorch worker")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("/usr/bin/python3 cannot import torch (%v)", err)
	}
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	if out, err := exec.Command("/usr/bin/python3", filepath.Join("..", "..", "testdata", "torch", "make_logits.py"), dir).CombinedOutput(); err != nil {
		t.Fatalf("make_logits.py: %v\n%s", err, out)
	}
	ref, err := data.LoadNPY(p("logits.npy"))
	if err != nil {
		t.Fatal(err)
	}
	n, k := ref.Shape[0], ref.Shape[1]
	scale := 0.0
	for _, v := range ref.Data {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	ctx := context.Background()
	for _, tc := range []struct{ model, engine, out string }{
		{"model.onnx", "native", "onnx.csv"},
		{"model.pt", "torch", "torchscript.csv"},
	} {
		if err := runEval(ctx, []string{"--model", p(tc.model), "--engine", tc.engine, "--dataset", p("data.npz"), "--logits", p(tc.out)}); err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
		header, idx, logits := readLogits(t, p(tc.out))
		if !slices.Equal(header, wantHeader(k)) || len(logits) != n {
			t.Fatalf("%s: header %v and %d rows, want %v and %d", tc.model, header, len(logits), wantHeader(k), n)
		}
		worst := 0.0
		for i, row := range logits {
			want := ref.Data[i*k : (i+1)*k]
			for c, v := range row {
				worst = math.Max(worst, math.Abs(float64(v-want[c]))/scale)
			}
			sorted := slices.Sorted(slices.Values(want))
			if sorted[k-1]-sorted[k-2] > 1e-4*float32(scale) && idx[i][2] != engine.Argmax(want) {
				t.Errorf("%s: input %d predicted %d, PyTorch %d", tc.model, i, idx[i][2], engine.Argmax(want))
			}
		}
		t.Logf("%s on %s: logits within %.2g of PyTorch's (relative to the largest)", tc.model, tc.engine, worst)
		if worst > 1e-5 {
			t.Errorf("%s on %s: logits differ from PyTorch's by %.3g of the largest", tc.model, tc.engine, worst)
		}
	}
}
