//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"bizdata/shared/app"
	"bizdata/shared/testdb"
)

// tourMarker opens a README sh block the tour test treats apart: "skip"
// (not run, for the reason given) or "background" (a process a second
// terminal runs until Ctrl-C, started in the background and left running).
const tourMarker = "# tour test: "

// expectMarker starts a line that follows a command in a README sh block:
// the rest of the line must appear, exactly, in what the commands since the
// block's start or the previous expectation printed. In a background block,
// it is what the process prints by the end of the next block.
const expectMarker = "#=> "

// receiverMarker starts a line that shows what a receiver in another
// terminal prints after the command above it: "#8080=> TEXT" is TEXT printed
// by the background block listening on 127.0.0.1:8080, waited for as a
// delivery is asynchronous.
var receiverMarker = regexp.MustCompile(`^#([0-9]+)=> `)

// tourWait is how long the tour waits for what a receiver prints, and for a
// receiver to listen.
const tourWait = 30 * time.Second

// tourReadme is the README the tour test follows.
const tourReadme = "../../README.md"

// tourStep is a run of a README block's lines and what they must print.
type tourStep struct {
	line   int          // the README line of its first command
	script string       // the lines, as written
	expect []tourExpect // its #=> and #PORT=> lines
}

// tourExpect is a fragment of an answer: of the step's own output, or with
// port set, of what the receiver listening there prints.
type tourExpect struct {
	port string
	text string
}

// tourBlock is one README sh block, cut into steps at its #=> lines.
type tourBlock struct {
	line       int
	skip       string // why the tour test does not run it
	background bool
	steps      []tourStep
}

// readmeTour returns the README's sh blocks in order.
func readmeTour(t *testing.T) []tourBlock {
	t.Helper()
	f, err := os.Open(tourReadme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		blocks []tourBlock
		cur    *tourBlock
		step   tourStep
		n      int
	)
	flush := func() {
		if strings.TrimSpace(step.script) != "" || len(step.expect) > 0 {
			cur.steps = append(cur.steps, step)
		}
		step = tourStep{}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case cur == nil && line == "```sh":
			blocks = append(blocks, tourBlock{line: n + 1})
			cur = &blocks[len(blocks)-1]
		case cur == nil:
		case line == "```":
			flush()
			cur = nil
		case strings.HasPrefix(line, tourMarker) && len(cur.steps) == 0 && step.script == "":
			how := strings.TrimPrefix(line, tourMarker)
			switch {
			case strings.HasPrefix(how, "skip"):
				cur.skip = strings.TrimSpace(strings.TrimPrefix(how, "skip"))
			case strings.HasPrefix(how, "background"):
				cur.background = true
			default:
				t.Fatalf("README line %d: %q: the tour test knows %q and %q", n, line, tourMarker+"skip (why)", tourMarker+"background")
			}
		case strings.HasPrefix(line, expectMarker) || receiverMarker.MatchString(line):
			if step.script == "" && len(step.expect) == 0 && len(cur.steps) > 0 {
				// A second #=> line of the same command.
				step = cur.steps[len(cur.steps)-1]
				cur.steps = cur.steps[:len(cur.steps)-1]
			}
			e := tourExpect{text: strings.TrimPrefix(line, expectMarker)}
			if m := receiverMarker.FindStringSubmatch(line); m != nil {
				e = tourExpect{port: m[1], text: strings.TrimPrefix(line, m[0])}
			}
			step.expect = append(step.expect, e)
			flush()
		default:
			if step.script == "" {
				if strings.TrimSpace(line) == "" {
					continue
				}
				step.line = n
			}
			step.script += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// freePort returns a port of 127.0.0.1 nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// startBinary starts the devserver built at path on a free port, over cfg's
// table, keeping the demo account under dataDir, and returns its base URL
// and a function that interrupts it (SIGINT, as Ctrl-C does) and returns how
// it exited.
func startBinary(t *testing.T, path string, cfg app.Config, dataDir string) (string, func() error) {
	t.Helper()
	cmd := exec.Command(path)
	cmd.Env = append(os.Environ(), "DYNAMODB_ENDPOINT="+cfg.Endpoint, "TABLE_NAME="+cfg.TableName, "DATA_DIR="+dataDir, "PORT=0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	addr := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		lines.Buffer(make([]byte, 64<<10), 1<<20)
		for lines.Scan() {
			if a, ok := strings.CutPrefix(lines.Text(), "Business data API on "); ok {
				addr <- strings.Fields(a)[0]
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case a := <-addr:
		return a, func() error {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				return err
			}
			return <-exited
		}
	case err := <-exited:
		t.Fatalf("devserver exited before it served: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("devserver did not start in 60s")
	}
	return "", nil
}

// TestReadmeTour follows the README from top to bottom as written: every sh
// block, in order, in one bash at a repository root of its own, against a
// fresh devserver (as `make dev` starts it) and the receivers the README
// starts in other terminals. Each command's answer must show what the #=>
// lines after it say, and the receivers what its #PORT=> lines say; the
// first that does not fails the test, naming the README line. Only the ports differ from the README's (free ones, so a
// running `make dev` is no obstacle), and `go run ./infra/<cmd>` runs the
// command built once. Blocks marked "# tour test: skip" are left out.
func TestReadmeTour(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("README_TOUR_REQUIRED") != "" { // CI installs them
				t.Fatalf("the README's tour needs %s, which is not installed", tool)
			}
			t.Skipf("the README's tour needs %s, which is not installed", tool)
		}
	}
	blocks := readmeTour(t)
	root := t.TempDir() // the tour's repository root: .data and the receivers' files
	bin := filepath.Join(root, "bin")
	// The devserver, built and run as `make dev` runs it, and the commands the
	// README runs with `go run`, built while DynamoDB Local starts.
	built := make(chan error, 1)
	go func() {
		build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./infra/devserver", "./infra/admin", "./infra/receiver")
		build.Dir = "../.."
		if out, err := build.CombinedOutput(); err != nil {
			built <- fmt.Errorf("go build: %v\n%s", err, out)
		}
		close(built)
	}()
	cfg := testdb.Config(t)
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	base, interrupt := startBinary(t, filepath.Join(bin, "devserver"), cfg, filepath.Join(root, ".data"))
	// The receivers' ports: free ones now, each waited for until its
	// receiver listens on it.
	receiverPorts := map[string]string{"8080": freePort(t), "8081": freePort(t)}
	ports := strings.NewReplacer(
		"localhost:3000", strings.TrimPrefix(base, "http://"),
		"http://localhost:8000", cfg.Endpoint,
		"127.0.0.1:8080", "127.0.0.1:"+receiverPorts["8080"],
		"127.0.0.1:8081", "127.0.0.1:"+receiverPorts["8081"],
	)

	out := filepath.Join(root, "tour")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	file := func(name string, s string) string {
		p := filepath.Join(out, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	output := func(i int) string { return filepath.Join(out, strconv.Itoa(i)) }
	tries := int(tourWait / (100 * time.Millisecond))
	var script strings.Builder
	// pipefail: a command whose output a pipe hands on (X=$(curl … | jq …))
	// fails the tour when it fails, as in a terminal with set -e it would not.
	fmt.Fprintf(&script, `set -e -o pipefail
go() { if [ "$1" = run ]; then local cmd=${2#./infra/}; shift 2; %q/"$cmd" "$@"; else command go "$@"; fi; }
tour_failed() { echo "$1" > %q; exit 1; }
tour_await() { for _ in $(seq %d); do grep -qF -f "$2" "$1" && return 0; sleep 0.1; done; grep -qF -f "$2" "$1"; }
tour_listening() { for _ in $(seq %d); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
`, bin, filepath.Join(out, "failed"), tries, tries)
	type checked struct {
		block *tourBlock
		step  int
	}
	var (
		steps     []checked
		waiting   []int              // background steps whose output the next block's end awaits
		receivers = map[string]int{} // a README receiver port: the background step listening there
	)
	for b := range blocks {
		blk := &blocks[b]
		if blk.skip != "" {
			continue
		}
		if blk.background {
			i := len(steps)
			steps = append(steps, checked{blk, 0})
			var all tourStep
			for _, s := range blk.steps {
				all.script += s.script
				for _, e := range s.expect {
					if e.port != "" {
						t.Fatalf("README line %d: a background block shows its own output with %q lines", s.line, expectMarker)
					}
					all.expect = append(all.expect, e)
				}
			}
			blk.steps = []tourStep{{line: blk.steps[0].line, script: all.script, expect: all.expect}}
			fmt.Fprintf(&script, "( %s) > %q 2>&1 &\n", ports.Replace(all.script), output(i))
			// The next command may send to it at once: wait until it listens.
			for orig, port := range receiverPorts {
				if strings.Contains(all.script, "127.0.0.1:"+orig) {
					receivers[orig] = i
					fmt.Fprintf(&script, "tour_listening %s || tour_failed '%d -1'\n", port, i)
				}
			}
			if len(all.expect) > 0 {
				waiting = append(waiting, i)
			}
			continue
		}
		var wait []int
		wait, waiting = waiting, nil
		for s, st := range blk.steps {
			i := len(steps)
			steps = append(steps, checked{blk, s})
			fmt.Fprintf(&script, "echo %d > %q\n{\n%s} > %q 2>&1\n", i, filepath.Join(out, "current"), ports.Replace(st.script), output(i))
			for k, e := range st.expect {
				exp := file(fmt.Sprintf("%d.expect.%d", i, k), ports.Replace(e.text)+"\n")
				if e.port == "" {
					fmt.Fprintf(&script, "grep -qF -f %q %q || tour_failed '%d %d'\n", exp, output(i), i, k)
					continue
				}
				r, ok := receivers[e.port]
				if !ok {
					t.Fatalf("README line %d: #%s=> names no receiver started before it on 127.0.0.1:%s", st.line, e.port, e.port)
				}
				fmt.Fprintf(&script, "tour_await %q %q || tour_failed '%d %d'\n", output(r), exp, i, k)
			}
		}
		for _, i := range wait {
			for k, e := range steps[i].block.steps[0].expect {
				exp := file(fmt.Sprintf("%d.expect.%d", i, k), ports.Replace(e.text)+"\n")
				fmt.Fprintf(&script, "tour_await %q %q || tour_failed '%d %d'\n", output(i), exp, i, k)
			}
		}
	}

	// The tour ends before the test's own deadline, so that a command that
	// hangs is reported as such, with the step it hung in.
	ctx, cancel := context.WithCancel(context.Background())
	if deadline, ok := t.Deadline(); ok {
		margin := time.Until(deadline) / 10
		if margin > 30*time.Second {
			margin = 30 * time.Second
		}
		ctx, cancel = context.WithDeadline(context.Background(), deadline.Add(-margin))
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = root
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "DYNAMODB_ENDPOINT", "CURSOR_SECRET", "API_KEY", "BASE", "WEBHOOK_SECRET", "PORT", "DATA_DIR":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// The README's admin commands use the default table name; this
	// devserver's table has a name of its own.
	cmd.Env = append(cmd.Env, "TABLE_NAME="+cfg.TableName)
	// Its own process group, so the receivers it leaves running stop with it,
	// at the end, on a failure and at the deadline.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var combined bytes.Buffer
	cmd.Stdout, cmd.Stderr = &combined, &combined
	begun := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	t.Logf("the tour ran %d steps in %s", len(steps), time.Since(begun).Round(time.Millisecond))
	if err == nil {
		// Ctrl-C on make dev: the devserver stops cleanly and says so with
		// its exit status, which make reports.
		if err := interrupt(); err != nil {
			t.Errorf("the devserver, interrupted as Ctrl-C does, exited with %v", err)
		}
		return
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(out, name))
		return strings.TrimSpace(string(b))
	}
	var i, k int
	if _, scanErr := fmt.Sscan(read("failed"), &i, &k); scanErr != nil {
		// A command failed (set -e), or the deadline came: the step that was running.
		i, _ = strconv.Atoi(read("current"))
		st := steps[i].block.steps[steps[i].step]
		why := fmt.Sprintf("a command failed (%v)", err)
		if ctx.Err() != nil {
			why = "the tour did not end before the test's deadline; this step was running"
		}
		t.Fatalf("README line %d: %s:\n%s\nprinted:\n%s%s", st.line, why, st.script, read(strconv.Itoa(i)), combined.String())
	}
	st := steps[i].block.steps[steps[i].step]
	if k < 0 {
		t.Fatalf("README line %d: the receiver did not listen within %s:\n%s\nprinted:\n%s", st.line, tourWait, st.script, read(strconv.Itoa(i)))
	}
	e := st.expect[k]
	if e.port == "" {
		t.Fatalf("README line %d:\n%s\nprinted:\n%s\n\nwhere the README shows\n%s%s", st.line, st.script, read(strconv.Itoa(i)), expectMarker, e.text)
	}
	r := receivers[e.port]
	t.Fatalf("README line %d:\n%s\nthe receiver of README line %d printed within %s:\n%s\n\nwhere the README shows\n#%s=> %s", st.line, st.script, steps[r].block.steps[0].line, tourWait, read(strconv.Itoa(r)), e.port, e.text)
}

// TestMakeDevInterrupt runs `make dev` as a reader does, on free ports and
// with its data in a directory of its own, waits until the API answers, and
// presses Ctrl-C (SIGINT to the whole process group, as a terminal sends it):
// make must end without reporting an error, and DynamoDB Local must be gone.
func TestMakeDevInterrupt(t *testing.T) {
	for _, tool := range []string{"make", "bash", "java", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("make dev needs %s, which is not installed", tool)
		}
	}
	apiPort, ddbPort := freePort(t), freePort(t)
	cmd := exec.Command("make", "--no-print-directory", "dev", "PORT="+apiPort, "DDB_PORT="+ddbPort, "DEV_DATA="+t.TempDir())
	cmd.Dir = "../.."
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "DYNAMODB_ENDPOINT", "TABLE_NAME", "PORT", "DATA_DIR", "MAKEFLAGS", "MAKELEVEL", "MFLAGS":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// Its own process group, as a terminal's foreground job has.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	var (
		mu      sync.Mutex
		printed strings.Builder
	)
	serving := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(pr)
		for lines.Scan() {
			mu.Lock()
			printed.WriteString(lines.Text() + "\n")
			mu.Unlock()
			if strings.HasPrefix(lines.Text(), "Business data API on ") {
				close(serving)
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); _ = pw.Close() }()
	output := func() string { mu.Lock(); defer mu.Unlock(); return printed.String() }
	select {
	case <-serving:
	case err := <-exited:
		t.Fatalf("make dev exited before it served (%v):\n%s", err, output())
	case <-time.After(3 * time.Minute):
		t.Fatalf("make dev did not serve within 3 minutes:\n%s", output())
	}
	resp, err := http.Get("http://127.0.0.1:" + apiPort + "/api/v1/user/authenticate")
	if err != nil {
		t.Fatalf("make dev's API: %v\n%s", err, output())
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("make dev's API answered %s to a request without a key, want 401", resp.Status)
	}

	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		t.Fatalf("make dev still runs a minute after Ctrl-C:\n%s", output())
	}
	// The recipe must end 0. make itself then ends as its own Ctrl-C
	// handler does, by the same signal (what a shell shows as status 130,
	// printing nothing): a recipe that failed instead is reported as
	// "make: *** [dev] Error 1", exit status 2.
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGINT) {
		t.Errorf("make dev, interrupted as Ctrl-C does, exited with %v", err)
	}
	if strings.Contains(output(), "Error") || strings.Contains(output(), "***") {
		t.Errorf("make dev reported an error on Ctrl-C:\n%s", output())
	}
	// DynamoDB Local stops with it (the recipe's trap stops it, whatever
	// ended the devserver).
	for tries := 0; ; tries++ {
		c, err := net.Dial("tcp", "127.0.0.1:"+ddbPort)
		if err != nil {
			break
		}
		_ = c.Close()
		if tries == 100 {
			t.Fatalf("DynamoDB Local still listens on %s 10 s after make dev ended", ddbPort)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestStartInterrupted presses Ctrl-C while infra/dynamodb-local/start.sh
// waits for DynamoDB Local to answer, as during `make dev`'s first seconds:
// Java, started in the background (with SIGINT ignored, unless the JVM
// handles it itself), must stop with it.
func TestStartInterrupted(t *testing.T) {
	for _, tool := range []string{"bash", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("start.sh needs %s, which is not installed", tool)
		}
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("finding start.sh's Java needs /proc")
	}
	cmd := exec.Command("../dynamodb-local/start.sh", freePort(t))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var printed bytes.Buffer
	cmd.Stdout, cmd.Stderr = &printed, &printed
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	// Java is start.sh's child as soon as it is started (the subshell that
	// starts it execs it).
	children := fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid)
	java := 0
	for tries := 0; java == 0; tries++ {
		b, _ := os.ReadFile(children)
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			// DynamoDB Local's, not the `java --list-modules` of its check.
			if args, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); bytes.Contains(args, []byte("DynamoDBLocal")) {
				java = pid
			}
		}
		if tries == 300 {
			t.Fatalf("start.sh started no Java within 30 s:\n%s", printed.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err == nil {
		t.Skipf("DynamoDB Local answered before the interrupt (start.sh printed %q): nothing to judge", printed.String())
	}
	for tries := 0; syscall.Kill(java, 0) == nil; tries++ {
		if tries == 100 {
			_ = syscall.Kill(java, syscall.SIGKILL)
			t.Fatalf("Java (pid %d) still runs 10 s after start.sh was interrupted (%v)", java, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
