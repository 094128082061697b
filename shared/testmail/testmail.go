// Package testmail gives tests a real mail server: Mailpit at MAILPIT_SMTP
// (SMTP) and MAILPIT_URL (its web inbox and API) when both are set,
// otherwise one it starts itself, once per test binary, built by
// infra/mailpit/build.sh. Tests read what arrived through Mailpit's API,
// each by a recipient of its own, so parallel tests never see each other's
// mail.
package testmail

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Inbox is a running Mailpit.
type Inbox struct {
	smtpAddr, webURL string
}

var (
	once     sync.Once
	inbox    *Inbox
	startErr error
)

// Start returns the Mailpit of this test binary, starting it on first use.
// It stops when the binary exits.
func Start(tb testing.TB) *Inbox {
	tb.Helper()
	once.Do(func() {
		web, smtp := os.Getenv("MAILPIT_URL"), os.Getenv("MAILPIT_SMTP")
		if web != "" && smtp != "" {
			inbox = &Inbox{smtpAddr: smtp, webURL: strings.TrimSuffix(web, "/")}
			return
		}
		inbox, startErr = start()
	})
	if startErr != nil {
		tb.Fatalf("Mailpit: %v", startErr)
	}
	return inbox
}

// SMTPAddr is the host:port of Mailpit's SMTP server.
func (in *Inbox) SMTPAddr() string { return in.smtpAddr }

// WebURL is the base URL of Mailpit's web inbox and API, without a
// trailing slash.
func (in *Inbox) WebURL() string { return in.webURL }

// StartupTimeout bounds how long Start waits for a Mailpit it started
// (the build, when infra/mailpit/build.sh has not run yet, comes before).
const StartupTimeout = 30 * time.Second

// start builds Mailpit if needed and runs it on free ports of 127.0.0.1,
// with a temporary database it deletes when it stops.
func start() (*Inbox, error) {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("find the module: %w", err)
	}
	build := exec.Command(filepath.Join(filepath.Dir(strings.TrimSpace(string(root))), "infra/mailpit/build.sh"))
	build.Stderr = os.Stderr
	bin, err := build.Output()
	if err != nil {
		return nil, fmt.Errorf("infra/mailpit/build.sh: %w", err)
	}
	web, smtp := freeAddr(), freeAddr()
	if web == "" || smtp == "" {
		return nil, errors.New("no free port on 127.0.0.1")
	}
	// No cap on the messages kept (a whole package's tests write there), no
	// update check (no call to the internet), no reverse DNS lookup of each
	// client.
	proc := exec.Command(strings.TrimSpace(string(bin)), "--listen", web, "--smtp", smtp, "--max", "0",
		"--disable-version-check", "--smtp-disable-rdns", "--quiet")
	stopWithParent(proc)
	if err := proc.Start(); err != nil {
		return nil, fmt.Errorf("start mailpit: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- proc.Wait() }()
	in := &Inbox{smtpAddr: smtp, webURL: "http://" + web}
	for deadline := time.Now().Add(StartupTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("mailpit exited: %v", err)
		default:
		}
		if in.ready() {
			return in, nil
		}
	}
	_ = proc.Process.Kill()
	return nil, fmt.Errorf("no answer on %s and %s after %s", web, smtp, StartupTimeout)
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago.
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return ""
	}
	defer ln.Close()
	return ln.Addr().String()
}

// ready reports whether both the API and the SMTP server answer.
func (in *Inbox) ready() bool {
	res, err := http.Get(in.webURL + "/readyz")
	if err != nil {
		return false
	}
	res.Body.Close()
	c, err := net.Dial("tcp", in.smtpAddr)
	if err != nil {
		return false
	}
	c.Close()
	return res.StatusCode == http.StatusOK
}

// Received is a message as Mailpit received it, its headers decoded.
type Received struct {
	// ID is Mailpit's id of the message.
	ID string
	// MessageID is its Message-ID header, without the angle brackets.
	MessageID string
	// From and To are the bare addresses of the From and To headers.
	From string
	To   []string
	// Subject is the decoded subject.
	Subject string
	// Text and HTML are the decoded bodies (HTML empty without one).
	Text, HTML string
	// Date is the Date header.
	Date time.Time
}

// Messages returns the messages sent to the address to so far, oldest
// first: those whose To header holds that very address (Mailpit's search
// matches parts of addresses too).
func (in *Inbox) Messages(tb testing.TB, to string) []Received {
	tb.Helper()
	var found struct {
		Messages []struct{ ID string }
	}
	in.get(tb, "/api/v1/search?"+url.Values{"query": {`to:"` + to + `"`}, "limit": {"1000"}}.Encode(), &found)
	var out []Received
	for i := len(found.Messages) - 1; i >= 0; i-- { // Mailpit lists the newest first
		var m struct {
			ID, MessageID, Subject, Text, HTML string
			From                               struct{ Address string }
			To                                 []struct{ Address string }
			Date                               time.Time
		}
		in.get(tb, "/api/v1/message/"+url.PathEscape(found.Messages[i].ID), &m)
		r := Received{ID: m.ID, MessageID: m.MessageID, From: m.From.Address, Subject: m.Subject, Text: m.Text, HTML: m.HTML, Date: m.Date}
		mine := false
		for _, a := range m.To {
			r.To = append(r.To, a.Address)
			mine = mine || strings.EqualFold(a.Address, to)
		}
		if mine {
			out = append(out, r)
		}
	}
	return out
}

// WaitFor waits until at least n messages sent to the address to have
// arrived and returns them all (there may be more than n), failing the
// test when fewer have after timeout.
func (in *Inbox) WaitFor(tb testing.TB, to string, n int, timeout time.Duration) []Received {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := in.Messages(tb, to)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			tb.Fatalf("Mailpit: %d messages for the recipient after %s, want %d", len(got), timeout, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// get decodes the JSON Mailpit answers to a GET of path into v.
func (in *Inbox) get(tb testing.TB, path string, v any) {
	tb.Helper()
	res, err := http.Get(in.webURL + path)
	if err != nil {
		tb.Fatalf("Mailpit API: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		tb.Fatalf("Mailpit API: GET %s answered %s", strings.SplitN(path, "?", 2)[0], res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		tb.Fatalf("Mailpit API: GET %s: %v", strings.SplitN(path, "?", 2)[0], err)
	}
}
