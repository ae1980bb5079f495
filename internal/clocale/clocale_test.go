package clocale_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	_ "fyne.io/fyne/v2/lang" // looks the locale up in its init

	_ "faithlab/internal/clocale"
)

// Under LANG=C.UTF-8 Fyne's packages start without an error: this test
// binary, which imports both (as cmd/faithlab does, not through one
// another), run again with that locale prints nothing of Fyne's.
func TestCUTF8LocaleStartsFyneWithoutAnError(t *testing.T) {
	if os.Getenv("CLOCALE_CHILD") != "" {
		return
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "LC_ALL" && k != "LC_MESSAGES" && k != "LANG" && k != "LANGUAGE" {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCUTF8LocaleStartsFyneWithoutAnError$")
	cmd.Env = append(env, "LANG=C.UTF-8", "CLOCALE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "Fyne error") {
		t.Errorf("under LANG=C.UTF-8 (%v):\n%s", err, out)
	}
}
