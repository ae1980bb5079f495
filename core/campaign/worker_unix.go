//go:build unix && !linux

package campaign

import "syscall"

// lowerPriority gives the worker's process nice 10, so that the front
// end's window is scheduled first when both want the cores.
func lowerPriority() { setNice(10) }

// setNice gives the process the nice value n.
func setNice(n int) { syscall.Setpriority(syscall.PRIO_PROCESS, 0, n) }
