// Package docs holds the project's documents. Its tests keep the README, the
// front door, true to the repository (it renders as written, names the Go
// version go.mod asks for and links to files that exist), and check the
// check CI runs on the repository's files.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

func readme(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// TestReadmeFences: every code fence opens with ``` and a language on a line
// of its own and closes with ``` alone on its line, so no prose or heading
// vanishes into a code block when the page is rendered (a fence followed by
// text does not close the block in CommonMark).
func TestReadmeFences(t *testing.T) {
	open := 0 // the line that opened the current block, 0 outside one
	for i, line := range readme(t) {
		n := i + 1
		fence := strings.HasPrefix(strings.TrimSpace(line), "```")
		switch {
		case open == 0 && fence:
			if info := strings.TrimPrefix(line, "```"); line != strings.TrimSpace(line) || info == "" || strings.ContainsAny(info, " `") {
				t.Errorf("line %d: %q: a fence opens with ``` and a language (sh, js, go…) at the start of its own line", n, line)
			}
			open = n
		case open != 0 && fence:
			if line != "```" {
				t.Errorf("line %d: %q: the block opened on line %d must close with ``` alone on its line; this line leaves it open", n, line, open)
			}
			open = 0
		case open != 0 && regexp.MustCompile(`^#{2,6} `).MatchString(line):
			t.Errorf("line %d: heading %q is inside the code block opened on line %d", n, line, open)
		}
	}
	if open != 0 {
		t.Errorf("the code block opened on line %d never closes", open)
	}
}

// TestReadmeGoVersion: the README asks for the Go go.mod requires.
func TestReadmeGoVersion(t *testing.T) {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.ParseLax("go.mod", b, nil)
	if err != nil || mod.Go == nil {
		t.Fatalf("go.mod: %v", err)
	}
	want := "Go " + mod.Go.Version + " or newer"
	if !strings.Contains(strings.Join(readme(t), " "), want) {
		t.Errorf("README's prerequisites do not say %q (go.mod: go %s)", want, mod.Go.Version)
	}
}

// TestReadmeLinks: every relative link of the README names a file or folder
// of the repository.
func TestReadmeLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	for i, line := range readme(t) {
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
				t.Errorf("line %d: link to %s: %v", i+1, m[1], err)
			}
		}
	}
}
