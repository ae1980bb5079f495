package model

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// FuzzDecode: no input makes Decode panic. The seeds are small (a
// logistic regression on 3 features, a few hundred bytes) so that the
// fuzzer's minimisation stays fast.
func FuzzDecode(f *testing.F) {
	small := smallModel(f)
	good, err := small.Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(legacy(f, good))
	f.Fuzz(func(t *testing.T, b []byte) {
		Decode(b, gemm.Gonum{}) // must not panic
	})
}

// smallModel is a logistic regression on 3 features and 2 classes: 8
// weights, a file of a few hundred bytes.
func smallModel(t testing.TB) *Model {
	ds := &data.Dataset{Name: "s", Shape: []int{3, 1, 1}, Classes: []string{"no", "yes"}}
	m, err := New("logreg", ds, gemm.Gonum{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// legacy turns a file Encode wrote into a version 1 file from before
// checksums: no "checksum" in the header, nothing after the weights.
func legacy(t testing.TB, b []byte) []byte {
	hl := int(binary.LittleEndian.Uint32(b[12:]))
	h := bytes.Replace(b[16:16+hl], []byte(`,"checksum":"crc32c"`), nil, 1)
	if len(h) == hl {
		t.Fatal("no checksum key in the header")
	}
	out := append([]byte(nil), b[:12]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(h)))
	out = append(out, h...)
	return append(out, b[16+hl:len(b)-4]...)
}

func TestEveryFlippedBitOfAModelFileIsRefused(t *testing.T) {
	good, err := smallModel(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(good, gemm.Gonum{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "m.flm")
	b := make([]byte, len(good))
	for bit := range 8 * len(good) {
		copy(b, good)
		b[bit/8] ^= 1 << (bit % 8)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p, gemm.Gonum{})
		if err == nil {
			t.Errorf("bit %d (byte %d of %d) flipped: loaded", bit, bit/8, len(good))
		} else if !strings.Contains(err.Error(), p) {
			t.Errorf("bit %d flipped: error %q does not name the file", bit, err)
		}
	}
	// A damaged weight or class name reads as damage, not as something else.
	copy(b, good)
	b[len(b)-5] ^= 1 // the last weight
	if _, err := Decode(b, gemm.Gonum{}); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("flipped weight: %v", err)
	}
	copy(b, good)
	b[bytes.Index(b, []byte(`"yes"`))+1] ^= 1 // "yes" → "xes"
	if _, err := Decode(b, gemm.Gonum{}); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("flipped class name: %v", err)
	}
}

// Files without a checksum (from before checksums, or with it removed or
// set to "") load, marked Unchecked, and a front end says so naming the
// file; a file with one says nothing.
func TestVersion1FilesWithoutChecksumStillLoadWithANotice(t *testing.T) {
	m := smallModel(t)
	good, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	old := legacy(t, good)
	got, err := Decode(old, gemm.Gonum{})
	if err != nil {
		t.Fatalf("version 1 file without checksum: %v", err)
	}
	if !got.Unchecked {
		t.Error("a file without a checksum loaded as checked")
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"old.flm": old, "good.flm": good} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		n := FileNotice(p)
		if (name == "old.flm") != (strings.Contains(n, p) && strings.Contains(n, "no checksum")) {
			t.Errorf("%s: notice %q", name, n)
		}
	}
	for i, p := range m.Net.Params() {
		for j, v := range p.Data {
			if got.Net.Params()[i].Data[j] != v {
				t.Fatalf("%s[%d] differs", p.Name, j)
			}
		}
	}
	// Saved again, it carries the checksum.
	again, err := got.Encode()
	if err != nil || !bytes.Contains(again, []byte(`"checksum":"crc32c"`)) || len(again) != len(old)+len(`,"checksum":"crc32c"`)+4 {
		t.Errorf("re-saved: %d bytes, %v", len(again), err)
	}
	// Without the checksum, what the sizes catch is still refused.
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"truncated", old[:len(old)-1]},
		{"trailing", append(append([]byte(nil), old...), 0)},
		{"unknown checksum", bytes.Replace(good, []byte(`"crc32c"`), []byte(`"sha999"`), 1)},
	} {
		if _, err := Decode(tc.b, gemm.Gonum{}); err == nil {
			t.Errorf("%s: loaded", tc.name)
		}
	}
}

func TestNonFiniteWeightsAreNeverWritten(t *testing.T) {
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		m := smallModel(t)
		m.Net.Params()[0].Data[2] = v
		p := filepath.Join(t.TempDir(), "m.flm")
		err := m.Save(p)
		if err == nil || !strings.Contains(err.Error(), "f1.weight holds") || !strings.Contains(err.Error(), "index 2") || !strings.Contains(err.Error(), p) {
			t.Errorf("%g: %v", v, err)
		}
		if _, serr := os.Stat(p); serr == nil {
			t.Errorf("%g: a file was written", v)
		}
	}
}

// headerClaiming is a checksummed model file with the given header JSON and
// n bytes of zero weights.
func headerClaiming(h string, n int) []byte {
	b := []byte(magic)
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(h)))
	b = append(append(b, h...), make([]byte, n)...)
	return binary.LittleEndian.AppendUint32(b, crc32c(b))
}

func TestHeadersClaimingMoreThanTheFileHoldsAreRefusedBeforeBuilding(t *testing.T) {
	for _, tc := range []struct {
		name, header string
		weights      int
		want         string
	}{
		// An MLP on 16 Mi inputs would allocate 8 GiB of weights.
		{"huge input, few weights", `{"arch":"mlp","input_shape":[1,4096,4096],"classes":["a","b"],"checksum":"crc32c","params":[{"name":"f1.weight","shape":[2,4]}]}`, 32, "more than the 8 weights"},
		{"a million classes", `{"arch":"logreg","input_shape":[1,1,1],"classes":[` + strings.Repeat(`"c",`, 1<<20) + `"c"],"checksum":"crc32c","params":[{"name":"f1.weight","shape":[2,1]}]}`, 8, "classes, more than"},
		{"parameters beyond the file", `{"arch":"logreg","input_shape":[1,1,2],"classes":["a","b"],"checksum":"crc32c","params":[{"name":"f1.weight","shape":[65536,65536]}]}`, 8, "more than the 8 bytes of weights"},
		{"negative dimension", `{"arch":"logreg","input_shape":[1,1,2],"classes":["a","b"],"checksum":"crc32c","params":[{"name":"f1.weight","shape":[-1,2]}]}`, 8, "shape [-1 2]"},
	} {
		b := headerClaiming(tc.header, tc.weights)
		var a, z runtime.MemStats
		runtime.ReadMemStats(&a)
		_, err := Decode(b, gemm.Gonum{})
		runtime.ReadMemStats(&z)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
		// Decoding the header's JSON costs up to some 25 times its size
		// (a million class names); building the network would cost GiBs.
		if n := z.TotalAlloc - a.TotalAlloc; n > uint64(len(b))*32+1<<20 {
			t.Errorf("%s: %d bytes allocated for a %d-byte file", tc.name, n, len(b))
		}
	}
}

func TestLoadRefusesWhatIsNotAModelFileBeforeReadingIt(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.flm")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(MaxFileBytes + 1) // sparse
	f.Close()
	other := filepath.Join(dir, "other.flm")
	os.WriteFile(other, bytes.Repeat([]byte("x"), 1<<20), 0o644)
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file"},
		{dir, "is a folder"},
		{big, "more than the 1 GiB"},
		{other, "bad magic"},
		{filepath.Join(dir, "none.flm"), "no such file"},
	} {
		var a, z runtime.MemStats
		runtime.ReadMemStats(&a)
		_, err := Load(tc.path, gemm.Gonum{})
		runtime.ReadMemStats(&z)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: %v, want an error naming it and mentioning %q", tc.path, err, tc.want)
		}
		if n := z.TotalAlloc - a.TotalAlloc; n > 64<<10 {
			t.Errorf("%s: %d bytes allocated before refusing", tc.path, n)
		}
	}
}

func TestCheckWritableRefusesBadOutputsBeforeAnyWork(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct{ path, want string }{
		{dir, "is a folder"},
		{filepath.Join(dir, "missing", "m.flm"), "no such file"},
		{filepath.Join(file, "m.flm"), "not a folder"},
	} {
		if err := CheckWritable(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: %v, want an error naming it and mentioning %q", tc.path, err, tc.want)
		}
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if err := CheckWritable(filepath.Join(ro, "m.flm")); err == nil || !strings.Contains(err.Error(), "cannot write") {
			t.Errorf("read-only folder: %v", err)
		}
	}
	if err := CheckWritable(filepath.Join(dir, "m.flm")); err != nil {
		t.Errorf("a new file in a writable folder: %v", err)
	}
	if err := CheckWritable(file); err != nil {
		t.Errorf("an existing file: %v", err)
	}
	left, _ := os.ReadDir(dir)
	for _, e := range left {
		if e.Name() != "file" && e.Name() != "ro" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// A standardisation that would divide by zero (or by a negative) is refused
// on load, not applied as infinities.
func TestStandardisationWithoutPositiveDeviationsIsRefused(t *testing.T) {
	for _, std := range []float32{0, -1} {
		m := smallModel(t)
		m.Standardization = &data.Standardization{Mean: []float32{0, 0, 0}, Std: []float32{1, std, 1}}
		b, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b, gemm.Gonum{}); err == nil || !strings.Contains(err.Error(), "standardisation of feature 1") {
			t.Errorf("deviation %g: %v", std, err)
		}
	}
}
