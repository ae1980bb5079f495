package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"faithlab/core/data"
	"faithlab/core/protocol"
)

// FuzzRunFolder: whatever a run folder someone sent holds — its results
// file, its manifest, a cache entry (whose header, the key it answers and
// its SHA-256, is the cache's only index) — the store neither panics nor
// takes damage for a record or an entry: a results file read, repaired and
// read again holds the same records, each still marked unchecked where it
// was, and no damage; a cache entry is served only when its header checks
// out, and then its body exactly.
func FuzzRunFolder(f *testing.F) {
	var results bytes.Buffer
	for i, rec := range []Record{
		{Task: "a", Label: "gradient", Seed: 1, Result: &protocol.Result{Protocol: "Deletion", Scalars: []protocol.Scalar{{Name: "auc", Value: 0.25}}}},
		{Task: "b", Error: "boom", Unchecked: "shards/0-of-2/results.jsonl line 2"},
	} {
		line, err := encodeLine(rec)
		if err != nil {
			f.Fatal(err)
		}
		if i == 1 {
			results.Write(line)
			results.WriteString(`{"task":"c","seed":2,"seconds":1,"faithlab_version":"0.1.0"}` + "\n")
		} else {
			results.Write(line)
		}
	}
	key := Key("fuzz")
	raw, _ := hex.DecodeString(key)
	sumOf := func(body []byte) []byte {
		s := entrySum(raw, ".npy", body)
		return s[:]
	}
	entry := func(body []byte) []byte { return slices.Concat([]byte(entryMagic), raw, sumOf(body), body) }
	var npy bytes.Buffer
	data.EncodeNPY(&npy, []int{2, 2}, []float32{1, 2, 3, 4})
	f.Add(results.Bytes(), []byte(`{"id":"x","spec":"y","cache":"/tmp/c","seeds":[1],"tasks":2}`), entry(npy.Bytes()))
	f.Add([]byte("{\"task\":\"a\"}\n\x00\x00\x00"), []byte("{"), entry(nil)[:40])
	f.Add([]byte(`{"task":"a","sum":"`+string(bytes.Repeat([]byte("0"), 64))+`"}`+"\n"), []byte("null"), []byte("FLCACHE1"))
	f.Fuzz(func(t *testing.T, results, manifest, cached []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte("spec"), 0o644)
		os.WriteFile(filepath.Join(dir, "results.jsonl"), results, 0o644)
		os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644)
		r := &Run{Dir: dir}
		r.Manifest()
		Open(dir, []byte("spec"))
		l, err := r.Read()
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if err := r.Repair(l); err != nil {
			t.Fatalf("Repair of what Read accepted: %v", err)
		}
		again, err := r.Read()
		if err != nil || len(again.Damaged) != 0 || len(again.Records) != len(l.Records) || again.Unchecked != l.Unchecked {
			t.Fatalf("after Repair: %d records (was %d), %d unchecked (was %d), damage %v, %v",
				len(again.Records), len(l.Records), again.Unchecked, l.Unchecked, again.Notes(), err)
		}
		for i := range l.Records {
			if again.Records[i].Task != l.Records[i].Task || again.Records[i].Unchecked != l.Records[i].Unchecked {
				t.Fatalf("record %d changed in the repair: %+v, was %+v", i, again.Records[i], l.Records[i])
			}
		}

		c := &Cache{Dir: filepath.Join(dir, "cache")}
		p := c.Path(key, ".npy")
		os.MkdirAll(filepath.Dir(p), 0o755)
		valid := len(cached) >= entryHead && bytes.HasPrefix(cached, []byte(entryMagic)) &&
			bytes.Equal(cached[len(entryMagic):len(entryMagic)+sha256.Size], raw) &&
			bytes.Equal(cached[len(entryMagic)+sha256.Size:entryHead], sumOf(cached[entryHead:]))
		os.WriteFile(p, cached, 0o644)
		b, ok, err := c.Get(key, ".npy")
		var damaged *DamagedError
		switch {
		case ok != valid:
			t.Fatalf("Get served %v an entry whose header checks %v (%v)", ok, valid, err)
		case ok && !bytes.Equal(b, cached[entryHead:]):
			t.Fatal("Get served other bytes than the entry's body")
		case !ok && !errors.As(err, &damaged):
			t.Fatalf("Get of a bad entry: %v, want a *DamagedError", err)
		}
		os.WriteFile(p, cached, 0o644)
		if a, ok, err := c.GetNPY(key); ok && (err != nil || len(a.Data) != size(a.Shape) || !valid) {
			t.Fatalf("GetNPY served an array of shape %v holding %d values (entry valid %v)", a.Shape, len(a.Data), valid)
		}
	})
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
