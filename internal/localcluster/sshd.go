package localcluster

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SSHD is an OpenSSH server on 127.0.0.1 that lets the current user in
// with a key made for the test, and the client side that trusts its host
// key alone: an ssh_config (BatchMode, StrictHostKeyChecking, the test's
// known_hosts and identity only) and an ssh on Bin that uses it.
type SSHD struct {
	Port       int
	User       string
	Bin        string // a folder holding "ssh": /usr/bin/ssh -F Config
	Config     string // the client's ssh_config
	KnownHosts string // the host key the client trusts
	listener   *exec.Cmd
}

// Host is the server as an ssh destination with its port: USER@127.0.0.1:PORT.
func (d *SSHD) Host() string { return fmt.Sprintf("%s@127.0.0.1:%d", d.User, d.Port) }

// StartSSHD generates a host key and a user key in a temporary folder and
// starts sshd there on a free port, key authentication only; its sessions
// see this process's BLAS and OpenMP variables (OPENBLAS_*, OMP_*, …). At the
// test's end it stops the server, its sessions and what they run.
func StartSSHD(t testing.TB) *SSHD {
	t.Helper()
	need(t, "/usr/sbin/sshd", "/usr/bin/ssh", "ssh-keygen")
	dir := shortTempDir(t)
	marker := "FAITHLAB_TEST_SSHD=" + dir
	t.Cleanup(func() { killMarked(t, marker) })
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	// The far end is this machine and should compute as it does here: its
	// sessions get this process's BLAS and OpenMP settings (an
	// OPENBLAS_CORETYPE set here and not there picks other kernels, and a
	// worker under sshd then differed from one started here in the last
	// bits of its passes).
	env := []string{marker}
	for _, kv := range os.Environ() {
		for _, p := range []string{"OPENBLAS_", "GOTO_", "OMP_", "MKL_"} {
			if strings.HasPrefix(kv, p) && !strings.ContainsAny(kv, " \t\"'") {
				env = append(env, kv)
			}
		}
	}
	d := &SSHD{Port: freePorts(t, 1)[0], User: u.Username, Bin: filepath.Join(dir, "bin"), Config: filepath.Join(dir, "ssh_config"), KnownHosts: filepath.Join(dir, "known_hosts")}
	for _, k := range []string{"host_key", "user_key"} {
		run(t, nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "faithlab-test-"+k, "-f", filepath.Join(dir, k))
	}
	pub := func(k string) string {
		b, err := os.ReadFile(filepath.Join(dir, k+".pub"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	write(t, filepath.Join(dir, "authorized_keys"), pub("user_key")+"\n", 0o600)
	write(t, d.KnownHosts, fmt.Sprintf("[127.0.0.1]:%d %s\n", d.Port, pub("host_key")), 0o600)
	// Root logs in with a key or not at all; the test's folder is not the
	// user's home, so sshd's checks of its modes are off.
	write(t, filepath.Join(dir, "sshd_config"), fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %[2]s/host_key
PidFile %[2]s/sshd.pid
AuthorizedKeysFile %[2]s/authorized_keys
AllowUsers %[3]s
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding no
AllowAgentForwarding no
X11Forwarding no
PermitTTY no
SetEnv %[4]s
LogLevel VERBOSE
`, d.Port, dir, d.User, strings.Join(env, " ")), 0o600)
	write(t, d.Config, fmt.Sprintf(`Host *
	User %s
	IdentityFile %[2]s/user_key
	IdentitiesOnly yes
	UserKnownHostsFile %[3]s
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode yes
	PasswordAuthentication no
	ControlMaster no
	ControlPath none
	LogLevel ERROR
`, d.User, dir, d.KnownHosts), 0o600)
	if err := os.Mkdir(d.Bin, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d.Bin, "ssh"), "#!/bin/sh\nexec /usr/bin/ssh -F '"+d.Config+"' \"$@\"\n", 0o755)

	// sshd, run by root, separates privileges into /run/sshd, which the
	// system's service makes; made here, it goes again at the end.
	if os.Geteuid() == 0 {
		if _, err := os.Stat("/run/sshd"); os.IsNotExist(err) {
			if err := os.Mkdir("/run/sshd", 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove("/run/sshd") })
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sshd's log:\n%s", tail(logOf(dir, "sshd"), 3000))
		}
	})
	d.listener = start(t, dir, []string{marker}, "/usr/sbin/sshd", "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	WaitFor(t, "sshd to listen", 10*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", d.Port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return d
}

// DropConnections kills the server's side of every open connection (the
// per-connection sshd processes), as a network that fails would end them,
// and returns how many it killed.
func (d *SSHD) DropConnections() int {
	sessions := children(d.listener.Process.Pid)
	for _, pid := range sessions {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(sessions)
}

// Sessions counts the open connections.
func (d *SSHD) Sessions() int { return len(children(d.listener.Process.Pid)) }

// Running lists the processes the server's sessions run (their commands,
// not sshd's own).
func (d *SSHD) Running() []int {
	var pids []int
	for _, pid := range marked("FAITHLAB_TEST_SSHD=" + filepath.Dir(d.Bin)) {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe != "/usr/sbin/sshd" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TrustOtherHostKey writes a known_hosts that trusts another key for the
// server than its own, as when a host was replaced or an attacker answers,
// and returns the function that puts the right one back.
func (d *SSHD) TrustOtherHostKey(t testing.TB) (restore func()) {
	t.Helper()
	right, err := os.ReadFile(d.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(filepath.Dir(d.Bin), "other_key")
	run(t, nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "someone-else", "-f", other)
	pub, err := os.ReadFile(other + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	write(t, d.KnownHosts, fmt.Sprintf("[127.0.0.1]:%d %s", d.Port, pub), 0o600)
	return func() { write(t, d.KnownHosts, string(right), 0o600) }
}
