package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faithlab/core/protocol"
)

func TestRecordsSurviveACutShortWrite(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, []byte("spec"))
	if err != nil {
		t.Fatal(err)
	}
	for i, task := range []string{"a", "b"} {
		if err := r.Append(Record{Task: task, Seed: uint64(i), Result: &protocol.Result{Protocol: "P"}}); err != nil {
			t.Fatal(err)
		}
	}
	// A kill in the middle of the third record.
	f, _ := os.OpenFile(r.ResultsPath(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"task":"c","res`)
	f.Close()
	recs, err := r.Records()
	if err != nil || len(recs) != 2 || recs[1].Task != "b" || recs[1].Result.Protocol != "P" {
		t.Fatalf("records %+v, %v", recs, err)
	}
	if err := r.Append(Record{Task: "c", Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	recs, err = r.Records()
	if err != nil || len(recs) != 3 || Latest(recs)["c"].Error != "boom" {
		t.Fatalf("after the next append: %+v, %v", recs, err)
	}
	// Damage before the last line is an error naming the line.
	b, _ := os.ReadFile(r.ResultsPath())
	os.WriteFile(r.ResultsPath(), append([]byte("{oops\n"), b...), 0o644)
	if _, err := r.Records(); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("damaged file: %v", err)
	}
}

func TestOpenRefusesAnotherSpec(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, []byte("one")); err != nil {
		t.Errorf("same spec: %v", err)
	}
	if _, err := Open(dir, []byte("two")); err == nil || !strings.Contains(err.Error(), "another campaign") {
		t.Errorf("other spec: %v", err)
	}
	if _, _, err := OpenExisting(filepath.Join(dir, "nothing")); err == nil {
		t.Error("a folder without a spec opened as a run")
	}
}

func TestCache(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	k := Key("maps", 1, "gradient")
	if k != Key("maps", 1, "gradient") || k == Key("maps", 2, "gradient") || len(k) != 64 {
		t.Fatalf("keys %s", k)
	}
	if _, ok, err := c.Get(k, ".npy"); ok || err != nil {
		t.Fatalf("empty cache: %v %v", ok, err)
	}
	if err := c.Put(k, ".npy", []byte("data")); err != nil {
		t.Fatal(err)
	}
	b, ok, err := c.Get(k, ".npy")
	if !ok || err != nil || string(b) != "data" {
		t.Errorf("get %q %v %v", b, ok, err)
	}
	if raw, _ := os.ReadFile(c.Path(k, ".npy")); !bytes.HasPrefix(raw, []byte(entryMagic)) || !bytes.HasSuffix(raw, []byte("data")) {
		t.Errorf("entry on disk %q: want the checksum header, then the bytes", raw)
	}
	if m, _ := filepath.Glob(filepath.Join(c.Dir, k[:2], ".*tmp*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// Every way an entry can be damaged on disk is found by Get, reported by
// path and moved aside, after which the cache misses it and a Put heals it.
func TestDamagedCacheEntriesAreReportedAndMovedAside(t *testing.T) {
	payload := bytes.Repeat([]byte("model bytes "), 100)
	for _, tc := range []struct {
		name   string
		damage func(path string, entry []byte) error
		want   string
	}{
		{"truncated", func(p string, e []byte) error { return os.Truncate(p, int64(len(e)/2)) }, "does not match"},
		{"truncated to nothing", func(p string, e []byte) error { return os.Truncate(p, 0) }, "empty"},
		{"truncated in its header", func(p string, e []byte) error { return os.Truncate(p, 20) }, "cut short in its header"},
		{"a flipped bit", func(p string, e []byte) error {
			e[len(e)-7] ^= 4
			return os.WriteFile(p, e, 0o644)
		}, "does not match"},
		{"a flipped bit in the checksum", func(p string, e []byte) error {
			e[len(entryMagic)+3] ^= 1
			return os.WriteFile(p, e, 0o644)
		}, "does not match"},
		{"trailing bytes", func(p string, e []byte) error { return os.WriteFile(p, append(e, 0), 0o644) }, "does not match"},
		{"a folder in its place", func(p string, e []byte) error {
			os.Remove(p)
			return os.Mkdir(p, 0o755)
		}, "is a folder"},
	} {
		c := &Cache{Dir: t.TempDir()}
		k := Key(tc.name)
		if err := c.Put(k, ".flm", payload); err != nil {
			t.Fatal(err)
		}
		p := c.Path(k, ".flm")
		entry, _ := os.ReadFile(p)
		if err := tc.damage(p, entry); err != nil {
			t.Fatal(err)
		}
		b, ok, err := c.Get(k, ".flm")
		var dmg *DamagedError
		if ok || b != nil || !errors.As(err, &dmg) {
			t.Errorf("%s: got %d bytes, ok %v, error %v; want a DamagedError", tc.name, len(b), ok, err)
			continue
		}
		if dmg.Path != p || dmg.Moved != p+".damaged" || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %q (path %s, moved to %s)", tc.name, err, dmg.Path, dmg.Moved)
		}
		if _, err := os.Stat(p + ".damaged"); err != nil {
			t.Errorf("%s: not moved aside: %v", tc.name, err)
		}
		// Now a miss, and a Put heals it.
		if _, ok, err := c.Get(k, ".flm"); ok || err != nil {
			t.Errorf("%s: after moving aside: ok %v, %v", tc.name, ok, err)
		}
		if err := c.Put(k, ".flm", payload); err != nil {
			t.Fatal(err)
		}
		if b, ok, err := c.Get(k, ".flm"); !ok || err != nil || !bytes.Equal(b, payload) {
			t.Errorf("%s: after the rebuild: ok %v, %v", tc.name, ok, err)
		}
	}
}

// Entries written before checksums (the bare artefact) are read as they
// are; MoveAside is there for a caller that finds one unusable.
func TestEntriesWithoutChecksumAreReadAndCanBeMovedAside(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	k := Key("old")
	p := c.Path(k, ".npy")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("\x93NUMPY old entry"), 0o644)
	b, ok, err := c.Get(k, ".npy")
	if !ok || err != nil || string(b) != "\x93NUMPY old entry" {
		t.Fatalf("old entry: %q %v %v", b, ok, err)
	}
	dmg := c.MoveAside(k, ".npy", errors.New("cut short"))
	if dmg.Moved != p+".damaged" || !strings.Contains(dmg.Error(), "cut short") {
		t.Errorf("%v", dmg)
	}
	if _, ok, err := c.Get(k, ".npy"); ok || err != nil {
		t.Errorf("after moving aside: %v %v", ok, err)
	}
}

// A run folder's spec or manifest that is not a small regular file is
// refused with its path, not read without bound.
func TestRunFilesAreBoundedAndNamed(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, []byte("spec"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", r.manifestPath()); err != nil {
		t.Skip(err)
	}
	if _, err := r.Manifest(); err == nil || !strings.Contains(err.Error(), r.manifestPath()) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("manifest: %v", err)
	}
	os.Remove(r.specPath())
	os.Symlink("/dev/zero", r.specPath())
	if _, err := Open(dir, []byte("spec")); err == nil || !strings.Contains(err.Error(), r.specPath()) {
		t.Errorf("spec: %v", err)
	}
	if _, _, err := OpenExisting(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("existing: %v", err)
	}
}
