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

// A worker runs 10 nice values below the front end that started it,
// whatever the front end's own (19 at most): a workbench started at nice 3
// — or 10, by a loaded machine's make — gets the cores before its
// campaign, as one at nice 0 does.
func TestWorkerRunsBelowItsFrontEnd(t *testing.T) {
	if _, err := exec.LookPath("nice"); err != nil {
		t.Skip("no nice(1) to start the worker with")
	}
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil || 20-p > 16 {
		t.Skipf("this test runs at nice %d: none above to start a front end at", 20-p)
	}
	front := 20 - p + 3
	want := strconv.Itoa(min(front+10, 19))
	cmd := exec.Command("nice", "-n", "3", os.Args[0], "-test.run=^$") // the front end's nice: the test's + 3
	cmd.Env = append(os.Environ(), "FAITHLAB_LOWER_PROBE=1")
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
			t.Errorf("a worker started at nice %d runs at nice %s, not %s", front, strings.Join(nices, ", "), want)
			break
		}
	}
}
