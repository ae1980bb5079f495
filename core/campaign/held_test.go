package campaign

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"faithlab/core/store"
)

// A run folder is running while a live process holds its lock, and says
// which; a folder never run, or whose holder let go, is not.
func TestRunningFollowsTheLock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	dir := filepath.Join(t.TempDir(), "run")
	if _, ok := Running(dir); ok {
		t.Error("a folder that does not exist is running")
	}
	run, err := store.Open(dir, []byte("name: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Running(dir); ok {
		t.Error("a folder never locked is running")
	}
	unlock, err := run.Lock()
	if err != nil {
		t.Fatal(err)
	}
	holder, ok := Running(dir)
	if !ok || !strings.Contains(holder, fmt.Sprintf("process %d", os.Getpid())) {
		t.Errorf("locked folder: running %v, holder %q", ok, holder)
	}
	unlock()
	if _, ok := Running(dir); ok {
		t.Error("a folder whose lock was let go is running")
	}
	// The probe takes nothing: the folder locks again at once.
	unlock, err = run.Lock()
	if err != nil {
		t.Fatalf("locking after the probes: %v", err)
	}
	unlock()
}
