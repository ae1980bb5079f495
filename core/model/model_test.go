package model

import (
	"os"
	"path/filepath"
	"testing"

	"faithlab/core/data"
	"faithlab/core/engine/gemm"
)

func tiny(t testing.TB) *Model {
	ds, err := data.GaussianMixture{Dim: 4, Samples: 8}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	m, err := New("mlp", ds, gemm.Gonum{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRoundTrip(t *testing.T) {
	m := tiny(t)
	p := filepath.Join(t.TempDir(), "m.flm")
	if err := m.Save(p); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p, gemm.Gonum{})
	if err != nil {
		t.Fatal(err)
	}
	for i, pa := range m.Net.Params() {
		pb := got.Net.Params()[i]
		for j := range pa.Data {
			if pa.Data[j] != pb.Data[j] {
				t.Fatalf("%s[%d]: %g != %g", pa.Name, j, pa.Data[j], pb.Data[j])
			}
		}
	}
}

func TestCorruptFiles(t *testing.T) {
	good, err := tiny(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	flip := append([]byte(nil), good...)
	flip[20] = '!'
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"magic", append([]byte("NOTMODEL"), good[8:]...)},
		{"truncated header", good[:40]},
		{"truncated weights", good[:len(good)-3]},
		{"trailing", append(append([]byte(nil), good...), 1, 2, 3, 4)},
		{"bad json", flip},
	} {
		if _, err := Decode(tc.b, gemm.Gonum{}); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func FuzzDecode(f *testing.F) {
	good, err := tiny(f).Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "model", "mlp-gmm.flm")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		Decode(b, gemm.Gonum{}) // must not panic
	})
}
