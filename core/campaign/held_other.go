//go:build !unix

package campaign

// Running says no run folder is running where there is no flock: the
// lock is a no-op there (store.Run.Lock), so nothing tells.
func Running(dir string) (holder string, running bool) { return "", false }
