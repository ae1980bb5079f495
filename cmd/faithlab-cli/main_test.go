package main

import (
	"os"
	"testing"
)

// TestMain keeps the speeds the commands measure (campaign.UserSpeedBook)
// in a cache folder of the tests' own, never the user's, and serves run's
// child that measures them (speedBook: os.Executable is this binary).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == measureSpeedsCommand {
		main() // run's child, started from this test binary (speedBook)
		return
	}
	cache, err := os.MkdirTemp("", "faithlab-cli-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}
