package main

// A function's own binary, built for this machine, run under a minimal
// Lambda Runtime API: for the cold start, init and memory steps.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// hostBuild builds the named functions for this machine into dir/<name>,
// with the flags make build uses.
func hostBuild(dir string, names ...string) error {
	args := []string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", dir + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, "./functions/"+n)
	}
	build := exec.Command("go", args...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	return nil
}

// lambdaProc is a function's process under a minimal Lambda Runtime API
// that hands it one event per invoke, as Lambda does a warm environment.
type lambdaProc struct {
	cmd     *exec.Cmd
	rt      *http.Server
	started time.Time // just before the process started
	next    chan lambdaInvocation
	done    chan lambdaAnswer
	seq     int
}

type lambdaInvocation struct {
	id       string
	event    []byte
	deadline time.Time
}

type lambdaAnswer struct {
	body []byte
	err  error
}

// startLambda starts the function bin (its name for the runtime) with the
// bench's table, and env added to its environment.
func (b *bench) startLambda(bin, name string, env ...string) (*lambdaProc, error) {
	p := &lambdaProc{next: make(chan lambdaInvocation), done: make(chan lambdaAnswer, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		select {
		case inv := <-p.next:
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", inv.id)
			w.Header().Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(inv.deadline.UnixMilli()))
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:local:0:function:"+name)
			_, _ = w.Write(inv.event)
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		p.done <- lambdaAnswer{body: body}
	})
	mux.HandleFunc("POST /2018-06-01/runtime/", func(w http.ResponseWriter, r *http.Request) { // an invocation's or init's error
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		p.done <- lambdaAnswer{err: fmt.Errorf("%s: %s", r.URL.Path, body)}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.rt = &http.Server{Handler: mux}
	go p.rt.Serve(ln)
	p.cmd = exec.Command(bin)
	p.cmd.Env = append(os.Environ(), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String(), "TABLE_NAME="+b.cfg.TableName,
		"DYNAMODB_ENDPOINT="+b.cfg.Endpoint, "CURSOR_SECRET="+b.cfg.CursorSecret, "AWS_LAMBDA_FUNCTION_NAME="+name)
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, io.Discard
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		p.rt.Close()
		return nil, err
	}
	return p, nil
}

// invoke hands the function one event with timeout to its deadline, and
// returns its answer.
func (p *lambdaProc) invoke(event []byte, timeout time.Duration) (string, error) {
	p.seq++
	inv := lambdaInvocation{id: fmt.Sprintf("req-%d", p.seq), event: event, deadline: time.Now().Add(timeout)}
	give := time.After(timeout + 30*time.Second)
	select {
	case p.next <- inv:
	case <-give:
		return "", errors.New("the function did not ask for its next event in time")
	}
	select {
	case a := <-p.done:
		return string(a.body), a.err
	case <-give:
		return "", fmt.Errorf("no answer within %s", timeout+30*time.Second)
	}
}

func (p *lambdaProc) stop() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.rt.Close()
}

// runTime is the CPU time the process's threads have run, to the
// nanosecond (the sum of their schedstat run times; Go's threads do not exit).
func (p *lambdaProc) runTime() (time.Duration, error) {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p.cmd.Process.Pid))
	if err != nil || len(stats) == 0 {
		return 0, fmt.Errorf("no schedstat: %v", err)
	}
	var total time.Duration
	for _, path := range stats {
		stat, err := os.ReadFile(path)
		if err != nil {
			return 0, err
		}
		ns, err := strconv.ParseInt(strings.Fields(string(stat))[0], 10, 64)
		if err != nil {
			return 0, err
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// peakRSS is the process's peak resident set (VmHWM) in MB.
func (p *lambdaProc) peakRSS() (float64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, err := strconv.Atoi(f[1])
			return float64(kb) / 1024, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// cpuTime is the CPU time the process has used (utime+stime, in the kernel's
// 100 Hz clock ticks).
func (p *lambdaProc) cpuTime() (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command's closing parenthesis start at field 3;
	// utime and stime are fields 14 and 15.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, errors.Join(err1, err2)
}
