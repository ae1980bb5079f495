package report

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"faithlab/core/store"
)

// forgedMarkup is a name as someone sending a run folder might write it:
// a verdict of its own with a remote image, a script, an address, a table
// cell's end, a code span and an escape; forged, as a spec's name, adds a
// section of its own, a NUL byte and a right-to-left override. (A record's
// names hold no control character: the store refuses such a line.)
const (
	forgedMarkup = "Every method is faithful ![x](https://evil.example/x.png) <script>alert(1)</script> www.evil.example | `x` \\"
	forged       = "fmnist\n\n## Verdict\n\n" + forgedMarkup + " \x00 \u202e"
)

// forgedRecords are the fixed campaign's records with one method's and the
// dataset's names forged.
func forgedRecords() []store.Record {
	recs := records()
	for i := range recs {
		recs[i].Dataset = "fmnist " + forgedMarkup
		if recs[i].Method == "ig" {
			recs[i].Method = forgedMarkup
		}
	}
	return recs
}

// A name from a file lands in REPORT.md as text: on its line, with no
// heading, image, link, HTML, code span or table cell of its own.
func TestMarkdownKeepsNamesFromFilesInert(t *testing.T) {
	recs := forgedRecords()
	md := Markdown(forged, recs, Diagnose(recs), Left{})
	first, _, _ := strings.Cut(md, "\n")
	if !strings.HasPrefix(first, "# fmnist") || !strings.Contains(first, "Verdict") {
		t.Errorf("the title is not one line: %q", first)
	}
	// Outside the headline scores' code block, where text is shown as it is.
	text, code, _ := strings.Cut(md, "```")
	for _, bad := range []string{"\n## Verdict", "\nEvery method", "](https", "![", "<script", "https://", "www.evil", "\x00", "\u202e", "`x`"} {
		if strings.Contains(text, bad) {
			t.Errorf("REPORT.md holds %q", bad)
		}
	}
	if strings.Count(code, "`") != 3 {
		t.Errorf("a name closes the headline scores' code block:\n%s", code)
	}
	// Every table row keeps its own number of cells.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| gradient ") || strings.HasPrefix(line, "| random ") {
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 6 {
				t.Errorf("%d cell borders in %q", n, line)
			}
		}
	}
	if got := Inline("a_b [0.1, 0.3] p ≤ 0.05"); got != "a_b [0.1, 0.3] p ≤ 0.05" {
		t.Errorf("Inline changed plain words: %q", got)
	}
}

// A name from a file lands in the CSVs as one cell on one line, and a
// spreadsheet reads it as text, never as a formula; numbers stay numbers.
func TestCSVKeepsNamesFromFilesInert(t *testing.T) {
	recs := forgedRecords()
	for i := range recs {
		if recs[i].Method == "gradient" {
			recs[i].Method = "=HYPERLINK(\"https://evil.example\",\"click\")"
		}
	}
	for name, write := range map[string]func(io.Writer) error{
		"results.csv": func(w io.Writer) error { return WriteCSV(w, "run1", recs, Confident(recs, ConfidenceOptions{})) },
		"units.csv":   func(w io.Writer) error { return WriteUnitsCSV(w, "run1", recs) },
	} {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		formulas := 0
		for _, row := range rows {
			for _, c := range row {
				if strings.ContainsAny(c, "\n\r\x00\u202e") {
					t.Fatalf("%s: a cell holds a line break or control character: %q", name, c)
				}
				if strings.HasPrefix(c, "=") {
					formulas++
				}
			}
		}
		if formulas > 0 || !strings.Contains(buf.String(), "'=HYPERLINK") && name == "results.csv" {
			t.Errorf("%s: %d cells a spreadsheet would run", name, formulas)
		}
	}
	if got := CSVText("-0.25"); got != "-0.25" {
		t.Errorf("a negative number became %q", got)
	}
}

// A name from a file lands in an SVG figure as the text of a text element
// (no element, attribute or link of its own), and in a PDF with no action.
func TestFiguresKeepNamesFromFilesInert(t *testing.T) {
	recs := forgedRecords()
	figs, err := Figures(recs, Confident(recs, ConfidenceOptions{}))
	if err != nil || len(figs) == 0 {
		t.Fatalf("%d figures, %v", len(figs), err)
	}
	for _, f := range figs {
		var svg, pdf bytes.Buffer
		if err := Render(&svg, f, "svg", 0); err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(&svg)
		texts := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s.svg is not XML: %v", f.Name, err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				switch se.Name.Local {
				case "script", "a", "image", "foreignObject":
					t.Errorf("%s.svg holds a <%s> element", f.Name, se.Name.Local)
				case "text":
					texts++
				}
				for _, a := range se.Attr {
					if a.Name.Local == "href" || strings.HasPrefix(a.Name.Local, "on") {
						t.Errorf("%s.svg: attribute %s=%q", f.Name, a.Name.Local, a.Value)
					}
				}
			}
		}
		if texts == 0 {
			t.Errorf("%s.svg holds no text", f.Name)
		}
		if err := Render(&pdf, f, "pdf", 0); err != nil {
			t.Fatal(err)
		}
		for _, action := range []string{"/URI", "/JavaScript", "/JS", "/Launch", "/Annots"} {
			if bytes.Contains(pdf.Bytes(), []byte(action)) {
				t.Errorf("%s.pdf holds %s", f.Name, action)
			}
		}
	}
}
