package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFilesRefusesBuildOutput runs .ci/check-files (make lint runs it in
// CI) on a scratch repository: a tracked executable and a tracked file over
// 1 MB are refused, by name; text files and scripts pass.
func TestCheckFilesRefusesBuildOutput(t *testing.T) {
	script, err := filepath.Abs("../.ci/check-files")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable() // this test binary: an executable, as `go build` leaves one
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write := func(name string, b []byte, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, mode); err != nil {
			t.Fatal(err)
		}
	}
	check := func() (string, error) {
		cmd := exec.Command("bash", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	git("init", "-q")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	write("README.md", []byte("# a project\n"), 0o644)
	write("start.sh", []byte("#!/bin/sh\necho hi\n"), 0o755)
	if err := os.MkdirAll(filepath.Join(dir, "docs", "img"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("docs/img/screen.png", png, 0o644) // the README's screenshots belong
	git("add", ".")
	if out, err := check(); err != nil {
		t.Fatalf("a clean repository is refused: %v %s", err, out)
	}

	write("bench", exe[:64<<10], 0o755) // an ELF header and what follows
	write("big.json", []byte(strings.Repeat("a", 1<<20+1)), 0o644)
	write("shot.png", png, 0o644) // an image anywhere else is refused
	git("add", ".")
	out, err := check()
	if err == nil || !strings.Contains(out, "binary file (executable, object or other non-text): bench") || !strings.Contains(out, "file over 1 MB (1048577 bytes): big.json") ||
		!strings.Contains(out, ": shot.png") || strings.Contains(out, "screen.png") {
		t.Fatalf("check-files: %v\n%s", err, out)
	}
}
