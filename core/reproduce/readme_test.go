package reproduce

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's table of the quick verdicts from testdata/NAME-quick.verdicts")

// README.md's table of the quick verdicts, between these marks, is made
// from the recorded verdicts (make readme-verdicts), never by hand.
const (
	readmeBegin = "<!-- quick verdicts: made by `make readme-verdicts` from core/reproduce/testdata/*-quick.verdicts -->"
	readmeEnd   = "<!-- end of the quick verdicts -->"
)

// readmeVerdicts is the README's table of every reproduction's recorded
// quick verdicts, claim by claim, in the files' order.
func readmeVerdicts(t *testing.T) string {
	all, err := List()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| reproduction | claim | verdict at quick size |\n|---|---|---|\n")
	for _, r := range all {
		got, err := os.ReadFile(filepath.Join("testdata", r.Name+"-quick.verdicts"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n") {
			id, verdict, ok := strings.Cut(line, ": ")
			if !ok {
				t.Fatalf("%s-quick.verdicts: %q is no verdict line", r.Name, line)
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Name, id, verdict)
		}
	}
	return b.String()
}

// The README's reproduction table is the recorded verdicts, so the two
// cannot drift apart (a claim once read "in part" in the README and
// "holds" in its golden).
func TestREADMEVerdictsAreTheGoldens(t *testing.T) {
	path := filepath.Join("..", "..", "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, readmeBegin), strings.Index(readme, readmeEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no table of the quick verdicts between %q and %q", readmeBegin, readmeEnd)
	}
	want := readmeBegin + "\n\n" + readmeVerdicts(t) + "\n" + readmeEnd
	if got := readme[i : j+len(readmeEnd)]; got != want {
		if *updateReadme {
			if err := os.WriteFile(path, []byte(readme[:i]+want+readme[j+len(readmeEnd):]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md's table of the quick verdicts differs from testdata/*-quick.verdicts: run make readme-verdicts\n%s", readmeVerdicts(t))
	}
}
