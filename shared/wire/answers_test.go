package wire

import (
	"testing"

	"bizdata/shared/business"
)

// The probe names a test twin by its live account's id.
func TestAuthenticatedNamesTheLiveAccount(t *testing.T) {
	live := business.Account{ID: "acc_1", Key: business.APIKey{ID: "key_1"}}
	twin := live
	twin.ID = business.TwinID(live.ID, 1)
	a := NewAuthenticated(twin)
	if a.Account.ID != "acc_1" || a.Livemode || a.APIKey.ID != "key_1" || !NewAuthenticated(live).Livemode {
		t.Fatalf("twin answered as %+v", a)
	}
}
