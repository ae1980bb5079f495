package display

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(vars ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(vars); i += 2 {
			if vars[i] == k {
				return vars[i+1]
			}
		}
		return ""
	}
}

// Displays are told apart without a real one: a socket or a TCP port
// listening in the test stands for an X server.
func TestCheckOpensOnlyDisplaysThatAnswer(t *testing.T) {
	dir := t.TempDir()
	sock, err := net.Listen("unix", filepath.Join(dir, "X5"))
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	defer sock.Close()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("tcp: %v", err)
	}
	defer tcp.Close()
	port := tcp.Addr().(*net.TCPAddr).Port
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("tcp: %v", err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	if port < 6000 || closedPort < 6000 {
		t.Skipf("ports %d, %d: below X's 6000", port, closedPort)
	}
	for _, tc := range []struct {
		env  func(string) string
		want string // "" for no error
	}{
		{env("WAYLAND_DISPLAY", "wayland-0"), ""},
		{env("DISPLAY", ":5"), ""},
		{env("DISPLAY", ":5.0"), ""},
		{env("DISPLAY", "unix:5.1"), ""},
		{env("DISPLAY", fmt.Sprintf("127.0.0.1:%d.0", port-6000)), ""},
		{env(), "neither DISPLAY nor WAYLAND_DISPLAY is set"},
		{env("DISPLAY", ":99"), `cannot open display ":99" (no X server listens on ` + filepath.Join(dir, "X99") + ")"},
		{env("DISPLAY", ":99.0"), `cannot open display ":99.0"`},
		{env("DISPLAY", "nonsense"), `cannot open display "nonsense" (not an X display name`},
		{env("DISPLAY", fmt.Sprintf("127.0.0.1:%d", closedPort-6000)), fmt.Sprintf("no X server answers at 127.0.0.1:%d", closedPort)},
	} {
		name := tc.env("DISPLAY") + tc.env("WAYLAND_DISPLAY")
		err := check(tc.env, dir, time.Second)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v, want no error", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want an error saying %q", name, err, tc.want)
		}
	}
}

// A local display is found by its socket or, for Linux's abstract socket,
// by its line in /proc/net/unix — never by connecting (an Xvfb resets when
// its last client leaves); a plain file of the socket's name is no display.
func TestLocalDisplaysAreLookedForNotConnectedTo(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "unix")
	abstract := "@" + filepath.Join(dir, "X3")
	if err := os.WriteFile(table, []byte("Num       RefCount Protocol Flags    Type St Inode Path\n0000000000000000: 00000002 00000000 00010000 0001 01 1234 "+abstract+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "X4"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(old string) { procNetUnix = old }(procNetUnix)
	procNetUnix = table
	if err := check(env("DISPLAY", ":3"), dir, time.Second); err != nil {
		t.Errorf(":3 on an abstract socket: %v", err)
	}
	if err := check(env("DISPLAY", ":4"), dir, time.Second); err == nil {
		t.Error(":4, a plain file where the socket should be, passed")
	}
}
