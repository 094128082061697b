package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The dashboard's people: owners, their sessions, their set-password links
// and the counts of failed sign-ins. None of these items is under an
// account's partition, and none holds a secret in the clear: sessions and
// links are keyed by the SHA-256 of their token, passwords are argon2id
// hashes.
//
//	owner            PK OWNER#<email>           SK OWNER    (sessions: map of session hash to expiry)
//	session          PK SESSION#<sha256 of id>  SK SESSION  (expires via TTL)
//	set-password     PK PWLINK#<sha256>         SK PWLINK   (expires via TTL)
//	failed sign-ins  PK SIGNIN#<sha256 of email> SK FAILS   (browsers without a device cookie; expires via TTL)
//	                 PK SIGNIN#<sha256 of email> SK DEVICE#<sha256 of the device cookie's nonce>
//	                 PK SIGNIN#<sha256 of client> SK CLIENT  (an IP address, an IPv6 /64)

func ownerKey(email string) attrs { return key("OWNER#"+email, "OWNER") }

func sessionKey(hash string) attrs { return key("SESSION#"+hash, "SESSION") }

func pwLinkKey(hash string) attrs { return key("PWLINK#"+hash, "PWLINK") }

const (
	ownerSessionsAttr = "sessions"
	ownerVersionAttr  = "version"
	// ownerLinkAttr is the hash of the owner's one working set-password
	// link: a newer link, or a password change, deletes it.
	ownerLinkAttr = "password_link"
)

func ownerFrom(it attrs) business.Owner {
	return business.Owner{Email: getS(it, "email"), Account: getS(it, "account_id"),
		PasswordHash: getS(it, "password_hash"), CreatedAt: getTime(it, "created_at")}
}

// ownerItem is a new owner's item, with no sessions.
func ownerItem(o business.Owner) attrs {
	it := ownerKey(o.Email)
	it["type"], it["email"], it["account_id"] = str("owner"), str(o.Email), str(o.Account)
	it["created_at"], it[ownerVersionAttr] = str(fmtTime(o.CreatedAt)), nInt(1)
	if o.PasswordHash != "" {
		it["password_hash"] = str(o.PasswordHash)
	}
	return it
}

func errEmailTaken(email string) error {
	return business.Errorf(business.ECONFLICT, "%s already has a dashboard sign-in; sign in instead", email)
}

// CreateAccountWithOwner stores a new account a, as CreateAccount does, and
// its owner o (email, and password hash unless the owner is invited) in the
// same transaction. Returns ECONFLICT when the business code or the email is
// taken.
func (s *Store) CreateAccountWithOwner(ctx context.Context, a business.Account, o business.Owner) (business.Account, string, error) {
	o.CreatedAt = s.now()
	return s.createAccount(ctx, a, func(id string) txItem {
		o.Account = id
		return txItem{action: put(s.table, ownerItem(o), "attribute_not_exists(PK)"), onFail: errEmailTaken(o.Email)}
	})
}

// FindOwner returns the owner signing in with email. Returns ENOTFOUND when
// no owner has it.
func (s *Store) FindOwner(ctx context.Context, email string) (business.Owner, error) {
	it, err := s.getOne(ctx, ownerKey(email), "no owner signs in with "+email, true)
	if err != nil {
		return business.Owner{}, err
	}
	return ownerFrom(it), nil
}

// SignInClientFailures failed sign-ins from one client (an IP address,
// an IPv6 /64) within business.SignInWindow refuse further attempts from
// it by browsers without a device cookie for their email: more than one
// email's worth (business.SignInFailures), as owners of several accounts
// may share an office's address, yet few enough that one client cannot
// keep every email it knows locked out.
const SignInClientFailures = 20

// SignInCount is one count of failed sign-ins, under its own lockout: a
// device cookie's attempts at its email (DeviceSignIns), the attempts of
// browsers without one at an email (EmailSignIns), or at any email from
// one client (ClientSignIns).
type SignInCount struct {
	pk, sk string
	limit  int
}

// EmailSignIns counts the attempts at email by browsers that hold no valid
// device cookie for it, together.
func EmailSignIns(email string) SignInCount {
	return SignInCount{"SIGNIN#" + business.HashToken(email), "FAILS", business.SignInFailures}
}

// DeviceSignIns counts the attempts at email by the browser whose device
// cookie has nonce device: failures made elsewhere never lock it.
func DeviceSignIns(email, device string) SignInCount {
	return SignInCount{"SIGNIN#" + business.HashToken(email), "DEVICE#" + business.HashToken(device), business.SignInFailures}
}

// ClientSignIns counts the attempts from client at any email by browsers
// without a device cookie for it.
func ClientSignIns(client string) SignInCount {
	return SignInCount{"SIGNIN#" + business.HashToken("client\x00"+client), "CLIENT", SignInClientFailures}
}

func (c SignInCount) itemKey() attrs { return key(c.pk, c.sk) }

// SignInFailures returns c's failed sign-ins within the last
// business.SignInWindow, oldest first.
func (s *Store) SignInFailures(ctx context.Context, c SignInCount) ([]time.Time, error) {
	it, err := s.getItem(ctx, c.itemKey(), true)
	if err != nil {
		return nil, err
	}
	return failuresFrom(it), nil
}

func failuresFrom(it attrs) []time.Time {
	l, _ := it["fails"].(*types.AttributeValueMemberL)
	if l == nil {
		return nil
	}
	var out []time.Time
	for _, v := range l.Value {
		if n, ok := v.(*types.AttributeValueMemberN); ok {
			if sec, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
				out = append(out, time.Unix(sec, 0))
			}
		}
	}
	return out
}

// TakeSignInAttempt counts a sign-in attempt (or a check of the current
// password) under c at at, before the password is checked: unless c is
// locked out, the attempt is recorded as a failure and 0 returned; a
// successful check then clears the failures (ClearSignInFailures) or
// returns the attempt (ReturnSignInAttempt). Locked out, nothing is
// recorded and the wait is returned. Counting first means attempts racing
// each other cannot all be checked against the same count: each write is
// conditioned on the count it read, so at most c's limit of them get
// through in a window. The item keeps only the newest failures, so it
// stays small however many attempts are made.
func (s *Store) TakeSignInAttempt(ctx context.Context, c SignInCount, at time.Time) (time.Duration, error) {
	var wait time.Duration
	err := retrying(ctx, func() error {
		cur, err := s.getItem(ctx, c.itemKey(), true)
		if err != nil {
			return err
		}
		if wait = business.SignInLockout(failuresFrom(cur), at, c.limit); wait > 0 {
			return nil
		}
		return s.putFailures(ctx, c, cur, business.RecentSignInFailures(append(failuresFrom(cur), at), at, c.limit), at)
	})
	return wait, err
}

// ReturnSignInAttempt takes back one failure recorded at at under c (the
// attempt proved to be the owner's), leaving the others: a client's count
// forgets an owner's own sign-in, but one owner signing in cannot clear
// the failures of others from the same client.
func (s *Store) ReturnSignInAttempt(ctx context.Context, c SignInCount, at time.Time) error {
	return retrying(ctx, func() error {
		cur, err := s.getItem(ctx, c.itemKey(), true)
		if err != nil || cur == nil {
			return err
		}
		fails := failuresFrom(cur)
		i := slices.IndexFunc(fails, func(f time.Time) bool { return f.Unix() == at.Unix() })
		if i < 0 {
			return nil
		}
		return s.putFailures(ctx, c, cur, slices.Delete(fails, i, i+1), at)
	})
}

// putFailures writes c's failures fails, if the item is still the one read
// in cur (errRetry otherwise). It expires a window after the newest.
func (s *Store) putFailures(ctx context.Context, c SignInCount, cur attrs, fails []time.Time, at time.Time) error {
	newest := at
	l := make([]types.AttributeValue, len(fails))
	for i, f := range fails {
		l[i] = nInt(f.Unix())
		if f.After(newest) {
			newest = f
		}
	}
	it := c.itemKey()
	it["type"], it["fails"] = str("signin_failures"), &types.AttributeValueMemberL{Value: l}
	it[TTLAttribute] = nInt(newest.Add(business.SignInWindow).Unix() + 60)
	it["n"] = nInt(getInt(cur, "n") + 1)
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: it, ConditionExpression: aws.String("attribute_not_exists(PK)")}
	if cur != nil {
		in.ConditionExpression, in.ExpressionAttributeValues = aws.String("n = :n"), attrs{":n": nInt(getInt(cur, "n"))}
	}
	_, err := s.db.PutItem(ctx, in)
	if isConditionFailed(err) {
		return errRetry
	}
	if err != nil {
		return fmt.Errorf("count sign-in attempt: %w", err)
	}
	return nil
}

// ClearSignInFailures forgets c's failed sign-ins (after a successful
// one).
func (s *Store) ClearSignInFailures(ctx context.Context, c SignInCount) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: c.itemKey()})
	if err != nil {
		return fmt.Errorf("clear sign-in failures: %w", err)
	}
	return nil
}

// DeviceSignature signs the parts of a dashboard device cookie. The key
// is derived from the store's secret (the one that signs list cursors: a
// deployment configures one secret), under a label of its own, so that
// neither signature can stand for the other. Returns nil when the store has
// no secret: then no device cookie is issued or trusted.
func (s *Store) DeviceSignature(parts ...string) []byte {
	if len(s.cursorSecret) == 0 {
		return nil
	}
	k := hmac.New(sha256.New, s.cursorSecret)
	k.Write([]byte("dashboard device cookie"))
	m := hmac.New(sha256.New, k.Sum(nil))
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

func sessionFrom(it attrs) business.Session {
	pk := getS(it, "PK")
	return business.Session{Hash: pk[len("SESSION#"):], Email: getS(it, "email"), Account: getS(it, "account_id"),
		Live: getBool(it, "live", true), CreatedAt: getTime(it, "created_at"), SeenAt: getTime(it, "seen_at")}
}

func sessionItem(ss business.Session) attrs {
	it := sessionKey(ss.Hash)
	it["type"], it["email"], it["account_id"] = str("session"), str(ss.Email), str(ss.Account)
	it["live"] = &types.AttributeValueMemberBOOL{Value: ss.Live}
	it["created_at"], it["seen_at"] = str(fmtTime(ss.CreatedAt)), str(fmtTime(ss.SeenAt))
	it[TTLAttribute] = nInt(ss.Expires().Unix())
	return it
}

// ownerSessions is the owner item's map of its sessions' hashes to their
// expiry (Unix seconds).
func ownerSessions(it attrs) map[string]int64 {
	out := map[string]int64{}
	m, _ := it[ownerSessionsAttr].(*types.AttributeValueMemberM)
	if m == nil {
		return out
	}
	for h, v := range m.Value {
		if n, ok := v.(*types.AttributeValueMemberN); ok {
			exp, _ := strconv.ParseInt(n.Value, 10, 64)
			out[h] = exp
		}
	}
	return out
}

func sessionsValue(m map[string]int64) types.AttributeValue {
	v := map[string]types.AttributeValue{}
	for h, exp := range m {
		v[h] = nInt(exp)
	}
	return &types.AttributeValueMemberM{Value: v}
}

// ownerUpdate sets the owner item's sessions (and any further SET clauses in
// extra) if its version is still the one read in cur.
func (s *Store) ownerUpdate(cur attrs, sessions map[string]int64, extra string, vals attrs) txItem {
	v := attrs{":s": sessionsValue(sessions), ":v": nInt(getInt(cur, ownerVersionAttr)), ":one": nInt(1)}
	maps.Copy(v, vals)
	return txItem{action: types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: key(getS(cur, "PK"), "OWNER"),
		UpdateExpression:          aws.String("SET " + ownerSessionsAttr + " = :s" + extra + " ADD " + ownerVersionAttr + " :one"),
		ConditionExpression:       aws.String(ownerVersionAttr + " = :v"),
		ExpressionAttributeValues: v,
	}}, onFail: errRetry}
}

func (s *Store) deleteAction(k attrs) txItem {
	return txItem{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: k}}}
}

// CreateSession signs owner email in: a new session (live mode) whose id is
// returned, the only time it exists outside the browser. The owner keeps
// at most business.MaxSessions sessions: expired ones are dropped and the
// oldest beyond the limit ended, in the same transaction. Returns ENOTFOUND
// when the owner is gone.
func (s *Store) CreateSession(ctx context.Context, email string) (string, business.Session, error) {
	var token string
	var ss business.Session
	err := retrying(ctx, func() error {
		cur, err := s.getOne(ctx, ownerKey(email), "no owner signs in with "+email, true)
		if err != nil {
			return err
		}
		now := s.now()
		var id string
		id, ss = "", business.Session{Email: email, Account: getS(cur, "account_id"), Live: true, CreatedAt: now, SeenAt: now}
		id, ss.Hash = business.NewToken()
		sessions, ended := business.MakeRoomForSession(ownerSessions(cur), now)
		var actions []txItem
		for _, h := range ended {
			actions = append(actions, s.deleteAction(sessionKey(h)))
		}
		sessions[ss.Hash] = ss.Expires().Unix()
		actions = append(actions, s.ownerUpdate(cur, sessions, "", nil),
			txItem{action: put(s.table, sessionItem(ss), "attribute_not_exists(PK)"), onFail: errRetry})
		token = id
		return s.transact(ctx, actions)
	})
	return token, ss, err
}

// FindSession returns the session whose id is token. Returns EUNAUTHORIZED
// when there is none or it has expired (DynamoDB deletes expired items
// late, so expiry is checked here).
func (s *Store) FindSession(ctx context.Context, token string) (business.Session, error) {
	it, err := s.getItem(ctx, sessionKey(business.HashToken(token)), true)
	if err != nil {
		return business.Session{}, err
	}
	if it == nil {
		return business.Session{}, business.Errorf(business.EUNAUTHORIZED, "Your session has ended; sign in again")
	}
	ss := sessionFrom(it)
	if !ss.Active(s.now()) {
		return business.Session{}, business.Errorf(business.EUNAUTHORIZED, "Your session has ended; sign in again")
	}
	return ss, nil
}

// TouchSession records that session ss was used at at, which moves its idle
// expiry. Only if the session still exists: one ended meanwhile stays ended.
func (s *Store) TouchSession(ctx context.Context, ss business.Session, at time.Time) error {
	ss.SeenAt = at
	return s.updateSession(ctx, ss.Hash, "SET seen_at = :seen, "+TTLAttribute+" = :exp",
		attrs{":seen": str(fmtTime(at)), ":exp": nInt(ss.Expires().Unix())})
}

// SetSessionMode switches session hash between live and test data.
func (s *Store) SetSessionMode(ctx context.Context, hash string, live bool) error {
	return s.updateSession(ctx, hash, "SET live = :live", attrs{":live": &types.AttributeValueMemberBOOL{Value: live}})
}

func (s *Store) updateSession(ctx context.Context, hash, expr string, vals attrs) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: sessionKey(hash),
		UpdateExpression: aws.String(expr), ConditionExpression: aws.String("attribute_exists(PK)"), ExpressionAttributeValues: vals})
	if isConditionFailed(err) {
		return business.Errorf(business.EUNAUTHORIZED, "Your session has ended; sign in again")
	}
	if err != nil {
		return fmt.Errorf("update session: %w", err)
	}
	return nil
}

// EndSession signs session ss out: its item is deleted, so its cookie is
// refused from now on, and the owner's list forgets it.
func (s *Store) EndSession(ctx context.Context, ss business.Session) error {
	return retrying(ctx, func() error {
		cur, err := s.getItem(ctx, ownerKey(ss.Email), true)
		if err != nil {
			return err
		}
		actions := []txItem{s.deleteAction(sessionKey(ss.Hash))}
		if cur != nil {
			sessions := ownerSessions(cur)
			delete(sessions, ss.Hash)
			actions = append(actions, s.ownerUpdate(cur, sessions, "", nil))
		}
		return s.transact(ctx, actions)
	})
}

// SetPassword sets owner email's password hash and ends every one of its
// sessions except keep (a session hash, or "" to end them all), in one
// transaction: a cookie from before a password change no longer works.
// Returns ENOTFOUND when the owner is gone.
func (s *Store) SetPassword(ctx context.Context, email, hash, keep string) error {
	return retrying(ctx, func() error {
		cur, err := s.getOne(ctx, ownerKey(email), "no owner signs in with "+email, true)
		if err != nil {
			return err
		}
		return s.transact(ctx, s.passwordActions(cur, hash, keep, ""))
	})
}

// passwordActions set cur's password hash, end its sessions but keep, and
// revoke its set-password link (but used, the link being used, which its
// caller deletes).
func (s *Store) passwordActions(cur attrs, hash, keep, used string) []txItem {
	sessions := ownerSessions(cur)
	var actions []txItem
	for h := range sessions {
		if h != keep {
			delete(sessions, h)
			actions = append(actions, s.deleteAction(sessionKey(h)))
		}
	}
	extra := ", password_hash = :h, password_changed_at = :at"
	if link := getS(cur, ownerLinkAttr); link != "" {
		extra += " REMOVE " + ownerLinkAttr
		if link != used {
			actions = append(actions, s.deleteAction(pwLinkKey(link)))
		}
	}
	return append(actions, s.ownerUpdate(cur, sessions, extra, attrs{":h": str(hash), ":at": str(fmtTime(s.now()))}))
}

// CreatePasswordLink makes a one-time set-password token for owner email,
// valid for business.PasswordLinkLifetime, and returns it: the table keeps
// only its hash. It replaces any earlier link of the owner, and a password
// change revokes it. Returns ENOTFOUND when the owner does not exist.
func (s *Store) CreatePasswordLink(ctx context.Context, email string) (string, error) {
	var token string
	err := retrying(ctx, func() error {
		cur, err := s.getOne(ctx, ownerKey(email), "no owner signs in with "+email, true)
		if err != nil {
			return err
		}
		var hash string
		token, hash = business.NewToken()
		it := pwLinkKey(hash)
		it["type"], it["email"] = str("password_link"), str(email)
		it[TTLAttribute] = nInt(s.now().Add(business.PasswordLinkLifetime).Unix())
		actions := []txItem{{action: put(s.table, it, "attribute_not_exists(PK)"), onFail: errRetry},
			s.ownerUpdate(cur, ownerSessions(cur), ", "+ownerLinkAttr+" = :l", attrs{":l": str(hash)})}
		if old := getS(cur, ownerLinkAttr); old != "" { // a newer link replaces it
			actions = append(actions, s.deleteAction(pwLinkKey(old)))
		}
		return s.transact(ctx, actions)
	})
	return token, err
}

// errLinkUsed is the answer to a set-password link that is unknown, used or
// expired.
var errLinkUsed = business.Errorf(business.ENOTFOUND, "This set-password link has been used or has expired; ask for a new one")

// PasswordLinkEmail returns the email of a set-password link that still
// works. Returns ENOTFOUND otherwise.
func (s *Store) PasswordLinkEmail(ctx context.Context, token string) (string, error) {
	it, err := s.getItem(ctx, pwLinkKey(business.HashToken(token)), true)
	if err != nil {
		return "", err
	}
	if it == nil || getInt(it, TTLAttribute) <= s.now().Unix() {
		return "", errLinkUsed
	}
	return getS(it, "email"), nil
}

// UsePasswordLink sets the password (hash) of the owner of a set-password
// link, ends every session of that owner, and deletes the link, in one
// transaction: the link works once. Returns the owner's email, or ENOTFOUND
// for a link that is unknown, used or expired.
func (s *Store) UsePasswordLink(ctx context.Context, token, hash string) (string, error) {
	var email string
	err := retrying(ctx, func() error {
		var err error
		if email, err = s.PasswordLinkEmail(ctx, token); err != nil {
			return err
		}
		cur, err := s.getOne(ctx, ownerKey(email), "no owner signs in with "+email, true)
		if err != nil {
			return err
		}
		use := txItem{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table),
			Key: pwLinkKey(business.HashToken(token)), ConditionExpression: aws.String("attribute_exists(PK)")}}, onFail: errLinkUsed}
		return s.transact(ctx, append(s.passwordActions(cur, hash, "", business.HashToken(token)), use))
	})
	return email, err
}

// OwnerAccount returns the account a dashboard session acts on: live
// account live, or (livemode false) its current test twin, made here when
// the account has never had test data. Returns ENOTFOUND when the account
// does not exist.
func (s *Store) OwnerAccount(ctx context.Context, live string, livemode bool) (business.Account, error) {
	var a business.Account
	err := retrying(ctx, func() error {
		cur, err := s.getAccountItem(ctx, live)
		if err != nil {
			return err
		}
		a = accountFrom(cur)
		if livemode {
			return nil
		}
		actions, extra, vals := s.makeFirstTwin(cur)
		a = twinOf(a, getInt(cur, twinGenAttr))
		if len(actions) == 0 {
			return nil
		}
		return s.transact(ctx, append(actions, s.registryUpdate(live, cur, keysFrom(cur), extra, vals)))
	})
	return a, err
}

// ErrSessionEnded reports whether err is the refusal of an ended session.
func ErrSessionEnded(err error) bool {
	var e *business.Error
	return errors.As(err, &e) && e.Code == business.EUNAUTHORIZED
}

// CreateOwner gives existing account a dashboard owner o (a password hash,
// or "" for an owner who will set one from a link). Returns ECONFLICT when
// the email already signs in.
func (s *Store) CreateOwner(ctx context.Context, account string, o business.Owner) error {
	o.Account, o.CreatedAt = account, s.now()
	return s.transact(ctx, []txItem{{action: put(s.table, ownerItem(o), "attribute_not_exists(PK)"), onFail: errEmailTaken(o.Email)}})
}
