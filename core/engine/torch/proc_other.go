//go:build !linux

package torch

import "os/exec"

// ownProcessGroup does nothing here: the worker ends at the end of its
// stdin, which closes with this process, and when its parent changes.
func ownProcessGroup(*exec.Cmd) {}

func killProcessGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
