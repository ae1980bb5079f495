package main

import (
	"os"
	"testing"
)

// TestMain keeps the speeds the commands measure (campaign.UserSpeedBook)
// in a cache folder of the tests' own, never the user's.
func TestMain(m *testing.M) {
	cache, err := os.MkdirTemp("", "faithlab-cli-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}
