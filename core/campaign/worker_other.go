//go:build !unix

package campaign

// lowerPriority leaves the worker's priority as it is where there is no
// setpriority.
func lowerPriority() {}

// setNice does nothing where there is no setpriority.
func setNice(int) {}
