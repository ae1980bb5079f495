//go:build unix

package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// lockText is what a lock holds: nothing (its holder ended), or the line
// naming its holder that Lock writes.
var lockText = regexp.MustCompile(`^(process [0-9]+ on [^\n]*\n)?$`)

// ownLock refuses a file named lock that is not a lock (a file of the
// user's in the spec's folder, for a spec whose output is "."): the lock
// is emptied and rewritten, and only a lock may be.
func ownLock(f *os.File, path string) error {
	b := make([]byte, 512)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("locking %s: %w", path, err)
	}
	if n == len(b) || !lockText.Match(b[:n]) {
		return fmt.Errorf("%s is not a Faithlab lock (it holds other text): a run folder's lock is written over, so a file of that name is left alone — move it, or give the run its own folder", path)
	}
	return nil
}

// noFollow makes open fail on a symbolic link instead of following it.
const noFollow = syscall.O_NOFOLLOW

// links is how many names a file has (1 for a file of the folder's own).
func links(st os.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}

// Lock takes the run folder's lock for this process, or says which process
// holds it. The lock is flock's: the kernel drops it when the process
// ends, however it ends, so a killed run never leaves a stale lock. The
// lock file is created exclusively and never followed: a lock that is a
// symbolic link, a hard link to another file or not a regular file is
// refused before anything is written to it.
func (r *Run) Lock() (unlock func(), err error) {
	path := filepath.Join(r.Dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|noFollow, 0o644)
	if errors.Is(err, os.ErrExist) {
		f, err = os.OpenFile(path, os.O_RDWR|noFollow, 0)
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symbolic link: a run folder's files are never followed (remove it if the folder is yours)", path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := ownFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := make([]byte, 256)
		n, _ := f.ReadAt(holder, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := strings.TrimSpace(string(holder[:n]))
			if who == "" {
				who = "another process"
			}
			return nil, fmt.Errorf("%s is being run by %s: wait for it to end, or stop it first", r.Dir, who)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := ownLock(f, path); err != nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		return nil, err
	}
	host, _ := os.Hostname()
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "process %d on %s\n", os.Getpid(), host)
	}
	return func() {
		f.Truncate(0)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
