//go:build !linux

package testdb

import "os/exec"

// dieWithParent is a no-op where the OS has no parent-death signal.
func dieWithParent(*exec.Cmd) {}
