package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"bizdata/shared/business"
	"bizdata/shared/wire"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An account's API keys. The live account item holds the registry of every
// active key of both modes (attribute api_keys: key id -> name, scopes, mode,
// prefix, hash, created_at; at most business.MaxAPIKeys), so one read lists
// them, counts them and finds their hashes, and every change of the registry
// is one transaction guarded by the account's version. Each key also has
// its own item, KEY#<hash>, holding a copy of its account's fields (the live
// account's, or the test twin's for a test key), its id, scopes and mode:
// authenticating a request is one GetItem of it. Accounts made before keys
// had names have key_hash and no registry: their one key is a "*" live key
// whose id derives from its hash (business.LegacyKeyID), until the first
// change of the registry writes it in.
const keysAttr = "api_keys"

// keyEntry is k's entry in the registry; seq is its place in the registry's
// order (oldest first), which created_at, kept to the second, cannot give.
func keyEntry(k business.APIKey, seq int) types.AttributeValue {
	scopes := make([]types.AttributeValue, len(k.Scopes))
	for i, s := range k.Scopes {
		scopes[i] = str(s)
	}
	m := attrs{
		"name":       str(k.Name),
		"scopes":     &types.AttributeValueMemberL{Value: scopes},
		"live":       &types.AttributeValueMemberBOOL{Value: k.Live},
		"hash":       str(k.Hash),
		"created_at": str(fmtTime(k.CreatedAt)),
		"seq":        nInt(int64(seq)),
	}
	if k.Prefix != "" {
		m["prefix"] = str(k.Prefix)
	}
	return &types.AttributeValueMemberM{Value: m}
}

func scopesFrom(v types.AttributeValue) []string {
	l, ok := v.(*types.AttributeValueMemberL)
	if !ok {
		return []string{business.ScopeAll}
	}
	out := make([]string, 0, len(l.Value))
	for _, s := range l.Value {
		if sv, ok := s.(*types.AttributeValueMemberS); ok {
			out = append(out, sv.Value)
		}
	}
	return out
}

func getBool(it attrs, k string, def bool) bool {
	if b, ok := it[k].(*types.AttributeValueMemberBOOL); ok {
		return b.Value
	}
	return def
}

// keysFrom returns the registry of the live account item it, in its order
// (oldest first; keysValue keeps it).
func keysFrom(it attrs) []business.APIKey {
	m, ok := it[keysAttr].(*types.AttributeValueMemberM)
	if !ok {
		if hash := getS(it, "key_hash"); hash != "" {
			return []business.APIKey{{ID: business.LegacyKeyID(hash), Name: business.DefaultKeyName, Scopes: []string{business.ScopeAll},
				Live: true, CreatedAt: getTime(it, "created_at"), Hash: hash}}
		}
		return nil
	}
	type placed struct {
		seq int64
		k   business.APIKey
	}
	in := make([]placed, 0, len(m.Value))
	for id, v := range m.Value {
		e, _ := v.(*types.AttributeValueMemberM)
		if e == nil {
			continue
		}
		in = append(in, placed{getInt(e.Value, "seq"), business.APIKey{ID: id, Name: getS(e.Value, "name"), Scopes: scopesFrom(e.Value["scopes"]),
			Live: getBool(e.Value, "live", true), Prefix: getS(e.Value, "prefix"), CreatedAt: getTime(e.Value, "created_at"),
			Hash: getS(e.Value, "hash")}})
	}
	slices.SortFunc(in, func(a, b placed) int {
		if c := cmp.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		return strings.Compare(a.k.ID, b.k.ID)
	})
	out := make([]business.APIKey, len(in))
	for i, p := range in {
		out[i] = p.k
	}
	return out
}

func keysValue(ks []business.APIKey) types.AttributeValue {
	m := attrs{}
	for i, k := range ks {
		m[k.ID] = keyEntry(k, i)
	}
	return &types.AttributeValueMemberM{Value: m}
}

// keyItem is key k's own item, with a copy of acct (the account it acts on).
func keyItem(acct business.Account, k business.APIKey) attrs {
	it := key(keyPK(k.Hash), "KEY")
	accountFields(it, acct)
	it["type"] = str("api_key")
	it["key_id"] = str(k.ID)
	it["key_name"] = str(k.Name)
	it["scopes"] = keyEntry(k, 0).(*types.AttributeValueMemberM).Value["scopes"]
	it["live"] = &types.AttributeValueMemberBOOL{Value: k.Live}
	it["key_created_at"] = str(fmtTime(k.CreatedAt))
	if k.Prefix != "" {
		it["key_prefix"] = str(k.Prefix)
	}
	return it
}

// keyFrom reads the key described by a key item (hash is its hash).
func keyFrom(it attrs, hash string) business.APIKey {
	k := business.APIKey{ID: getS(it, "key_id"), Name: getS(it, "key_name"), Scopes: scopesFrom(it["scopes"]),
		Live: getBool(it, "live", true), Prefix: getS(it, "key_prefix"), CreatedAt: getTime(it, "key_created_at"),
		Hash: hash, LastUsedAt: getTime(it, lastUsedKey)}
	if k.ID == "" { // the one key of an account from before keys had names
		k.ID, k.Name, k.CreatedAt = business.LegacyKeyID(hash), business.DefaultKeyName, getTime(it, "created_at")
	}
	return k
}

// keyAccount is the account key k acts on: live account a, or its twin.
func keyAccount(cur attrs, k business.APIKey) business.Account {
	a := accountFrom(cur)
	if !k.Live {
		return twinOf(a, getInt(cur, twinGenAttr))
	}
	return a
}

// registryUpdate is the transaction action that writes the registry ks (and
// any further SET clauses in extra, with their values) on the live account
// item, on condition that its version is still the one read in cur, and
// bumps the version.
func (s *Store) registryUpdate(account string, cur attrs, ks []business.APIKey, extra string, vals attrs) txItem {
	if vals == nil {
		vals = attrs{}
	}
	vals[":keys"], vals[":zero"], vals[":one"] = keysValue(ks), nInt(0), nInt(1)
	cond := accountVersionCond(cur, vals)
	return txItem{action: types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: accountKey(account),
		UpdateExpression:          aws.String("SET " + keysAttr + " = :keys, version = if_not_exists(version, :zero) + :one" + extra + " REMOVE key_hash"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeValues: vals,
	}}, onFail: errRetry}
}

// liveAccountItem reads the live account item of account (a twin's id reads
// its live account's).
func (s *Store) liveAccountItem(ctx context.Context, account string) (attrs, error) {
	return s.getAccountItem(ctx, business.LiveID(account))
}

// keyEvent is the event of type t about key k, a change of the registry
// read in cur. It goes to the feed of the data k acts on: a live key's to
// the account's, a test key's to its test data's (cleared with it), so test
// keys made for a CI run leave the live feed as it was. Its data is the key
// as the list shows it but without its prefix or last use: an event names a
// key, never any part of its secret. The key's version is the account's
// after the change (the registry's, which every change of keys bumps).
func keyEvent(cur attrs, t string, k business.APIKey, now time.Time) *events {
	j := wire.NewAPIKey(k)
	j.Prefix, j.LastUsedAt = nil, nil
	ev := newEvents(keyAccount(cur, k).ID, now)
	ev.add(t, business.EventResource{Type: business.ResourceAPIKey, ID: k.ID, Version: getInt(cur, "version") + 1}, map[string]any{"api_key": j})
	return ev
}

// ListKeys returns every active key of account (live or test id: the same
// list), oldest first, with when each was last used: one read of the account
// and one batch read of the keys' own items.
func (s *Store) ListKeys(ctx context.Context, account string) ([]business.APIKey, error) {
	cur, err := s.liveAccountItem(ctx, account)
	if err != nil {
		return nil, err
	}
	ks := keysFrom(cur)
	keys := make([]attrs, len(ks))
	for i, k := range ks {
		keys[i] = key(keyPK(k.Hash), "KEY")
	}
	found, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	for i := range ks {
		if found[i] != nil {
			ks[i].LastUsedAt = getTime(found[i], lastUsedKey)
		}
	}
	return ks, nil
}

// readRegistry reads the live account item and its keys, consistently, for
// a change of them by the calling key by (nil for an operator), which must
// still be active (business.CheckKeyHeld).
func (s *Store) readRegistry(ctx context.Context, live string, by *business.APIKey) (attrs, []business.APIKey, error) {
	cur, err := s.getAccountItem(ctx, live)
	if err != nil {
		return nil, nil, err
	}
	ks := keysFrom(cur)
	return cur, ks, business.CheckKeyHeld(ks, by)
}

// CreateKey makes a key as spec describes (name, scopes, mode) for account
// (live or test id: keys belong to the live account) and returns it with its
// secret, shown this once. by is the calling key (nil for an operator): it
// must still be active. The first test key also makes the account's test
// twin. The api_key.created event is written in the same transaction (see
// keyEvent). Returns ECONFLICT when the account has business.MaxAPIKeys keys.
func (s *Store) CreateKey(ctx context.Context, account string, by *business.APIKey, spec business.APIKey) (business.APIKey, string, error) {
	live := business.LiveID(account)
	var k business.APIKey
	var secret string
	err := retrying(ctx, func() error {
		cur, ks, err := s.readRegistry(ctx, live, by)
		if err != nil {
			return err
		}
		if err := business.CheckKeyLimit(ks); err != nil {
			return err
		}
		k, secret = business.NewKey(spec, s.now())
		var actions []txItem
		var extra string
		var vals attrs
		if !k.Live {
			actions, extra, vals = s.makeFirstTwin(cur)
		}
		actions, err = s.withEvents(append(actions,
			s.registryUpdate(live, cur, append(ks, k), extra, vals),
			txItem{action: put(s.table, keyItem(keyAccount(cur, k), k), "attribute_not_exists(PK)"), onFail: errRetry}),
			keyEvent(cur, business.EventAPIKeyCreated, k, k.CreatedAt))
		if err != nil {
			return err
		}
		return s.transact(ctx, actions)
	})
	if err != nil {
		return business.APIKey{}, "", err
	}
	return k, secret, nil
}

// RevokeKey ends key id of account at once (within the API's key cache TTL
// on other warm processes) and returns it, with its last use. by is the calling key (nil for an
// operator): it must still be active, a test key sees (and revokes) test
// keys only (a live key is then ENOTFOUND, as is an id the account has no
// key by), and a key revokes only keys whose scopes it could grant
// (EFORBIDDEN): a keys:write key cannot take away a "*" key. The
// api_key.revoked event is written in the same transaction (see keyEvent).
// Returns ECONFLICT when it is the last live key that may manage keys.
func (s *Store) RevokeKey(ctx context.Context, account string, by *business.APIKey, id string) (business.APIKey, error) {
	live := business.LiveID(account)
	var gone business.APIKey
	err := retrying(ctx, func() error {
		cur, ks, err := s.readRegistry(ctx, live, by)
		if err != nil {
			return err
		}
		var rest []business.APIKey
		if gone, rest, err = business.CheckRevoke(by, id, ks); err != nil {
			return err
		}
		// The key's item holds its last use, which the answer shows as the
		// list does: one read before it goes (a stamp landing between the
		// read and the delete is a use within the minute it may lag).
		it, err := s.getItem(ctx, key(keyPK(gone.Hash), "KEY"), true)
		if err != nil {
			return fmt.Errorf("get api key: %w", err)
		}
		gone.LastUsedAt = getTime(it, lastUsedKey)
		actions, err := s.withEvents([]txItem{
			s.registryUpdate(live, cur, rest, "", nil),
			{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: key(keyPK(gone.Hash), "KEY")}}},
		}, keyEvent(cur, business.EventAPIKeyRevoked, gone, s.now()))
		if err != nil {
			return err
		}
		return s.transact(ctx, actions)
	})
	return gone, err
}

// RotateKey replaces key id of account with a fresh secret of the same id,
// name, scopes and mode, and returns the secret. The old secret stops working
// at once (within the API's key cache TTL on other warm processes). by is
// the calling key (nil for an operator), which rotates only itself, and only
// with its current secret: an old secret still cached elsewhere is 401, so
// it cannot take the key back. The api_key.rotated event is written in the
// same transaction (see keyEvent). Returns ENOTFOUND when the account or
// the key does not exist.
func (s *Store) RotateKey(ctx context.Context, account string, by *business.APIKey, id string) (string, error) {
	live := business.LiveID(account)
	var secret string
	err := retrying(ctx, func() error {
		cur, ks, err := s.readRegistry(ctx, live, by)
		if err != nil {
			return err
		}
		i, err := business.CheckRotate(by, id, ks)
		if err != nil {
			return err
		}
		old := ks[i]
		var k business.APIKey
		k, secret = old.WithNewSecret()
		ks[i] = k
		// Guarded by the version read, which settings changes bump too: the
		// new key's copy of the account is never older than the account.
		actions, err := s.withEvents([]txItem{
			s.registryUpdate(live, cur, ks, "", nil),
			{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: key(keyPK(old.Hash), "KEY")}}},
			{action: put(s.table, keyItem(keyAccount(cur, k), k), "attribute_not_exists(PK)"), onFail: errRetry},
		}, keyEvent(cur, business.EventAPIKeyRotated, k, s.now()))
		if err != nil {
			return err
		}
		return s.transact(ctx, actions)
	})
	return secret, err
}
