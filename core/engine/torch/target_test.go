package torch

import (
	"strings"
	"testing"
)

// FuzzParseTarget: an engine setting (from a spec someone sent) never
// panics the parser; what parses writes back to a setting that parses to
// the same target, so that what the user was asked to allow is what runs;
// and a host or an interpreter is never hidden in the options.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"torch", "torch?device=cpu&threads=2", "torch@ssh://alice@gpu1:2222?python=/opt/py/bin/python3",
		"torch@ssh://-oProxyCommand=x", "torch?python=", "torch@ssh://h/path", "torch?python=a&python=b", "torch@ssh://[::1]:22"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			return
		}
		back, err := ParseTarget(tg.String())
		if err != nil || back != tg {
			t.Fatalf("%q parses to %+v, written back as %q: %+v, %v", s, tg, tg.String(), back, err)
		}
		if strings.HasPrefix(tg.Host, "-") {
			t.Fatalf("%q: host %q starts with '-'", s, tg.Host)
		}
		if strings.Contains(s, "@") && tg.Host == "" && !strings.Contains(strings.SplitN(s, "?", 2)[0], "torch") {
			t.Fatalf("%q: an @ and no host", s)
		}
	})
}
