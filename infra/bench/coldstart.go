package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// coldStart reports every arm64 bootstrap's size and, for get-sale built for
// this machine, the time from process start to the first handled event,
// served by a minimal Lambda Runtime API.
func (b *bench) coldStart(bins string) error {
	b.printf("## Cold start\n\n`bootstrap` sizes (linux/arm64, `-tags lambda.norpc -trimpath -ldflags \"-s -w\"`, from `make build`). Target: at most 12 MB.\n\n| function | bytes | MB |\n|---|---|---|\n")
	paths, _ := filepath.Glob(filepath.Join(bins, "*", "bootstrap"))
	if len(paths) == 0 {
		return fmt.Errorf("no bootstraps under %s (run make build)", bins)
	}
	largest := int64(0)
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		largest = max(largest, fi.Size())
		b.printf("| %s | %d | %.2f |\n", filepath.Base(filepath.Dir(p)), fi.Size(), float64(fi.Size())/1e6)
	}
	b.printf("\nLargest: %.2f MB.\n\n", float64(largest)/1e6)

	tmp, err := os.MkdirTemp("", "coldstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./functions/get-sale")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	var runs []time.Duration
	for i := 0; i < 7; i++ {
		d, err := b.coldOnce(bin)
		if err != nil {
			return err
		}
		runs = append(runs, d)
	}
	b.printf("Process start to first handled event (`get-sale` built for this machine, a local Lambda Runtime API serving one `GET /api/v1/sales/100042` event, table on DynamoDB Local), 7 starts: median %s, min %s, max %s.\n\n",
		median(runs).Round(time.Millisecond/10), pct(runs, 0).Round(time.Millisecond/10), pct(runs, 1).Round(time.Millisecond/10))
	return nil
}

// coldOnce starts the function once and times it to its first response.
func (b *bench) coldOnce(bin string) (time.Duration, error) {
	event := fmt.Sprintf(`{"version":"2.0","rawPath":"/api/v1/sales/100042","rawQueryString":"","headers":{"authorization":"Bearer %s"},"requestContext":{"domainName":"x","stage":"$default","http":{"method":"GET","path":"/api/v1/sales/100042"}}}`, b.key)
	done := make(chan string, 1)
	served := false
	var mu sync.Mutex
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := !served
		served = true
		mu.Unlock()
		if !first {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Lambda-Runtime-Aws-Request-Id", "req-1")
		w.Header().Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(time.Now().Add(time.Minute).UnixMilli()))
		w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:local:0:function:get-sale")
		_, _ = io.WriteString(w, event)
	})
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		done <- string(body)
	})
	mux.HandleFunc("POST /2018-06-01/runtime/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		done <- "error: " + string(body)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	rt := &http.Server{Handler: mux}
	go rt.Serve(ln)
	defer rt.Close()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String(), "TABLE_NAME="+b.cfg.TableName,
		"DYNAMODB_ENDPOINT="+b.cfg.Endpoint, "CURSOR_SECRET="+b.cfg.CursorSecret, "AWS_LAMBDA_FUNCTION_NAME=get-sale")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	select {
	case body := <-done:
		d := time.Since(start)
		if !strings.Contains(body, `"statusCode":200`) {
			return 0, fmt.Errorf("first event answered %s", body)
		}
		return d, nil
	case <-time.After(30 * time.Second):
		return 0, fmt.Errorf("no response within 30s")
	}
}
