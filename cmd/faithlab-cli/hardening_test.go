package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
	"faithlab/core/model"
)

// Every bad attribute flag is refused with a message naming the flag,
// before the model or the dataset is opened (the model path here does not
// exist, so a check that came later would report that instead).
func TestAttributeFlagsAreValidatedBeforeAnyWork(t *testing.T) {
	out := filepath.Join(t.TempDir(), "maps.npy")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--n", "-5"}, "--n -5: want 0 (all) or more"},
		{[]string{"--offset", "-1"}, "--offset -1: want 0 or more"},
		{[]string{"--chunk", "0"}, "--chunk 0"},
		{[]string{"--method", "smoothgrad", "--noise", "NaN"}, "--noise-frac NaN: want a finite number"},
		{[]string{"--method", "smoothgrad", "--noise-frac", "-Inf"}, "--noise-frac -Inf: want a finite number"},
		{[]string{"--method", "smoothgrad", "--noise", "-0.5"}, "--noise-frac -0.5: smoothgrad takes a value ≥ 0"},
		{[]string{"--method", "smoothgrad", "--samples", "0"}, "--samples 0: smoothgrad takes a value ≥ 1"},
		{[]string{"--method", "ig", "--steps", "-3"}, "--steps -3: ig takes a value ≥ 1"},
		{[]string{"--method", "kernelshap", "--samples", "1"}, "--samples 1: kernelshap takes a value ≥ 2"},
		{[]string{"--method", "ig", "--steps", "NaN"}, `--steps "NaN": not a int`},
	} {
		args := append([]string{"--model", "/nonexistent/model.flm", "--dataset", "gmm", "--out", out}, tc.args...)
		err := runAttribute(context.Background(), args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// weightsFixture exports a small logistic regression's weights (input
// 3×1×1, 2 classes) and returns them by name.
func weightsFixture(t *testing.T, dir string) []data.NamedArray {
	t.Helper()
	m, err := model.New("logreg", &data.Dataset{Shape: []int{3, 1, 1}, Classes: []string{"a", "b"}}, gemm.Gonum{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var arrs []data.NamedArray
	for _, p := range m.Net.Params() {
		arrs = append(arrs, data.NamedArray{Name: p.Name, Shape: p.Shape, Data: append([]float32(nil), p.Data...)})
	}
	return arrs
}

func importArgs(weights, out string) []string {
	return []string{"--arch", "logreg", "--input-shape", "3,1,1", "--weights", weights, "--out", out}
}

func TestWeightsImportRefusesNonFiniteWeights(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		arrs := weightsFixture(t, dir)
		arrs[0].Data[4] = v
		w := filepath.Join(dir, "w.npz")
		if err := data.SaveNPZ(w, arrs); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "m.flm")
		err := runWeightsImport(context.Background(), importArgs(w, out))
		if err == nil || !strings.Contains(err.Error(), w) || !strings.Contains(err.Error(), "f1.weight holds") || !strings.Contains(err.Error(), "index 4") {
			t.Errorf("%g: %v", v, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%g: a model was written", v)
		}
	}
	// The same archive without the bad value imports.
	arrs := weightsFixture(t, dir)
	w := filepath.Join(dir, "ok.npz")
	data.SaveNPZ(w, arrs)
	if err := runWeightsImport(context.Background(), importArgs(w, filepath.Join(dir, "ok.flm"))); err != nil {
		t.Fatal(err)
	}
	if _, err := model.Load(filepath.Join(dir, "ok.flm"), gemm.Gonum{}); err != nil {
		t.Error(err)
	}
}

// A zip bomb in the archive — under a name the architecture does not use,
// or under one it does but declaring another shape — is refused before it
// is inflated: names first, then each array's header, then the arrays.
func TestWeightsImportChecksNamesAndShapesBeforeInflatingAnything(t *testing.T) {
	dir := t.TempDir()
	bomb := func(shape []int) []byte {
		n := 1
		for _, d := range shape {
			n *= d
		}
		var npy bytes.Buffer
		data.EncodeNPY(&npy, shape, make([]float32, n))
		return npy.Bytes()
	}
	archive := func(name string, method uint16, extra []byte, arrs []data.NamedArray) string {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, a := range arrs {
			if a.Name == strings.TrimSuffix(name, ".npy") {
				continue
			}
			w, _ := zw.Create(a.Name + ".npy")
			data.EncodeNPY(w, a.Shape, a.Data)
		}
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		w.Write(extra)
		zw.Close()
		p := filepath.Join(dir, strings.ReplaceAll(name, ".", "_")+fmt.Sprint(method)+".npz")
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	arrs := weightsFixture(t, dir)
	for _, tc := range []struct {
		name, path, want string
	}{
		{"bomb under a foreign name", archive("evil.npy", zip.Deflate, bomb([]int{1 << 23}), arrs), "expects none of: [evil]"},
		{"bomb under a parameter's name", archive("f1.weight.npy", zip.Deflate, bomb([]int{2, 1 << 22}), arrs), "zip bomb"},
		{"a parameter of another shape, 32 MiB stored", archive("f1.weight.npy", zip.Store, bomb([]int{2, 1 << 22}), arrs), "f1.weight has shape [2 4194304], logreg expects [2 3]"},
	} {
		var a, z runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		err := runWeightsImport(context.Background(), importArgs(tc.path, filepath.Join(dir, "m.flm")))
		runtime.ReadMemStats(&z)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: %v, want an error naming the file and mentioning %q", tc.name, err, tc.want)
		}
		if n := z.TotalAlloc - a.TotalAlloc; n > 4<<20 {
			t.Errorf("%s: %d bytes allocated: the bomb was inflated", tc.name, n)
		}
	}
}

// train checks --out before it opens the dataset or trains (the dataset
// here does not exist: a later check would report that instead).
func TestTrainChecksItsOutputFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct{ out, want string }{
		{filepath.Join(dir, "missing", "m.flm"), "no such file"},
		{dir, "is a folder"},
		{filepath.Join(file, "m.flm"), "not a folder"},
	} {
		err := runTrain(context.Background(), []string{"--dataset", "/nonexistent/set.csv", "--model", "logreg", "--out", tc.out})
		if err == nil || !strings.Contains(err.Error(), tc.out) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--out %s: %v, want an error naming it and mentioning %q", tc.out, err, tc.want)
		}
	}
}
