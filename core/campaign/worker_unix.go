//go:build unix

package campaign

import "syscall"

// lowerPriority gives the worker's process nice 10, so that the front
// end's window is scheduled first when both want the cores.
func lowerPriority() { syscall.Setpriority(syscall.PRIO_PROCESS, 0, 10) }
