package campaign

import (
	"os"
	"strconv"
	"strings"
)

// loadSample is the machine's busy CPU time and this process's own, in
// clock ticks (/proc/stat, /proc/self/stat), at some moment.
type loadSample struct {
	work, total, own float64
	ok               bool
}

// startLoad samples the machine's load now, for busy to compare with.
func startLoad() loadSample {
	var l loadSample
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return l
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return l
	}
	for i, v := range f[1:] {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return l
		}
		if i >= 8 {
			break // guest times are counted in user's already
		}
		l.total += x
		if i != 3 && i != 4 { // idle, iowait
			l.work += x
		}
	}
	b, err = os.ReadFile("/proc/self/stat")
	if err != nil {
		return l
	}
	s := string(b)
	f = strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return l
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	k, err2 := strconv.ParseFloat(f[12], 64)
	l.own, l.ok = u+k, err1 == nil && err2 == nil
	return l
}

// busy is the share of the machine's CPU time since l that other
// processes than this one took (negative: not known).
func (l loadSample) busy() float64 {
	now := startLoad()
	if !l.ok || !now.ok || now.total <= l.total {
		return -1
	}
	others := (now.work - l.work) - (now.own - l.own)
	return max(0, min(1, others/(now.total-l.total)))
}
