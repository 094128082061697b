package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"bizdata/shared/testdb"
)

// TestPrintedOwnerSignsIn: the devserver prints the dashboard's address and
// the demo owner's sign-in, and that sign-in reaches the demo account's
// overview, at every start, even after the owner changed the password.
func TestPrintedOwnerSignsIn(t *testing.T) {
	dir := t.TempDir()
	cfg := testdb.Config(t)
	for start := range 2 {
		var out testdb.Buffer
		base, stop := startWithOutput(t, cfg, dir, &out)
		m := regexp.MustCompile(`Dashboard on (http://\S+/dashboard)\nSign in as (\S+) with the password (\S+)\n`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("start %d printed no dashboard sign-in:\n%s", start, out.String())
		}
		if !strings.HasPrefix(m[1], base) {
			t.Fatalf("dashboard %s is not on %s", m[1], base)
		}
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar}
		page := get(t, client, m[1]+"/sign-in")
		csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
		if csrf == nil {
			t.Fatalf("no sign-in form:\n%s", page)
		}
		res, err := client.PostForm(m[1]+"/sign-in", url.Values{"email": {m[2]}, "password": {m[3]}, "csrf": {csrf[1]}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Request.URL.Path != "/dashboard" || !strings.Contains(string(body), "Demo Shop") {
			t.Fatalf("start %d: sign-in with the printed password: %d at %s", start, res.StatusCode, res.Request.URL)
		}
		if start == 0 { // the owner changes the password; the next start sets the printed one back
			page := get(t, client, m[1]+"/settings")
			token := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
			res, err := client.PostForm(m[1]+"/settings/password", url.Values{"current": {m[3]}, "password": {"changed by the owner"},
				"confirm": {"changed by the owner"}, "csrf": {token[1]}})
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("password change: %d", res.StatusCode)
			}
		}
		stop()
	}
}

func get(t *testing.T, client *http.Client, u string) string {
	t.Helper()
	res, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}
