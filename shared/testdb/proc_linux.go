package testdb

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the JVM exit with the test binary, even when a panic
// skips Main's cleanup.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
