package torch

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the worker (or its ssh) in a process group of its
// own, which kill ends whole, and has the kernel kill it when the thread
// that started it ends with this process (Pdeathsig): a worker never
// outlives Faithlab, even killed with -9. The worker also ends at the end
// of its stdin and when its parent changes.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killProcessGroup(cmd *exec.Cmd) {
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		cmd.Process.Kill()
	}
}
