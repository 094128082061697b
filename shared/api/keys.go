package api

import (
	"context"
	"net/http"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/wire"
)

// API keys a merchant hands out: named, scoped, live or test. A key sees and
// makes keys of its own mode only when it is a test key (a live key manages
// both), and grants no scope it lacks itself.

func listAPIKeys(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	q := parseList(r)
	for name := range q.values {
		q.fe[name] = "is not a known query parameter: this list has none, it answers all of the account's keys (at most 20)"
	}
	if err := q.err(); err != nil {
		return err
	}
	ks, err := s.store.ListKeys(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	out := []wire.APIKey{}
	for _, k := range ks {
		if acct.Key.Sees(k) {
			out = append(out, wire.NewAPIKey(k))
		}
	}
	return writeOK(w, "API keys found", map[string]any{"api_keys": out})
}

type apiKeyRequest struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
	Mode   string   `json:"mode"`
}

func createAPIKey(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	req, err := readJSON[apiKeyRequest](r)
	if err != nil {
		return err
	}
	spec, err := business.NewKeySpec(req.Name, req.Scopes, req.Mode)
	if err != nil {
		return err
	}
	if err := business.CheckCreateKey(acct.Key, spec); err != nil {
		return err
	}
	k, secret, err := s.store.CreateKey(r.Context(), acct.ID, &acct.Key, spec)
	if err != nil {
		return err
	}
	return writeOK(w, "API key created", map[string]any{"api_key": wire.CreatedAPIKey{APIKey: wire.NewAPIKey(k), Key: secret}})
}

func revokeAPIKey(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	id, err := pathCode(r, "id", business.ValidKeyID, "API key not found")
	if err != nil {
		return err
	}
	if err := readNoFields(r); err != nil {
		return err
	}
	k, err := s.store.RevokeKey(r.Context(), acct.ID, &acct.Key, id)
	if err != nil {
		return err
	}
	s.keys.forgetHash(k.Hash)
	return writeOK(w, "API key revoked", map[string]any{"api_key": wire.NewAPIKey(k)})
}

// rotateAPIKey gives the calling key a new secret; its id, name, scopes and
// mode stay.
func rotateAPIKey(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	if err := readNoFields(r); err != nil {
		return err
	}
	if acct.Key.Owner {
		return business.Errorf(business.EINVALID, "The dashboard signs in with a password, not a key; rotate a key by revoking it and creating another")
	}
	key, err := s.store.RotateKey(r.Context(), acct.ID, &acct.Key, acct.Key.ID)
	if err != nil {
		return err
	}
	s.keys.forgetHash(acct.Key.Hash)
	return writeOK(w, "API key rotated", map[string]any{"api_key": key})
}

// clearTestData gives the account's test keys a fresh, empty test twin at
// once, then deletes the records of retired twins for up to purgeBudget
// items: 200 when nothing of them remains, 202 when the rest waits for the
// next call.
func clearTestData(s *Server, w http.ResponseWriter, r *http.Request, acct business.Account) error {
	if err := readNoFields(r); err != nil {
		return err
	}
	if _, err := s.store.ClearTestData(r.Context(), acct.ID); err != nil {
		return err
	}
	s.keys.forgetAccount(acct.ID)
	remaining, err := s.purgeRetired(r, acct.ID)
	if err != nil {
		// The clear has committed: answering 500 would have the client clear
		// again. The deleting goes on at the next call.
		s.log.WarnContext(r.Context(), "clear test data: purge stopped", "request_id", w.Header().Get("X-Request-Id"), "error", err.Error())
		remaining = true
	}
	if remaining {
		return writeStatus(w, http.StatusAccepted, "Test data cleared; deleting the old records continues", wire.TestDataCleared{PurgeComplete: false})
	}
	return writeOK(w, "Test data cleared", wire.TestDataCleared{PurgeComplete: true})
}

// purgeBudget bounds the deletes one clear request makes, purgeTwins the
// retired twins it walks (each walk reads some 15 partitions, whether or
// not anything is left in them), and purgeTime how long it deletes: well
// inside API Gateway's 30 s and the function's Timeout (29 s), and never
// later than purgeMargin before the request's own deadline (the function's,
// on Lambda), so the clear answers its 202 in time whatever DynamoDB does.
// The rest waits for the next clear.
const (
	purgeBudget = 2000
	purgeTwins  = 8
	purgeTime   = 10 * time.Second
	purgeMargin = 3 * time.Second
)

// retiredGrace is how long a retired test twin may still be written after
// its clear: by a test key cached on another warm process (MaxKeyCacheTTL,
// in a request of up to 10 s), and by the stream's consumers (webhook
// deliveries and report figures, up to 75 s a batch, retried). Until then it
// stays on the purging list, so that the next clear deletes such writes too.
const retiredGrace = 5 * time.Minute

// purgeRetired deletes the items of the account's retired test twins,
// oldest first, within purgeBudget, purgeTwins and purgeTime, and reports
// whether any remain.
func (s *Server) purgeRetired(r *http.Request, account string) (bool, error) {
	twins, err := s.store.Purging(r.Context(), account)
	if err != nil {
		return false, err
	}
	limit := s.purgeFor
	if limit <= 0 {
		limit = purgeTime
	}
	stop := time.Now().Add(limit)
	if d, ok := r.Context().Deadline(); ok && d.Add(-purgeMargin).Before(stop) {
		stop = d.Add(-purgeMargin)
	}
	ctx, cancel := context.WithDeadline(r.Context(), stop)
	defer cancel()
	// A stop at the purge's own deadline is no fault: the rest waits.
	stopped := func(err error) (bool, error) {
		if ctx.Err() != nil && r.Context().Err() == nil {
			return true, nil
		}
		return false, err
	}
	budget := purgeBudget
	for i, twin := range twins {
		if i == purgeTwins {
			return true, nil
		}
		done, n, err := s.store.PurgeAccount(ctx, twin.ID, budget)
		if err != nil {
			return stopped(err)
		}
		budget -= n
		if !done {
			return true, nil
		}
		if s.store.Now().Sub(twin.At) > retiredGrace {
			if err := s.store.Purged(ctx, account, twin); err != nil {
				return stopped(err)
			}
		}
	}
	return false, nil
}
