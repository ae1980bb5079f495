// Package display says whether a graphical display can be reached, before
// the GUI toolkit tries: GLFW, failing to open one, panics with a goroutine
// dump instead of saying what is wrong.
package display

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Check returns nil when a display can be reached, and otherwise an error
// saying which display could not be opened and why. On macOS and Windows
// there is always one. Elsewhere (X11 or Wayland): WAYLAND_DISPLAY set, or
// DISPLAY set to an X server — a local ":N" or ":N.S" whose socket
// /tmp/.X11-unix/XN (or Linux's abstract one of that name) exists, a
// "host:N" answering on TCP port 6000+N within a second. A server that
// listens but refuses the program (another user's) is found when the
// window opens (cmd/faithlab recovers GLFW's panic there).
func Check() error {
	switch runtime.GOOS {
	case "darwin", "windows", "ios", "android":
		return nil
	}
	return check(os.Getenv, "/tmp/.X11-unix", time.Second)
}

// procNetUnix lists Linux's listening unix sockets, abstract ones too.
var procNetUnix = "/proc/net/unix"

// listening says whether the table at path (procNetUnix's format: the
// socket's name last on its line) names a socket called name.
func listening(path, name string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == name {
			return true
		}
	}
	return false
}

// xDisplay is an X display name: [host]:N[.S], the host "unix" or none
// meaning this machine's socket.
var xDisplay = regexp.MustCompile(`^([^:/]*):([0-9]+)(\.[0-9]+)?$`)

func check(getenv func(string) string, socketDir string, timeout time.Duration) error {
	if getenv("WAYLAND_DISPLAY") != "" {
		return nil
	}
	name := getenv("DISPLAY")
	if name == "" {
		return fmt.Errorf("cannot open a display (neither DISPLAY nor WAYLAND_DISPLAY is set)")
	}
	m := xDisplay.FindStringSubmatch(name)
	if m == nil {
		return fmt.Errorf("cannot open display %q (not an X display name such as :0 or host:0.0)", name)
	}
	host := m[1]
	n, err := strconv.Atoi(m[2])
	if err != nil || n > 59535 {
		return fmt.Errorf("cannot open display %q (display number out of range)", name)
	}
	if host == "" || host == "unix" {
		// Looked for, not connected to: an X server started for one program
		// (xvfb-run's Xvfb) resets when its last client leaves, and a
		// connection made and closed here made the program's own fail.
		path := filepath.Join(socketDir, "X"+m[2])
		if st, err := os.Stat(path); err == nil && st.Mode()&os.ModeSocket != 0 || listening(procNetUnix, "@"+path) {
			return nil
		}
		return fmt.Errorf("cannot open display %q (no X server listens on %s)", name, path)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(6000+n))
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return fmt.Errorf("cannot open display %q (no X server answers at %s: %v)", name, addr, err)
	}
	c.Close()
	return nil
}
