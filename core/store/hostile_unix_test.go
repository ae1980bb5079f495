//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"faithlab/core/protocol"
)

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var a, z runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&z)
	return z.TotalAlloc - a.TotalAlloc
}

// A results file extended to a gigabyte of zeros (sparse: a few KB on
// disk, as a crash or `truncate -s` leaves it) is read as a stream: its
// records are kept, the tail is one damaged line of its true length, and
// the repair sets aside only its first bytes. It once took 2 GB of memory
// for status and wrote the gigabyte of zeros into results.jsonl.damaged.
func TestASparseResultsTailIsSetAsideWithoutHoldingIt(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, []byte("spec"))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"a", "b"} {
		if err := r.Append(Record{Task: task, Result: &protocol.Result{Protocol: "P"}}); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := os.Stat(r.ResultsPath())
	const size = 1000 << 20
	if err := os.Truncate(r.ResultsPath(), size); err != nil {
		t.Fatal(err)
	}
	var l Log
	if n := allocated(func() { l, err = r.Read() }); n > 32<<20 {
		t.Errorf("Read allocated %d MB for a sparse file", n>>20)
	}
	if err != nil || len(l.Records) != 2 || len(l.Damaged) != 1 || l.Damaged[0].Size != size-st.Size() || len(l.Damaged[0].Text) > keptBytes {
		t.Fatalf("%d records, damage %d lines, %v", len(l.Records), len(l.Damaged), err)
	}
	if n := allocated(func() { err = r.Repair(l) }); err != nil || n > 32<<20 {
		t.Fatalf("Repair: %v, %d MB allocated", err, n>>20)
	}
	kept, _ := os.Stat(r.ResultsPath() + ".damaged")
	now, _ := os.Stat(r.ResultsPath())
	if kept == nil || kept.Size() > keptBytes+1 || now.Size() != st.Size() {
		t.Errorf("set aside %v bytes, results now %d bytes (were %d)", kept, now.Size(), st.Size())
	}
	if l, err := r.Read(); err != nil || len(l.Records) != 2 || len(l.Damaged) != 0 {
		t.Errorf("after the repair: %+v %v", l.Notes(), err)
	}
}

// A line of a record's shape but longer than any record is damaged at
// its cap, and the records around it are kept.
func TestAnOverlongLineIsDamageBetweenRecords(t *testing.T) {
	dir := t.TempDir()
	r, _ := Open(dir, []byte("spec"))
	r.Append(Record{Task: "a"})
	f, _ := os.OpenFile(r.ResultsPath(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"task":"` + strings.Repeat("x", maxLineBytes) + "\"}\n")
	f.Close()
	r.Append(Record{Task: "b"})
	l, err := r.Read()
	if err != nil || len(l.Records) != 2 || len(l.Damaged) != 1 || l.Damaged[0].Line != 2 || !strings.Contains(l.Damaged[0].Err.Error(), "more than a record may hold") {
		t.Fatalf("%d records, %+v, %v", len(l.Records), l.Notes(), err)
	}
}

// A spec whose output is its own folder (output: .) and which is itself
// named spec.yaml makes that folder look like a run of it: a file of the
// user's there named lock is left alone, not emptied. A lock Faithlab
// wrote (empty, or naming its holder) is taken.
func TestAFileNamedLockThatIsNoLockIsLeftAlone(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte("spec"), 0o644)
	lock := filepath.Join(dir, "lock")
	os.WriteFile(lock, []byte("combination 12-34-56\n"), 0o644)
	r, err := Open(dir, []byte("spec"))
	if err != nil {
		t.Fatal(err)
	}
	if unlock, err := r.Lock(); err == nil || !strings.Contains(err.Error(), "not a Faithlab lock") {
		t.Errorf("Lock: %v", err)
		if unlock != nil {
			unlock()
		}
	}
	if b, _ := os.ReadFile(lock); string(b) != "combination 12-34-56\n" {
		t.Errorf("the file now holds %q", b)
	}
	for _, text := range []string{"", "process 4242 on node-1\n"} {
		os.WriteFile(lock, []byte(text), 0o644)
		unlock, err := r.Lock()
		if err != nil {
			t.Errorf("a lock holding %q: %v", text, err)
			continue
		}
		unlock()
	}
}

// A cache whose entries' folder is a link out of it is not written
// through: the entry is refused by name and nothing lands where the link
// leads; a damaged entry there is not moved either.
func TestCacheWritesNeverFollowALinkOutOfIt(t *testing.T) {
	c, elsewhere := &Cache{Dir: t.TempDir()}, t.TempDir()
	k := Key("x")
	if err := os.Symlink(elsewhere, filepath.Join(c.Dir, k[:2])); err != nil {
		t.Fatal(err)
	}
	for name, put := range map[string]func() error{
		"Put":    func() error { return c.Put(k, ".npy", []byte("v")) },
		"PutNPY": func() error { return c.PutNPY(k, []int{1}, []float32{1}) },
	} {
		if err := put(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("%s: %v", name, err)
		}
	}
	os.WriteFile(filepath.Join(elsewhere, k+".npy"), []byte("a file of the user's"), 0o644)
	if _, _, err := c.Get(k, ".npy"); err == nil {
		t.Error("Get: no error")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 1 || entries[0].Name() != k+".npy" {
		t.Errorf("the folder the link leads to holds %v", entries)
	}
}

// A read-only cache (one a merge or an export reads) reports a damaged
// entry and leaves it where it is; a foreign file in an entry's place is
// refused from its first bytes, not read whole.
func TestAReadOnlyCacheIsOnlyRead(t *testing.T) {
	c := &Cache{Dir: t.TempDir(), ReadOnly: true}
	k := Key("y")
	p := c.Path(k, ".npy")
	os.MkdirAll(filepath.Dir(p), 0o755)
	f, _ := os.Create(p)
	f.WriteString("not an entry")
	f.Truncate(512 << 20)
	f.Close()
	var err error
	if n := allocated(func() { _, _, err = c.Get(k, ".npy") }); n > 1<<20 {
		t.Errorf("Get allocated %d MB for a foreign file", n>>20)
	}
	var d *DamagedError
	if !errors.As(err, &d) || !d.ReadOnly || !strings.Contains(err.Error(), "left as it is") {
		t.Errorf("Get: %v", err)
	}
	if _, _, err := c.GetNPY(k); !errors.As(err, &d) || !d.ReadOnly {
		t.Errorf("GetNPY: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(p)); len(entries) != 1 {
		t.Errorf("the entry's folder holds %d files: moved aside", len(entries))
	}
}
