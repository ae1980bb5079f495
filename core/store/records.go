package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strings"

	"faithlab/core/data"
)

// A results line is a Record's JSON with its SHA-256 as the last member:
//
//	{"task":"…",…,"faithlab_version":"0.1.0","sum":"<64 hex digits>"}
//
// where the sum is that of the line's JSON without the sum member (the
// bytes up to the sum, then "}"). Lines from before checksums end with the
// record; they are read with a warning, and the next run that resumes the
// folder writes them again with their sums.
const sumMember = `,"sum":"`

// maxResultsBytes bounds a results file (a campaign of thousands of tasks
// holds a few MB).
const maxResultsBytes = 1 << 30

// Damage is a line of the results file that is not a whole record: cut
// short by a kill, or damaged (its checksum or its JSON wrong). Its task
// counts as not run, so that the next run does it again.
type Damage struct {
	Line int    // 1-based
	Text string // the line, as found
	Err  error
}

func (d Damage) Error() string { return fmt.Sprintf("line %d: %v", d.Line, d.Err) }

// Log is what a results file holds.
type Log struct {
	Path    string
	Records []Record // the whole, checked records, in file order
	Damaged []Damage
	// Unchecked counts records from before checksums: read as they are,
	// they cannot be told from damaged ones.
	Unchecked int
	torn      bool // the last line has no newline (cut short, or its newline damaged)
}

// Notes words what is wrong with the file, a line each: the damaged lines
// (their tasks run again) and the records without checksums.
func (l Log) Notes() []string {
	var notes []string
	for _, d := range l.Damaged {
		notes = append(notes, fmt.Sprintf("%s line %d: %v; its task runs again", l.Path, d.Line, d.Err))
	}
	if l.Unchecked > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d record(s) without a checksum (written before Faithlab checked its records): read unchecked; the next run of the campaign adds the checksums", l.Path, l.Unchecked))
	}
	return notes
}

// Read reads the results file, checking every line; it writes nothing.
func (r *Run) Read() (Log, error) {
	l := Log{Path: r.ResultsPath()}
	b, err := readOwn(l.Path, maxResultsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	var checked int
	for i, line := range lines {
		d := Damage{Line: i + 1, Text: string(line)}
		if !bytes.HasSuffix(line, []byte("\n")) {
			l.torn = true
			d.Err = errors.New("cut short (no end of line: the process was killed while writing it, or the line is damaged)")
			l.Damaged = append(l.Damaged, d)
			continue
		}
		rec, sum, err := decodeLine(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			d.Err = err
			l.Damaged = append(l.Damaged, d)
			continue
		}
		if sum {
			checked++
		} else {
			l.Unchecked++
		}
		l.Records = append(l.Records, rec)
	}
	if checked > 0 && l.Unchecked > 0 {
		// Faithlab adds the sums to every old line before it appends a
		// new one, so a file of both holds damaged lines.
		l = l.withoutUnchecked(lines)
	}
	return l, nil
}

// withoutUnchecked moves the lines without a checksum of a file that has
// checksums into the damaged ones.
func (l Log) withoutUnchecked(lines [][]byte) Log {
	out := Log{Path: l.Path, torn: l.torn}
	damaged := map[int]Damage{}
	for _, d := range l.Damaged {
		damaged[d.Line] = d
	}
	for i, line := range lines {
		if d, ok := damaged[i+1]; ok {
			out.Damaged = append(out.Damaged, d)
			continue
		}
		rec, sum, _ := decodeLine(bytes.TrimSuffix(line, []byte("\n")))
		if !sum {
			out.Damaged = append(out.Damaged, Damage{Line: i + 1, Text: string(line), Err: errors.New("no checksum in a file whose records have them (damaged)")})
			continue
		}
		out.Records = append(out.Records, rec)
	}
	return out
}

// recordKeys are the JSON names of Record's fields: a line with another
// top-level name (a damaged one, say "sun" for "sum") is damaged.
var recordKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[Record]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	return keys
}()

// decodeLine checks and decodes one line (without its newline); sum
// reports whether it carried a checksum.
func decodeLine(line []byte) (rec Record, sum bool, err error) {
	body := line
	if n := len(line) - len(sumMember) - 2*sha256.Size - 2; n > 0 && string(line[n:n+len(sumMember)]) == sumMember && bytes.HasSuffix(line, []byte(`"}`)) {
		body = append(line[:n:n], '}')
		want := line[n+len(sumMember) : len(line)-2]
		got := sha256.Sum256(body)
		if hex.EncodeToString(got[:]) != string(want) {
			return rec, true, errors.New("its checksum does not match its contents (damaged)")
		}
		sum = true
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return rec, sum, fmt.Errorf("not a record: %v", err)
	}
	for k := range members {
		if !recordKeys[k] {
			return rec, sum, fmt.Errorf("not a record: unknown member %q", k)
		}
	}
	if err := json.Unmarshal(body, &rec); err != nil {
		return rec, sum, fmt.Errorf("not a record: %v", err)
	}
	return rec, sum, nil
}

// encodeLine is a record's line, with its checksum and newline.
func encodeLine(rec Record) ([]byte, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", rec.Label, err)
	}
	sum := sha256.Sum256(b)
	line := append(b[:len(b)-1:len(b)-1], sumMember...)
	line = append(line, hex.EncodeToString(sum[:])...)
	return append(line, "\"}\n"...), nil
}

// Repair makes the results file ready for appending, as Read found it
// (the run's lock held): damaged lines and a line cut short are moved to
// results.jsonl.damaged (kept for inspection; their tasks run again), and
// records without checksums are written again with them. It writes
// nothing when the file is whole.
func (r *Run) Repair(l Log) error {
	if len(l.Damaged) == 0 && l.Unchecked == 0 && !l.torn {
		return nil
	}
	if len(l.Damaged) > 0 {
		var bad bytes.Buffer
		for _, d := range l.Damaged {
			bad.WriteString(strings.TrimSuffix(d.Text, "\n") + "\n")
		}
		if err := appendOwn(r.ResultsPath()+".damaged", bad.Bytes()); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	for _, rec := range l.Records {
		line, err := encodeLine(rec)
		if err != nil {
			return err
		}
		buf.Write(line)
	}
	return data.WriteFileAtomic(r.ResultsPath(), buf.Bytes())
}

// Append adds a record to the results file and syncs it to disk.
func (r *Run) Append(rec Record) error {
	return AppendRecords(r.ResultsPath(), rec)
}

// AppendRecords appends records, one checked line each, to a run's
// results file and syncs it.
func AppendRecords(path string, recs ...Record) error {
	var buf bytes.Buffer
	for _, rec := range recs {
		line, err := encodeLine(rec)
		if err != nil {
			return err
		}
		buf.Write(line)
	}
	return appendOwn(path, buf.Bytes())
}

// appendOwn appends b to a file of the run folder (see openOwn) and syncs it.
func appendOwn(path string, b []byte) error {
	f, err := openOwn(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Latest keeps each task's last record: a task that failed and then
// succeeded on a resume counts as succeeded.
func Latest(recs []Record) map[string]Record {
	m := make(map[string]Record, len(recs))
	for _, rec := range recs {
		m[rec.Task] = rec
	}
	return m
}
