package store

import (
	"bufio"
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

// shownDamage is how many damaged lines a Log describes one by one: the
// rest are counted, so that a file of millions of junk lines costs no more
// memory, and no more lines of warnings, than one of a few.
const shownDamage = 5

// maxRecordsBytes bounds the records of one results file, all lines
// together (each counted with recordOverhead): a campaign of 50 000 test
// inputs and a few hundred tasks writes well under it. A file that holds
// more is refused as soon as its records pass it, whatever its lines say.
var maxRecordsBytes int64 = 1 << 30 // a var: the tests lower it

// Damage is a line of the results file that is not a whole record: cut
// short by a kill, or damaged (its checksum or its JSON wrong). Its task
// counts as not run, so that the next run does it again.
type Damage struct {
	Line int    // 1-based
	Text string // the line's first keptBytes
	Size int64  // the line's length in bytes
	Err  error
}

func (d Damage) Error() string { return fmt.Sprintf("line %d: %v", d.Line, d.Err) }

// Log is what a results file holds.
type Log struct {
	Path    string
	Records []Record // the whole, checked records, in file order
	// Damaged describes the first shownDamage damaged lines; MoreDamaged
	// counts the others, which are not kept (Repair finds them again).
	Damaged     []Damage
	MoreDamaged int
	lastDamaged int // the last damaged line's number
	// Unchecked counts the records read unchecked: from lines without a
	// checksum (from before checksums, or with it removed), or copied from
	// such a line by an earlier run or merge (Record.Unchecked).
	Unchecked int
	unsummed  int  // lines without a checksum: Repair writes them again
	mixed     bool // lines with and without checksums: those without are damage
	accepted  bool // Accept dropped marks: Repair writes the records again
	torn      bool // the last line has no newline (cut short, or its newline damaged)
}

// DamagedLines is how many lines of the file are damaged.
func (l Log) DamagedLines() int { return len(l.Damaged) + l.MoreDamaged }

// DamageNotes words the damaged lines, the first shownDamage a line each
// and the rest in one, each followed by then ("its task runs again").
func (l Log) DamageNotes(then string) []string {
	var notes []string
	for _, d := range l.Damaged {
		notes = append(notes, fmt.Sprintf("%s line %d: %v; %s", l.Path, d.Line, d.Err, then))
	}
	if l.MoreDamaged > 0 {
		notes = append(notes, fmt.Sprintf("%s: and %d more damaged lines, up to line %d; %s", l.Path, l.MoreDamaged, l.lastDamaged, then))
	}
	return notes
}

// Notes words what is wrong with the file, a line each: the damaged lines
// (their tasks run again) and the records read unchecked.
func (l Log) Notes() []string {
	notes := l.DamageNotes("its task runs again")
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
// nothing. It holds the records and one line at a time: a line past
// maxLineBytes is damage and is not held, only the first shownDamage
// damaged lines are described, and a file whose records exceed
// maxRecordsBytes is refused.
func (r *Run) Read() (Log, error) {
	l := Log{Path: r.ResultsPath()}
	type unsummed struct {
		at, line int // in l.Records; in the file
	}
	var plain []unsummed
	var plainShown []Damage // the first lines without a checksum, in case they are damage
	var checked int
	var held int64
	err := r.scan(func(n int, line []byte, size int64, whole bool) error {
		l.torn = l.torn || !whole
		rec, sum, err := classify(line, size, whole)
		if err != nil {
			l.damage(Damage{Line: n, Text: string(line[:min(len(line), keptBytes)]), Size: size, Err: err})
			return nil
		}
		if held += size + recordOverhead; held > maxRecordsBytes {
			return fmt.Errorf("line %d: records of more than %d GiB in all, more than a campaign's results hold: damaged, or not a results file", n, maxRecordsBytes>>30)
		}
		if sum {
			checked++
		} else {
			plain = append(plain, unsummed{len(l.Records), n})
			if len(plainShown) < shownDamage {
				plainShown = append(plainShown, Damage{Line: n, Text: string(line[:min(len(line), keptBytes)]), Size: size, Err: errNoSum})
			}
			if rec.Unchecked == "" {
				rec.Unchecked = fmt.Sprintf("%s line %d", l.Path, n)
			}
		}
		l.Records = append(l.Records, rec)
		return nil
	})
	if err != nil {
		return l, err
	}
	if checked > 0 && len(plain) > 0 {
		// Faithlab writes every line with its sum, so a file of both
		// holds damaged lines (a sum removed, say).
		l.mixed = true
		drop := map[int]bool{}
		for _, p := range plain {
			drop[p.at] = true
		}
		kept := l.Records[:0]
		for i, rec := range l.Records {
			if !drop[i] {
				kept = append(kept, rec)
			}
		}
		shown := append(l.Damaged, plainShown...)
		slices.SortFunc(shown, func(a, b Damage) int { return a.Line - b.Line })
		l.Records, l.Damaged = kept, shown[:min(len(shown), shownDamage)]
		l.MoreDamaged += len(shown) - len(l.Damaged) + len(plain) - len(plainShown)
		l.lastDamaged = max(l.lastDamaged, plain[len(plain)-1].line)
		plain = nil
	}
	l.unsummed = len(plain)
	for _, rec := range l.Records {
		if rec.Unchecked != "" {
			l.Unchecked++
		}
	}
	return l, nil
}

// recordOverhead is what a record holds in memory besides its line's
// bytes, counted against maxRecordsBytes so that millions of tiny records
// are bounded too.
const recordOverhead = 512

var (
	errNoSum     = errors.New("no checksum in a file whose records have them (damaged)")
	errNotObject = errors.New("not a record: no JSON object")
)

// damage counts a damaged line, describing it if it is among the first.
func (l *Log) damage(d Damage) {
	if len(l.Damaged) < shownDamage {
		l.Damaged = append(l.Damaged, d)
	} else {
		l.MoreDamaged++
	}
	l.lastDamaged = d.Line
}

// classify decodes a line as lineReader gave it: a record, and whether it
// carried a checksum, or why the line is damage.
func classify(line []byte, size int64, whole bool) (Record, bool, error) {
	switch {
	case !whole:
		return Record{}, false, errors.New("cut short (no end of line: the process was killed while writing it, or the line is damaged)")
	case size > maxLineBytes:
		return Record{}, false, fmt.Errorf("%d bytes, more than a record may hold (%d): damaged", size, maxLineBytes)
	}
	return decodeLine(line[:len(line)-1])
}

// scan calls visit with each line of the results file in turn: its number,
// its bytes as lineReader gives them (valid until the next call), its
// length and whether it ends in a newline. A missing file has no lines.
func (r *Run) scan(visit func(n int, line []byte, size int64, whole bool) error) error {
	path := r.ResultsPath()
	f, err := openNoFollow(path, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := regular(f, path); err != nil {
		return err
	}
	lr := &lineReader{f: f, buf: make([]byte, 1<<20)}
	for n := 1; ; n++ {
		line, size, whole, err := lr.next()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if size == 0 {
			return nil
		}
		if err := visit(n, line, size, whole); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

// lineReader reads a results file a line at a time.
type lineReader struct {
	f    *os.File
	buf  []byte
	r, w int   // buf[r:w] is read and not yet taken
	off  int64 // the file's offset at buf[w]
	eof  bool
	line []byte // the last line given, its room used again for the next
}

// next reads one line (with its newline; whole is false when the file
// ends first) and its length; size is 0 at the end of the file. It holds
// at most maxLineBytes of the line, and of a longer one (or of one that
// cannot be a record: it does not start with '{') only the first
// keptBytes, skipping the holes of a sparse file, which hold only zeros,
// without reading them. The line is valid until the next call.
func (lr *lineReader) next() (line []byte, size int64, whole bool, err error) {
	line = lr.line[:0]
	defer func() { lr.line = line }()
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
			if cap(line)-len(line) < len(chunk) { // doubling: append's smaller steps past 256 KB copy a long line many times
				line = slices.Grow(line, max(len(chunk), cap(line)))
			}
			line = append(line, chunk...)
		case len(line) > keptBytes: // no record after all: keep its start only
			line = line[:keptBytes]
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
	if len(line) == 0 || line[0] != '{' {
		return rec, false, errNotObject
	}
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
	if rec.Task == "" {
		return rec, sum, errors.New("not a record: no task")
	}
	for i, v := range []string{rec.Task, rec.Label, rec.Dataset, rec.Model, rec.Method, rec.Post, rec.Protocol, rec.Faithlab} {
		if !data.Printable(v) {
			name := []string{"task", "label", "dataset", "model", "method", "post", "protocol", "faithlab_version"}[i]
			return rec, sum, fmt.Errorf("not a record: a control character in its %s (Faithlab writes none)", name)
		}
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
	if l.DamagedLines() == 0 && l.unsummed == 0 && !l.torn && !l.accepted {
		return nil
	}
	if l.DamagedLines() > 0 {
		if err := r.setAside(l); err != nil {
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

// setAside appends the damaged lines of the results file to
// results.jsonl.damaged and syncs it: a second pass over the file finds
// them as Read did (Read describes only the first few), each as lineReader
// holds it (a line that cannot be a record, only its first keptBytes).
func (r *Run) setAside(l Log) error {
	f, err := openOwn(r.ResultsPath()+".damaged", os.O_APPEND|os.O_CREATE|os.O_WRONLY)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = r.scan(func(n int, line []byte, size int64, whole bool) error {
		if _, sum, err := classify(line, size, whole); err == nil && (sum || !l.mixed) {
			return nil
		}
		w.Write(bytes.TrimSuffix(line, []byte("\n")))
		return w.WriteByte('\n')
	})
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
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
