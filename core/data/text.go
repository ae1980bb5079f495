package data

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Unprintable says whether r may not stand in a name that came from a file
// (a spec's name, a method's label, a class's or a dataset's name, a
// record's fields): it breaks a line (a control character, a line or
// paragraph separator), reorders or hides text (a format character: bidi
// overrides, zero widths), or is no UTF-8 at all. Such a name is refused
// where it is read, or made a space where it is shown.
func Unprintable(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// Printable says whether s holds no Unprintable rune.
func Printable(s string) bool {
	for _, r := range s {
		if Unprintable(r) {
			return false
		}
	}
	return true
}

// maxNameRunes bounds a class's or a feature's name from a file.
const maxNameRunes = 200

// CheckNames refuses names from a file (what names them: "class", say)
// that a report, a figure or a screen could not show as one short line:
// empty, longer than maxNameRunes, or holding an Unprintable rune.
func CheckNames(what string, names []string) error {
	for i, n := range names {
		switch {
		case n == "":
			return fmt.Errorf("%s %d has no name", what, i)
		case utf8.RuneCountInString(n) > maxNameRunes:
			return fmt.Errorf("%s %d: a name of %d characters, more than %d", what, i, utf8.RuneCountInString(n), maxNameRunes)
		case !Printable(n):
			return fmt.Errorf("%s %d: the name %q holds a line break or another control character", what, i, n)
		}
	}
	return nil
}
