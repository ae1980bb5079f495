package campaign

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A worker's every thread runs at its lower priority (lowerPriority's
// setNice), not only the one that asked (Linux's nice is a thread's): the
// window's threads are scheduled first.
func TestWorkerLowersEveryThreadsPriority(t *testing.T) {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil || 20-p >= 19 {
		t.Skipf("this test runs at nice %d: none above to set", 20-p)
	}
	want := strconv.Itoa(min(19, 20-p+5)) // above the test's own, which the child inherits
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAITHLAB_NICE_PROBE="+want)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	nices := strings.Fields(string(out))
	if len(nices) < 2 {
		t.Fatalf("threads' nices: %q", out)
	}
	for _, n := range nices {
		if n != want {
			t.Errorf("a worker's threads run at nice %s", strings.Join(nices, ", "))
			break
		}
	}
	fmt.Fprintln(os.Stderr, "threads' nices:", strings.Join(nices, " "))
}
