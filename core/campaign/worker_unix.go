//go:build unix && !linux

package campaign

import "syscall"

// lowerPriority gives the worker's process a nice value 10 above the one
// it started at (19 at most), so that the front end's window is scheduled
// first when both want the cores.
func lowerPriority() {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		p = 0
	}
	setNice(below(p)) // getpriority answers the nice value itself here
}

// setNice gives the process the nice value n.
func setNice(n int) { syscall.Setpriority(syscall.PRIO_PROCESS, 0, n) }
