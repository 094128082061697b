package testmail

import (
	"os/exec"
	"syscall"
)

// stopWithParent makes Mailpit stop with the test binary, even when a panic
// skips every cleanup: SIGTERM, on which Mailpit deletes its temporary
// database.
func stopWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
