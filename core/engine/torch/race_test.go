//go:build race

package torch

// raceEnabled skips the numerical comparisons under the race detector:
// they test arithmetic, not concurrency, and take minutes there.
const raceEnabled = true
