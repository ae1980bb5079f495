//go:build unix

package campaign

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Running says whether a live process holds the run folder's lock — runs
// its campaign now — and which ("process 4242 on node1", as the lock file
// says). A folder whose lock nobody holds (never run, stopped, or its
// process killed: the kernel drops the lock with the process) is not
// running, whatever its manifest says. The lock is probed with a shared
// lock held for no longer than the probe, never written.
func Running(dir string) (holder string, running bool) {
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", false // no lock file: never run here
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return "", false
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return "", false
	}
	b := make([]byte, 256)
	n, _ := f.ReadAt(b, 0)
	holder = strings.TrimSpace(string(b[:n]))
	if holder == "" {
		holder = "another process"
	}
	return holder, true
}
