package dashboard

import (
	"net/http"
	"testing"
)

func TestSignInAndOut(t *testing.T) {
	b := newBoard(t)
	o := b.newOwner("SIGN1")
	st, page, path := o.get("/dashboard")
	if st != http.StatusOK || path != "/dashboard" {
		t.Fatalf("overview: %d at %s", st, path)
	}
	mustContain(t, page, "Shop SIGN1", o.email)
}
