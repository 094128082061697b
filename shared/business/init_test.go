package business

import (
	"encoding/base64"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

// allocatedAtStart is what the test binary had allocated when its packages
// had loaded, before any test ran.
var allocatedAtStart uint64

func TestMain(m *testing.M) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	allocatedAtStart = ms.TotalAlloc
	os.Exit(m.Run())
}

// TestLoadingAllocatesLittle: every function imports this package, so what
// its package-level variables compute each cold start pays. An argon2id hash
// alone allocates 19 MiB; loading the package (and the test binary's own)
// stays far below that.
func TestLoadingAllocatesLittle(t *testing.T) {
	if allocatedAtStart > 4<<20 {
		t.Fatalf("loading the package allocated %.1f MiB: does a package-level variable compute something (a password hash)?", float64(allocatedAtStart)/(1<<20))
	}
}

// TestDummyHashIsCurrent: the constant dummyHash is a hash of dummyPassword
// with the parameters HashPassword uses now, so an unknown email costs a
// sign-in the same work as a known one. Changing the parameters fails here
// until the constant is made again (print HashPassword(dummyPassword)).
func TestDummyHashIsCurrent(t *testing.T) {
	parts := strings.Split(dummyHash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != "v=19" {
		t.Fatalf("dummyHash %q is not argon2id v=19 in PHC form", dummyHash)
	}
	if want := fmt.Sprintf("m=%d,t=%d,p=%d", argonMemory, argonTime, argonThreads); parts[3] != want {
		t.Fatalf("dummyHash has parameters %s, HashPassword %s: make it again with HashPassword(dummyPassword)", parts[3], want)
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	sum, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) != 16 || len(sum) != argonKeyLen {
		t.Fatalf("dummyHash: salt %d bytes (%v), hash %d bytes (%v); want 16 and %d", len(salt), err1, len(sum), err2, argonKeyLen)
	}
	if !VerifyPassword(dummyHash, dummyPassword) || VerifyPassword(dummyHash, dummyPassword+"!") {
		t.Fatal("dummyHash is not the hash of dummyPassword")
	}
}
