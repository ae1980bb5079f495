// Package clocale keeps Fyne from logging an error at every start under
// the C locale with an encoding (LANG=C.UTF-8, Debian's default where no
// language is chosen): Fyne's locale lookup reads "C" as a language tag,
// fails, and says so on standard error. Imported for its effect by
// cmd/faithlab, its init runs before Fyne's (Go initialises a program's
// packages in the order of their import paths where their imports allow,
// "faithlab/…" before "fyne.io/…") and sets LANGUAGE to English, which
// only gettext reads and which gettext ignores under the C locale.
package clocale

import (
	"os"
	"strings"
)

func init() {
	// The variables in the order gettext (and Fyne's lookup) reads them.
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if l := os.Getenv(v); l != "" {
			if strings.HasPrefix(l, "C.") && os.Getenv("LANGUAGE") == "" {
				os.Setenv("LANGUAGE", "en")
			}
			return
		}
	}
}
