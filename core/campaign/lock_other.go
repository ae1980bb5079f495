//go:build !unix

package campaign

// lock is a no-op where flock does not exist: one process per run folder
// is then the user's to ensure.
func lock(string) (func(), error) { return func() {}, nil }

// lowerPriority leaves the worker's priority as it is where there is no
// setpriority.
func lowerPriority() {}
