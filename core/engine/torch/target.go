package torch

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Target says where a worker runs and how it is started: an engine
// setting's parsed form.
//
//	torch                          a worker on this machine
//	torch@ssh://HOST               a worker on HOST, through ssh ([user@]host[:port])
//	…?python=PATH&device=D&threads=N
//
// python is the interpreter with PyTorch (default: /usr/bin/python3 on
// this machine when it exists, else python3; python3 on a remote host);
// device is auto (CUDA when the worker sees a GPU, else CPU), cpu, cuda or
// cuda:I; threads bounds a CPU worker's threads (0: every core it sees).
type Target struct {
	Host    string // ssh destination, [user@]host; "" for this machine
	Port    int    // ssh port; 0: ssh's default
	Python  string
	Device  string
	Threads int
}

// Kind is the engine's kind, as results are filed: "torch" wherever it runs.
const Kind = "torch"

// ParseTarget reads an engine setting of kind torch (see Target).
func ParseTarget(s string) (Target, error) {
	var t Target
	rest, query, _ := strings.Cut(strings.TrimSpace(s), "?")
	switch {
	case rest == Kind:
	case strings.HasPrefix(rest, Kind+"@"):
		u, err := url.Parse(strings.TrimPrefix(rest, Kind+"@"))
		if err != nil || u.Scheme != "ssh" || u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
			return t, fmt.Errorf("engine %q: want torch@ssh://HOST ([user@]host[:port])", s)
		}
		host := u.Hostname()
		if err := checkHost(host); err != nil {
			return t, fmt.Errorf("engine %q: %w", s, err)
		}
		t.Host = host
		if u.User != nil {
			if _, set := u.User.Password(); set || !plainName(u.User.Username()) {
				return t, fmt.Errorf("engine %q: a user name of letters, digits, '.', '_' and '-' (and no password)", s)
			}
			t.Host = u.User.Username() + "@" + t.Host
		}
		if p := u.Port(); p != "" {
			if t.Port, err = strconv.Atoi(p); err != nil || t.Port < 1 || t.Port > 65535 {
				return t, fmt.Errorf("engine %q: port %q", s, p)
			}
		}
		if strings.HasPrefix(t.Host, "-") {
			return t, fmt.Errorf("engine %q: a host may not start with '-'", s)
		}
	default:
		return t, fmt.Errorf("engine %q: want torch or torch@ssh://HOST", s)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return t, fmt.Errorf("engine %q: options: %w", s, err)
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "python":
			if v == "" {
				return t, fmt.Errorf("engine %q: python= names no interpreter", s)
			}
			t.Python = v
		case "device":
			if v != "auto" && v != "cpu" && v != "cuda" && !(strings.HasPrefix(v, "cuda:") && isDigits(v[5:])) {
				return t, fmt.Errorf("engine %q: device %q: auto, cpu, cuda or cuda:I", s, v)
			}
			t.Device = v
		case "threads":
			if t.Threads, err = strconv.Atoi(v); err != nil || t.Threads < 0 {
				return t, fmt.Errorf("engine %q: threads %q: want 0 (every core) or more", s, v)
			}
		default:
			return t, fmt.Errorf("engine %q: unknown option %q (python, device, threads)", s, k)
		}
	}
	return t, nil
}

// checkHost accepts a host name or an IP address, nothing that ssh could
// read otherwise.
func checkHost(h string) error {
	if strings.Contains(h, ":") {
		if ip := net.ParseIP(h); ip == nil || ip.To4() != nil {
			return fmt.Errorf("host %q: want a host name or an IP address", h)
		}
		return nil
	}
	if !plainName(h) || strings.HasPrefix(h, "-") {
		return fmt.Errorf("host %q: want a host name (letters, digits, '.', '_' and '-', not first) or an IP address", h)
	}
	return nil
}

// plainName reports whether s is a non-empty name of letters, digits,
// '.', '_' and '-'.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// String writes the target back as an engine setting.
func (t Target) String() string {
	s := Kind
	if t.Host != "" {
		user, host, found := strings.Cut(t.Host, "@")
		if !found {
			user, host = "", user
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]" // an IPv6 address
		}
		if found {
			host = user + "@" + host
		}
		s += "@ssh://" + host
		if t.Port != 0 {
			s += ":" + strconv.Itoa(t.Port)
		}
	}
	q := url.Values{}
	if t.Python != "" {
		q.Set("python", t.Python)
	}
	if t.Device != "" && t.Device != "auto" {
		q.Set("device", t.Device)
	}
	if t.Threads != 0 {
		q.Set("threads", strconv.Itoa(t.Threads))
	}
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

// python is the interpreter the worker runs under.
func (t Target) python() string {
	switch {
	case t.Python != "":
		return t.Python
	case t.Host != "":
		return "python3"
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// where names the worker's machine for messages.
func (t Target) where() string {
	if t.Host == "" {
		return "this machine"
	}
	return t.Host
}
