//go:build race

package ui

// raceEnabled skips, under the race detector (make test's second pass),
// the tests that only measure or draw what a screen lays out — on the UI
// loop alone, with no work in the background for the detector to watch —
// which run five times slower there; the first pass runs them all.
const raceEnabled = true
