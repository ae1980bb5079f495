package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faithlab/core/data"

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
	l, err := r.Read()
	if err != nil || len(l.Records) != 2 || l.Records[1].Task != "b" || l.Records[1].Result.Protocol != "P" {
		t.Fatalf("records %+v, %v", l.Records, err)
	}
	if len(l.Damaged) != 1 || l.Damaged[0].Line != 3 || !strings.Contains(l.Notes()[0], "line 3: cut short") {
		t.Fatalf("damage %+v", l.Notes())
	}
	if err := r.Repair(l); err != nil {
		t.Fatal(err)
	}
	if err := r.Append(Record{Task: "c", Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	l, err = r.Read()
	if err != nil || len(l.Records) != 3 || len(l.Damaged) != 0 || Latest(l.Records)["c"].Error != "boom" {
		t.Fatalf("after the next append: %+v, %v", l, err)
	}
	if kept, _ := os.ReadFile(r.ResultsPath() + ".damaged"); string(kept) != `{"task":"c","res`+"\n" {
		t.Errorf("the cut-short line kept aside: %q", kept)
	}
}

// One flipped bit anywhere in a results file — in a value, a name, a
// checksum, a brace or an end of line — is reported, never read as a
// record: a digit of a curve changed by a flipped bit (0.108 → 0.188) was
// once resumed and exported without a word.
func TestEveryBitFlipInTheResultsIsCaught(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, []byte("spec"))
	if err != nil {
		t.Fatal(err)
	}
	for i, task := range []string{"a", "b"} {
		res := &protocol.Result{Protocol: "ROAR", Scalars: []protocol.Scalar{{Name: "auc", Value: 0.108}}, Curves: []protocol.Curve{{Name: "acc", X: protocol.Values{0, 0.5}, Y: protocol.Values{0.9, 0.108}}}}
		if err := r.Append(Record{Task: task, Label: "l", Seed: uint64(i), Result: res, Seconds: 1.5}); err != nil {
			t.Fatal(err)
		}
	}
	whole, _ := os.ReadFile(r.ResultsPath())
	l, err := r.Read()
	if err != nil || len(l.Records) != 2 || len(l.Notes()) != 0 {
		t.Fatalf("the whole file: %+v %v", l.Notes(), err)
	}
	missed := 0
	for i := range whole {
		for bit := range 8 {
			b := bytes.Clone(whole)
			b[i] ^= 1 << bit
			os.WriteFile(r.ResultsPath(), b, 0o644)
			l, err := r.Read()
			if err == nil && len(l.Damaged) == 0 {
				if missed++; missed < 5 {
					t.Errorf("a flip of bit %d at byte %d (%q) went unnoticed: %d records", bit, i, whole[max(0, i-10):min(len(whole), i+10)], len(l.Records))
				}
			}
		}
	}
	if missed > 0 {
		t.Errorf("%d of %d flips unnoticed", missed, 8*len(whole))
	}
}

// Records from before checksums (or with theirs removed) are read with a
// note saying so; a repair writes them again with sums but keeps them
// marked unchecked, and only Accept (the user's word) drops the mark.
func TestRecordsWithoutChecksumsStayUncheckedUntilAccepted(t *testing.T) {
	dir := t.TempDir()
	r, _ := Open(dir, []byte("spec"))
	os.WriteFile(r.ResultsPath(), []byte(`{"task":"a","label":"x","seed":1,"seconds":2,"faithlab_version":"0.1.0"}`+"\n"), 0o644)
	l, err := r.Read()
	if err != nil || len(l.Records) != 1 || l.Unchecked != 1 || !strings.Contains(strings.Join(l.Notes(), ""), "without a checksum (the first: "+r.ResultsPath()+" line 1)") {
		t.Fatalf("%+v %v", l, err)
	}
	if err := r.Repair(l); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(r.ResultsPath())
	if !bytes.Contains(b, []byte(`"unchecked":"`+r.ResultsPath()+` line 1","sum":"`)) {
		t.Errorf("after the repair the line is %s, want its mark under a checksum", b)
	}
	l, err = r.Read()
	if err != nil || len(l.Records) != 1 || l.Unchecked != 1 || len(l.Notes()) != 1 || l.Records[0].Task != "a" {
		t.Fatalf("after the repair: %+v %v", l, err)
	}
	// The mark cannot be dropped by hand: the line's checksum covers it.
	os.WriteFile(r.ResultsPath(), bytes.Replace(b, []byte(`,"unchecked":"`+r.ResultsPath()+` line 1"`), nil, 1), 0o644)
	if l, _ := r.Read(); len(l.Damaged) != 1 || len(l.Records) != 0 {
		t.Errorf("a mark cut out by hand: %+v", l)
	}
	os.WriteFile(r.ResultsPath(), b, 0o644)
	if n := l.Accept(); n != 1 {
		t.Errorf("accepted %d", n)
	}
	if err := r.Repair(l); err != nil {
		t.Fatal(err)
	}
	if l, err := r.Read(); err != nil || len(l.Records) != 1 || l.Unchecked != 0 || len(l.Notes()) != 0 {
		t.Errorf("after Accept: %+v %v", l, err)
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

// A cluster script makes shards/ for its logs before any shard runs: the
// campaign's folder is still new to Open, and the logs are kept.
func TestOpenAcceptsAFolderHoldingOnlyTheShardLogs(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "shards")
	os.Mkdir(logs, 0o755)
	os.WriteFile(filepath.Join(logs, "slurm-1_0.out"), []byte("log"), 0o644)
	if _, err := Open(dir, []byte("spec")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(logs, "slurm-1_0.out")); err != nil || string(b) != "log" {
		t.Errorf("the shard's log: %q, %v", b, err)
	}
}

// A folder is written only when it is new, empty or a run of the same
// spec, and every check runs before the first write: a folder of the
// user's (other files), or one holding a lock and a broken manifest, is
// left byte for byte as it was.
func TestOpenWritesNothingIntoAFolderItRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		link  string // a file given a second name in the folder
		want  string
	}{
		{"the user's folder", map[string]string{"thesis.tex": `\section{}`}, "", "holds no Faithlab run"},
		{"a lock and a broken manifest", map[string]string{"spec.yaml": "spec", "lock": "process 1 on x\n", "manifest.json": "{oops"}, "", "manifest.json"},
		{"a results file with two names", map[string]string{"spec.yaml": "spec"}, "results.jsonl", "has 2 names"},
	} {
		dir := t.TempDir()
		for name, text := range tc.files {
			os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
		}
		if tc.link != "" {
			other := filepath.Join(t.TempDir(), "mine.txt")
			os.WriteFile(other, []byte("mine"), 0o644)
			if err := os.Link(other, filepath.Join(dir, tc.link)); err != nil {
				t.Skip(err)
			}
		}
		before := snapshot(dir)
		if _, err := Open(dir, []byte("spec")); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
		if after := snapshot(dir); after != before {
			t.Errorf("%s: the folder changed:\n%s\nwas\n%s", tc.name, after, before)
		}
	}
}

// snapshot lists a folder's names and contents.
func snapshot(dir string) string {
	var b strings.Builder
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		c, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %q\n", e.Name(), c)
	}
	return b.String()
}

// A run folder someone sent whose lock (or results file, spec or cache)
// links to a file of the user's is refused, and the file keeps its bytes:
// a lock that was a symbolic link once emptied its target, and the run
// exited 0.
func TestALinkInTheRunFolderIsRefusedAndItsTargetKeepsItsBytes(t *testing.T) {
	for _, name := range []string{"lock", "results.jsonl", "spec.yaml", "cache"} {
		dir := t.TempDir()
		target := filepath.Join(t.TempDir(), "precious.txt")
		os.WriteFile(target, []byte("fourteen bytes"), 0o644)
		if name != "spec.yaml" {
			os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte("spec"), 0o644)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skip(err)
		}
		if _, err := Open(dir, []byte("spec")); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("%s: Open: %v", name, err)
		}
		r := &Run{Dir: dir}
		switch name {
		case "lock":
			if unlock, err := r.Lock(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("Lock: %v", err)
				if unlock != nil {
					unlock()
				}
			}
			os.Remove(filepath.Join(dir, "lock"))
			os.Link(target, filepath.Join(dir, "lock"))
			if unlock, err := r.Lock(); err == nil || !strings.Contains(err.Error(), "2 names") {
				t.Errorf("Lock of a hard link: %v", err)
				if unlock != nil {
					unlock()
				}
			}
		case "results.jsonl":
			if err := r.Append(Record{Task: "x"}); err == nil {
				t.Errorf("Append through a link")
			}
		}
		if b, _ := os.ReadFile(target); string(b) != "fourteen bytes" {
			t.Errorf("%s: the link's target now holds %q", name, b)
		}
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

// Entries of older Faithlabs (the bare artefact, or a checksum without
// the key) cannot say which request they answer: they are moved aside and
// rebuilt. So are entries swapped among their names, each with a valid
// checksum of its own: served as they were, one method's maps stood in for
// another's and every result changed with exit 0.
func TestOldAndSwappedEntriesAreMovedAside(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	k := Key("old")
	p := c.Path(k, ".npy")
	os.MkdirAll(filepath.Dir(p), 0o755)
	for _, old := range []string{"\x93NUMPY old entry", "FLCACHE1" + strings.Repeat("s", 32) + "\x93NUMPY"} {
		os.WriteFile(p, []byte(old), 0o644)
		if b, ok, err := c.Get(k, ".npy"); ok || b != nil || err == nil || !strings.Contains(err.Error(), "older Faithlab") {
			t.Errorf("old entry %q: %q %v %v", old[:8], b, ok, err)
		}
	}
	a, b := Key("maps", "gradient"), Key("maps", "random")
	c.Put(a, ".npy", []byte("gradient maps"))
	c.Put(b, ".npy", []byte("random maps"))
	ea, _ := os.ReadFile(c.Path(a, ".npy"))
	eb, _ := os.ReadFile(c.Path(b, ".npy"))
	os.WriteFile(c.Path(a, ".npy"), eb, 0o644)
	os.WriteFile(c.Path(b, ".npy"), ea, 0o644)
	for _, k := range []string{a, b} {
		got, ok, err := c.Get(k, ".npy")
		var dmg *DamagedError
		if ok || got != nil || !errors.As(err, &dmg) || !strings.Contains(err.Error(), "answers another request") {
			t.Errorf("swapped entry %s: %q %v %v", k[:8], got, ok, err)
		}
	}
	// The same bytes under another extension answer another request too.
	c.Put(a, ".npy", []byte("gradient maps"))
	e, _ := os.ReadFile(c.Path(a, ".npy"))
	os.WriteFile(c.Path(a, ".flm"), e, 0o644)
	if _, ok, err := c.Get(a, ".flm"); ok || err == nil {
		t.Errorf("an entry under another extension: %v %v", ok, err)
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
	if _, err := r.Manifest(); err == nil || !strings.Contains(err.Error(), r.manifestPath()) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("manifest: %v", err)
	}
	os.Remove(r.specPath())
	os.Symlink("/dev/zero", r.specPath())
	if _, err := Open(dir, []byte("spec")); err == nil || !strings.Contains(err.Error(), r.specPath()) {
		t.Errorf("spec: %v", err)
	}
	if _, _, err := OpenExisting(dir); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("existing: %v", err)
	}
}

// GetNPY streams an array from its entry with the checks Get makes: a
// whole entry reads back, a damaged, cut-short, swapped or old one is
// moved aside and reported.
func TestGetNPYStreamsWithGetsChecks(t *testing.T) {
	var buf bytes.Buffer
	vals := []float32{1, 2, 3, 4, 5, 6}
	if err := data.EncodeNPY(&buf, []int{2, 3}, vals); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		damage func(c *Cache, k, p string)
		want   string
	}{
		{"whole", func(*Cache, string, string) {}, ""},
		{"a flipped bit", func(_ *Cache, _, p string) { b, _ := os.ReadFile(p); b[len(b)-3] ^= 8; os.WriteFile(p, b, 0o644) }, "does not match"},
		{"cut short", func(_ *Cache, _, p string) { b, _ := os.ReadFile(p); os.WriteFile(p, b[:len(b)-4], 0o644) }, "does not match"},
		{"trailing bytes", func(_ *Cache, _, p string) { b, _ := os.ReadFile(p); os.WriteFile(p, append(b, 0), 0o644) }, "does not match"},
		{"swapped", func(c *Cache, _, p string) {
			other := Key("other")
			c.Put(other, ".npy", buf.Bytes())
			b, _ := os.ReadFile(c.Path(other, ".npy"))
			os.WriteFile(p, b, 0o644)
		}, "answers another request"},
		{"old", func(_ *Cache, _, p string) { os.WriteFile(p, buf.Bytes(), 0o644) }, "older Faithlab"},
		{"empty", func(_ *Cache, _, p string) { os.WriteFile(p, nil, 0o644) }, "empty"},
	} {
		c := &Cache{Dir: t.TempDir()}
		k := Key("maps", tc.name)
		c.Put(k, ".npy", buf.Bytes())
		tc.damage(c, k, c.Path(k, ".npy"))
		a, ok, err := c.GetNPY(k)
		if tc.want == "" {
			if !ok || err != nil || !slices.Equal(a.Data, vals) || !slices.Equal(a.Shape, []int{2, 3}) {
				t.Errorf("%s: %+v %v %v", tc.name, a, ok, err)
			}
			continue
		}
		var dmg *DamagedError
		if ok || !errors.As(err, &dmg) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ok %v, %v", tc.name, ok, err)
		}
		if _, err := os.Stat(c.Path(k, ".npy") + ".damaged"); err != nil {
			t.Errorf("%s: not moved aside", tc.name)
		}
	}
}
