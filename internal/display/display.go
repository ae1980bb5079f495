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
	"time"
)

// Check returns nil when a display can be reached, and otherwise an error
// saying which display could not be opened and why. On macOS and Windows
// there is always one. Elsewhere (X11 or Wayland): WAYLAND_DISPLAY set, or
// DISPLAY set to an X server that answers — a local ":N" or ":N.S" on the
// socket /tmp/.X11-unix/XN (or Linux's abstract one of that name), a
// "host:N" on TCP port 6000+N within a second.
func Check() error {
	switch runtime.GOOS {
	case "darwin", "windows", "ios", "android":
		return nil
	}
	return check(os.Getenv, "/tmp/.X11-unix", time.Second)
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
		path := filepath.Join(socketDir, "X"+m[2])
		c, err := net.DialTimeout("unix", path, timeout)
		if err != nil && runtime.GOOS == "linux" {
			c, err = net.DialTimeout("unix", "@"+path, timeout) // the abstract socket
		}
		if err != nil {
			return fmt.Errorf("cannot open display %q (no X server answers on %s)", name, path)
		}
		c.Close()
		return nil
	}
	addr := net.JoinHostPort(host, strconv.Itoa(6000+n))
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return fmt.Errorf("cannot open display %q (no X server answers at %s: %v)", name, addr, err)
	}
	c.Close()
	return nil
}
