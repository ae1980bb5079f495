package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"slices"
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
// folder writes them again with their sums and a mark that they were read
// unchecked (Record.Unchecked). A sum detects damage, not an edit made on
// purpose: whoever edits a line can compute its sum again.
const sumMember = `,"sum":"`

// maxLineBytes bounds one line of a results file: a record of a campaign
// of 50 000 test inputs, with every input's value of each score, holds a
// few MB. A longer line is damage (a file extended with zeros by a crash,
// or made sparse): it is read as a stream, never held whole, and only its
// first keptBytes are set aside.
const (
	maxLineBytes = 64 << 20
	keptBytes    = 4 << 10
)

// Damage is a line of the results file that is not a whole record: cut
// short by a kill, or damaged (its checksum or its JSON wrong). Its task
// counts as not run, so that the next run does it again.
type Damage struct {
	Line int    // 1-based
	Text string // the line, as found (its first keptBytes when longer than a record may be)
	Size int64  // the line's length in bytes
	Err  error
}

func (d Damage) Error() string { return fmt.Sprintf("line %d: %v", d.Line, d.Err) }

// Log is what a results file holds.
type Log struct {
	Path    string
	Records []Record // the whole, checked records, in file order
	Damaged []Damage
	// Unchecked counts the records read unchecked: from lines without a
	// checksum (from before checksums, or with it removed), or copied from
	// such a line by an earlier run or merge (Record.Unchecked).
	Unchecked int
	unsummed  int  // lines without a checksum: Repair writes them again
	accepted  bool // Accept dropped marks: Repair writes the records again
	torn      bool // the last line has no newline (cut short, or its newline damaged)
}

// Notes words what is wrong with the file, a line each: the damaged lines
// (their tasks run again) and the records read unchecked.
func (l Log) Notes() []string {
	var notes []string
	for _, d := range l.Damaged {
		notes = append(notes, fmt.Sprintf("%s line %d: %v; its task runs again", l.Path, d.Line, d.Err))
	}
	if n := l.UncheckedNote(); n != "" {
		notes = append(notes, n)
	}
	return notes
}

// UncheckedNote words the records read unchecked ("" for none).
func (l Log) UncheckedNote() string {
	if l.Unchecked == 0 {
		return ""
	}
	first := ""
	for _, rec := range l.Records {
		if rec.Unchecked != "" {
			first = rec.Unchecked
			break
		}
	}
	return fmt.Sprintf("%s: %d record(s) read without a checksum (the first: %s), so that a changed value would go unnoticed: used unchecked, and marked so in every copy (a resumed run, a merge); if you trust them, `faithlab-cli run SPEC --accept-unchecked` checksums them as your own", l.Path, l.Unchecked, first)
}

// Accept makes the records read unchecked the user's own: their marks are
// dropped, and Repair writes them with checksums like any other. Only the
// user's explicit word may call it (run --accept-unchecked); it returns
// how many it accepted.
func (l *Log) Accept() int {
	n := 0
	for i := range l.Records {
		if l.Records[i].Unchecked != "" {
			l.Records[i].Unchecked = ""
			n++
		}
	}
	l.Unchecked, l.accepted = 0, n > 0
	return n
}

// Read reads the results file as a stream, checking every line; it writes
// nothing. A line past maxLineBytes is damage and is not held in memory.
func (r *Run) Read() (Log, error) {
	l := Log{Path: r.ResultsPath()}
	f, err := openNoFollow(l.Path, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	defer f.Close()
	if err := regular(f, l.Path); err != nil {
		return l, err
	}
	type unsummed struct {
		at   int // in l.Records
		line int
		text string
	}
	var plain []unsummed
	var checked int
	lr := &lineReader{f: f, buf: make([]byte, 1<<20)}
	for n := 1; ; n++ {
		line, size, whole, err := lr.next()
		if err != nil {
			return l, fmt.Errorf("%s: %w", l.Path, err)
		}
		if size == 0 {
			break
		}
		d := Damage{Line: n, Text: string(line), Size: size}
		switch {
		case !whole:
			l.torn = true
			d.Err = errors.New("cut short (no end of line: the process was killed while writing it, or the line is damaged)")
		case size > maxLineBytes:
			d.Err = fmt.Errorf("%d bytes, more than a record may hold (%d): damaged", size, maxLineBytes)
		default:
			rec, sum, err := decodeLine(line[:len(line)-1])
			if err != nil {
				d.Err = err
				break
			}
			if sum {
				checked++
			} else {
				plain = append(plain, unsummed{len(l.Records), n, string(line)})
				if rec.Unchecked == "" {
					rec.Unchecked = fmt.Sprintf("%s line %d", l.Path, n)
				}
			}
			l.Records = append(l.Records, rec)
			continue
		}
		l.Damaged = append(l.Damaged, d)
	}
	if checked > 0 && len(plain) > 0 {
		// Faithlab writes every line with its sum, so a file of both
		// holds damaged lines (a sum removed, say).
		drop := map[int]bool{}
		for _, p := range plain {
			drop[p.at] = true
			l.Damaged = append(l.Damaged, Damage{Line: p.line, Text: p.text, Size: int64(len(p.text)), Err: errors.New("no checksum in a file whose records have them (damaged)")})
		}
		kept := l.Records[:0]
		for i, rec := range l.Records {
			if !drop[i] {
				kept = append(kept, rec)
			}
		}
		l.Records, plain = kept, nil
		slices.SortFunc(l.Damaged, func(a, b Damage) int { return a.Line - b.Line })
	}
	l.unsummed = len(plain)
	for _, rec := range l.Records {
		if rec.Unchecked != "" {
			l.Unchecked++
		}
	}
	return l, nil
}

// lineReader reads a results file a line at a time.
type lineReader struct {
	f    *os.File
	buf  []byte
	r, w int   // buf[r:w] is read and not yet taken
	off  int64 // the file's offset at buf[w]
	eof  bool
}

// next reads one line (with its newline; whole is false when the file
// ends first) and its length; size is 0 at the end of the file. It holds
// at most maxLineBytes of the line, and of a longer one (or of one that
// cannot be a record: it does not start with '{') only the first
// keptBytes, skipping the holes of a sparse file, which hold only zeros,
// without reading them.
func (lr *lineReader) next() (line []byte, size int64, whole bool, err error) {
	first, record := true, false
	for {
		chunk := lr.buf[lr.r:lr.w]
		i := bytes.IndexByte(chunk, '\n')
		if i >= 0 {
			chunk = chunk[:i+1]
		}
		lr.r += len(chunk)
		size += int64(len(chunk))
		if first && len(chunk) > 0 {
			first, record = false, chunk[0] == '{'
		}
		// A record's JSON holds no NUL byte (a crash's zeros do).
		record = record && size <= maxLineBytes && bytes.IndexByte(chunk, 0) < 0
		switch {
		case record:
			line = append(line, chunk...)
		case len(line) > keptBytes: // no record after all: keep its start only
			line = bytes.Clone(line[:keptBytes])
		case len(line) < keptBytes:
			line = append(line, chunk[:min(len(chunk), keptBytes-len(line))]...)
		}
		if i >= 0 {
			return line, size, true, nil
		}
		if lr.eof {
			return line, size, false, nil
		}
		if !first && !record {
			skip, err := skipHole(lr.f, lr.off)
			if err != nil {
				return nil, 0, false, err
			}
			lr.off += skip
			size += skip
		}
		n, err := lr.f.Read(lr.buf)
		lr.r, lr.w, lr.off = 0, n, lr.off+int64(n)
		switch {
		case errors.Is(err, io.EOF) || err == nil && n == 0:
			lr.eof = true
		case err != nil:
			return nil, 0, false, err
		}
	}
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
// records from lines without checksums are written again with them, each
// keeping its mark (Record.Unchecked) unless the user accepted it
// (Log.Accept). It writes nothing when the file is whole.
func (r *Run) Repair(l Log) error {
	if len(l.Damaged) == 0 && l.unsummed == 0 && !l.torn && !l.accepted {
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
	return data.WriteFileIn(r.Dir, "results.jsonl", buf.Bytes())
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
