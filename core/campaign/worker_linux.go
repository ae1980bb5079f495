package campaign

import (
	"os"
	"strconv"
	"syscall"
)

// lowerPriority gives every thread of the worker's process a nice value
// 10 above the one it started at (the front end's, which it inherits; 19
// at most), so that the front end's window is scheduled first when both
// want the cores: nice 10 whatever the front end's, as before, left a
// front end started at nice 10 (a desktop's launcher, a loaded machine's
// make) on a par with its campaign, and the window took seconds to answer
// a click. Linux keeps a nice value per thread: setpriority on the
// process set the calling thread's alone, and the Go runtime's other
// threads — those that run most goroutines — kept 0. Threads made later
// inherit their maker's.
func lowerPriority() { setNice(below(niceNow())) }

// niceNow is the calling thread's nice value (0 where it cannot be read).
func niceNow() int {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return 0
	}
	return 20 - p // the kernel's getpriority answers 20 - nice
}

// setNice gives every thread of the process the nice value n.
func setNice(n int) {
	for range 3 { // a thread started while the list was read is niced next time
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			syscall.Setpriority(syscall.PRIO_PROCESS, 0, n)
			return
		}
		changed := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil && 20-p == n {
				continue // the kernel's getpriority answers 20 - nice
			}
			syscall.Setpriority(syscall.PRIO_PROCESS, tid, n)
			changed = true
		}
		if !changed {
			return
		}
	}
}
