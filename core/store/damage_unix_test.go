//go:build unix

package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// peakHeap is the most heap f's objects took at once, sampled every
// millisecond above what they took before (garbage not yet collected
// included: what the process would hold).
func peakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base, peak := read(), atomic.Uint64{}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	return peak.Load() - min(base, peak.Load())
}

// appendRaw appends raw lines to a run's results file.
func appendRaw(t *testing.T, r *Run, write func(w *bufio.Writer)) {
	t.Helper()
	f, err := os.OpenFile(r.ResultsPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	write(w)
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// Two million junk lines appended to a results file (4 MB) are counted,
// not held: the first few are described and the rest summed up in one
// note, Read and Repair each allocate under 100 MB, and Repair still sets
// every one of them aside. Status once took 761 MB and printed two million
// warnings.
func TestMillionsOfJunkLinesAreCountedNotHeld(t *testing.T) {
	r, err := Open(t.TempDir(), []byte("spec"))
	if err != nil {
		t.Fatal(err)
	}
	r.Append(Record{Task: "a"})
	const junk = 2_000_000
	appendRaw(t, r, func(w *bufio.Writer) {
		for range junk {
			w.WriteString("x\n")
		}
	})
	r.Append(Record{Task: "b"})
	var l Log
	n := peakHeap(func() { l, err = r.Read() })
	t.Logf("Read: %d MB of heap at most", n>>20)
	if n > 100<<20 {
		t.Errorf("Read took %d MB of heap for %d junk lines", n>>20, junk)
	}
	if err != nil || len(l.Records) != 2 || l.DamagedLines() != junk || len(l.Damaged) != shownDamage {
		t.Fatalf("%d records, %d damaged lines (%d described), %v", len(l.Records), l.DamagedLines(), len(l.Damaged), err)
	}
	notes := l.Notes()
	want := fmt.Sprintf("and %d more damaged lines, up to line %d", junk-shownDamage, junk+1)
	if len(notes) != shownDamage+1 || !strings.Contains(notes[shownDamage], want) || !strings.Contains(notes[0], "line 2: not a record") {
		t.Errorf("notes %q, want %d lines ending %q", notes, shownDamage+1, want)
	}
	if n := peakHeap(func() { err = r.Repair(l) }); err != nil || n > 100<<20 {
		t.Fatalf("Repair: %v, %d MB of heap", err, n>>20)
	}
	kept, _ := os.ReadFile(r.ResultsPath() + ".damaged")
	if !bytes.Equal(kept, bytes.Repeat([]byte("x\n"), junk)) {
		t.Errorf("set aside %d bytes, want the %d junk lines", len(kept), junk)
	}
	if l, err := r.Read(); err != nil || len(l.Records) != 2 || l.DamagedLines() != 0 {
		t.Errorf("after the repair: %d records, %q, %v", len(l.Records), l.Notes(), err)
	}
}

// Long junk lines of a record's shape, each under the line cap, are held
// one at a time: six of 60 MB cost what one does (its room, grown by
// doubling, and what the collector has yet to take: under 300 MB). Twenty
// of them once crashed status ("fatal error: out of memory").
func TestLongJunkLinesAreHeldOneAtATime(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 360 MB")
	}
	r, _ := Open(t.TempDir(), []byte("spec"))
	r.Append(Record{Task: "a"})
	line := append(append([]byte("{"), bytes.Repeat([]byte("a"), 60<<20)...), '\n')
	const lines = 6
	appendRaw(t, r, func(w *bufio.Writer) {
		for range lines {
			w.Write(line)
		}
	})
	var l Log
	var err error
	n := peakHeap(func() { l, err = r.Read() })
	t.Logf("Read: %d MB of heap at most", n>>20)
	if n > 300<<20 {
		t.Errorf("Read took %d MB of heap for %d lines of 60 MB", n>>20, lines)
	}
	if err != nil || len(l.Records) != 1 || l.DamagedLines() != lines || len(l.Damaged[0].Text) > keptBytes {
		t.Fatalf("%d records, %d damaged lines, %v", len(l.Records), l.DamagedLines(), err)
	}
	if n := peakHeap(func() { err = r.Repair(l) }); err != nil || n > 300<<20 {
		t.Fatalf("Repair: %v, %d MB of heap", err, n>>20)
	}
	if st, _ := os.Stat(r.ResultsPath() + ".damaged"); st == nil || st.Size() != lines*int64(len(line)) {
		t.Errorf("set aside %v, want the %d lines whole", st, lines)
	}
}

// A file whose records pass the bound on all of them together is refused
// by name, whatever each line says; a campaign's own results lie far
// under it.
func TestRecordsBeyondTheFilesBoundAreRefused(t *testing.T) {
	defer func(b int64) { maxRecordsBytes = b }(maxRecordsBytes)
	maxRecordsBytes = 64 << 10
	r, _ := Open(t.TempDir(), []byte("spec"))
	for i := range 100 {
		r.Append(Record{Task: fmt.Sprint("t", i)})
	}
	if _, err := r.Read(); err == nil || !strings.Contains(err.Error(), r.ResultsPath()) || !strings.Contains(err.Error(), "more than a campaign's results hold") {
		t.Errorf("Read of 100 records past a 64 KB bound: %v", err)
	}
}

// A line that decodes but names no task is no record (it would count as
// a task nobody planned).
func TestALineWithoutATaskIsDamage(t *testing.T) {
	r, _ := Open(t.TempDir(), []byte("spec"))
	r.Append(Record{Task: "a"})
	appendRaw(t, r, func(w *bufio.Writer) {
		line, _ := encodeLine(Record{Label: "x"})
		w.Write(line)
	})
	l, err := r.Read()
	if err != nil || len(l.Records) != 1 || l.DamagedLines() != 1 || !strings.Contains(l.Damaged[0].Err.Error(), "no task") {
		t.Errorf("%d records, %q, %v", len(l.Records), l.Notes(), err)
	}
}

// A record whose names hold a line break or another control character is
// no record Faithlab wrote (specs refuse such names): it is damage, so that
// no report, CSV, figure or screen shows it.
func TestARecordWithAControlCharacterInItsNamesIsDamage(t *testing.T) {
	r, _ := Open(t.TempDir(), []byte("spec"))
	r.Append(Record{Task: "a", Method: "gradient"})
	appendRaw(t, r, func(w *bufio.Writer) {
		for _, m := range []string{"ig\n## Verdict", "ig\x00", "ig\u202e"} {
			line, _ := encodeLine(Record{Task: "b", Method: m})
			w.Write(line)
		}
	})
	l, err := r.Read()
	if err != nil || len(l.Records) != 1 || l.DamagedLines() != 3 || !strings.Contains(l.Damaged[0].Err.Error(), "control character in its method") {
		t.Errorf("%d records, %q, %v", len(l.Records), l.Notes(), err)
	}
}
