package store

import (
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
	if m, _ := filepath.Glob(filepath.Join(c.Dir, k[:2], ".*tmp*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}
