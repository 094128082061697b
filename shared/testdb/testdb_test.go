package testdb

import (
	"net"
	"net/url"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

// TestDynamoDBLocalListensOnLoopbackOnly dials the DynamoDB Local the tests
// use (started by infra/dynamodb-local/start.sh under make test, or by this
// package otherwise) on every address of this machine: only loopback may
// answer, so the unauthenticated database is never open to the network.
func TestDynamoDBLocalListensOnLoopbackOnly(t *testing.T) {
	u, err := url.Parse(Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	host, port := u.Hostname(), u.Port()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		t.Skipf("DYNAMODB_ENDPOINT %s is not on this machine", u)
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), 2*time.Second)
	if err != nil {
		t.Fatalf("DynamoDB Local does not answer on loopback: %v", err)
	}
	c.Close()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, a := range addrs {
		ip, _, err := net.ParseCIDR(a.String())
		if err != nil || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			continue
		}
		tried++
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), port), 2*time.Second); err == nil {
			c.Close()
			t.Errorf("DynamoDB Local answers on %s:%s: it must listen on 127.0.0.1 only", ip, port)
		}
	}
	if tried == 0 {
		t.Skip("this machine has no address but loopback to dial")
	}
}
