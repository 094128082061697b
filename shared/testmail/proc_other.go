//go:build !linux

package testmail

import "os/exec"

// stopWithParent is a no-op where the OS has no parent-death signal.
func stopWithParent(*exec.Cmd) {}
