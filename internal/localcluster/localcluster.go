// Package localcluster starts, for a test, the real daemons a campaign
// meets when it scales out: a one-node Slurm cluster (munged, slurmctld,
// slurmd) and an OpenSSH server, from Debian's packages (slurm-wlm, munge,
// openssh-server; `make test-cluster` installs them). Each listens on
// 127.0.0.1 only, at a free port, with its configuration, keys and state in
// the test's temporary folder. Everything a daemon starts is stopped at the
// test's end by pid — the daemons themselves, the jobs and sessions they
// spawned, found by the environment they inherit from this test — and the
// temporary folder goes with them. Waits are polls with a deadline.
package localcluster

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// WaitFor polls cond every 100 ms until it holds, and fails the test
// naming what it waited for when it does not within limit.
func WaitFor(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
	}
}

// shortTempDir is a temporary folder with a short path, removed at the
// test's end: t.TempDir's names the test, and a Unix socket's path in it
// (slurmstepd's, munged's) may pass the 108 bytes the kernel allows.
func shortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "faithlab-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// freePorts are n distinct TCP ports on 127.0.0.1 that nothing listens
// on now.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close() // held until all are chosen, so that they differ
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// need fails the test when a program is missing.
func need(t testing.TB, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not installed: make test-cluster installs Debian's slurm-wlm, munge and openssh-server", p)
		}
	}
}

// start runs a daemon in the foreground with its output in dir/NAME.out,
// killed with this process (Pdeathsig) and stopped by pid at cleanup:
// SIGTERM, then SIGKILL after 10 s.
func start(t testing.TB, dir string, env []string, name string, args ...string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, filepath.Base(name)+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); log.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return cmd
}

// logOf is what a daemon start started (its program's base name) wrote
// to its output and to its log file dir/NAME.log.
func logOf(dir, name string) string {
	out, _ := os.ReadFile(filepath.Join(dir, name+".out"))
	log, _ := os.ReadFile(filepath.Join(dir, name+".log"))
	return string(out) + string(log)
}

// marked lists the processes but this one whose environment holds
// marker, a NAME=VALUE line: those a daemon of the test started.
func marked(marker string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, _ := strconv.Atoi(filepath.Base(p))
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if pid != os.Getpid() && err == nil && bytes.Contains(append([]byte{0}, env...), []byte("\x00"+marker+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killMarked SIGKILLs the processes marked lists and waits (at most 10 s)
// for them to be gone.
func killMarked(t testing.TB, marker string) {
	pids := marked(marker)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(pids) > 0 {
		t.Logf("stopped %d leftover process(es) of the test's daemons: %v", len(pids), pids)
		WaitFor(t, "leftover processes to end", 10*time.Second, func() bool { return len(marked(marker)) == 0 })
	}
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		stat, err := os.ReadFile(filepath.Join(p, "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so split after ')'.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			c, _ := strconv.Atoi(filepath.Base(p))
			out = append(out, c)
		}
	}
	return out
}

func write(t testing.TB, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

func run(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
