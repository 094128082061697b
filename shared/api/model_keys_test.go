package api_test

// API keys, scopes and test mode in the model. Each business of a sequence
// has keys of both modes and of different scopes: at the start, made through
// the API with the account's default key, a live and a test "*" key and a
// live and a test key of a drawn subset of the scopes; then more made, listed,
// rotated and revoked by steps. Every step acts with a key drawn from the
// business's active keys. A live key acts on the business's live book, a test
// key on its test twin's: records, ids, invoice numbers, events, reports and
// webhook settings of their own (only the settings, name and timezone, are
// the business's: the twin mirrors them). The model decides by itself which
// requests a key may make, from the scope and mode the route table gives the
// route: a key has a scope when it has it, its write scope (for a read
// scope), or "*". A request it may not make must be refused 403 with the
// text that says why, changing nothing (see sendAllowing; forbiddenRoute
// tries every route of the table). A key makes keys only with scopes it
// could grant, and revokes only keys it sees whose scopes it could grant; a
// key revoked or rotated away answers 401 at once. Clearing the test data (a
// test "*" key) gives the test keys a fresh, empty twin and leaves the live
// book as it was; a change of the settings, made at once with a new key, a
// rotation and a clear, reaches every key and both books.

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"

	"pgregory.net/rapid"
)

// modelScopes are the scopes, in the order the API lists a key's scopes.
var modelScopes = []string{"sales:read", "sales:write", "expenses:read", "expenses:write", "inventory:read", "inventory:write",
	"customers:read", "customers:write", "reports:read", "events:read", "webhooks:write", "keys:write", "*"}

// mKey is an API key of the model.
type mKey struct {
	id, name, created string
	secret            string   // a rotation changes it
	scopes            []string // as the API shows them: in modelScopes' order, once each
	live              bool
	revoked           bool
	biz               *mBiz
	// used: a request authenticated with the current secret, which then has
	// a last_used_at (a new secret has none until it is used).
	used atomic.Bool
}

func (k *mKey) mode() string {
	if k.live {
		return "live"
	}
	return "test"
}

// mBiz is one business: its live book, its test twin's book (the current
// generation's) and its active keys.
type mBiz struct {
	live, test *mAccount
	keys       []*mKey // active keys, in the order made
	revoked    []*mKey
	gen        int // the test twin's generation
}

func (b *mBiz) book(live bool) *mAccount {
	if live {
		return b.live
	}
	return b.test
}

// mHook is a book's webhook settings: url "" for none, at "" for never set.
type mHook struct {
	url    string
	signed bool
	at     string
}

// modelHas reports whether a key with scopes may call a route that needs
// scope need: "none" needs nothing; "*" allows everything; a write scope
// allows its read.
func modelHas(scopes []string, need string) bool {
	if need == "none" {
		return true
	}
	family, op, _ := strings.Cut(need, ":")
	for _, s := range scopes {
		if s == "*" || s == need || op == "read" && s == family+":write" {
			return true
		}
	}
	return false
}

// modelGrants reports whether key k may give a new key scope s: one it has,
// and "*" only when it has "*" itself.
func modelGrants(k *mKey, s string) bool {
	if s == "*" {
		return slices.Contains(k.scopes, "*")
	}
	return modelHas(k.scopes, s)
}

// modelCanonical is scopes as the API shows them: known ones, in
// modelScopes' order, once each.
func modelCanonical(scopes []string) []string {
	out := []string{}
	for _, s := range modelScopes {
		if slices.Contains(scopes, s) {
			out = append(out, s)
		}
	}
	return out
}

// modelRouteHandler marks a pattern of modelRouteMux with its route.
type modelRouteHandler struct{ rt api.Route }

func (modelRouteHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}

// modelRouteMux matches a request to its route, as API Gateway and the server do.
var modelRouteMux = sync.OnceValue(func() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range api.Routes {
		mux.Handle(rt.Method+" "+rt.Path, modelRouteHandler{rt})
	}
	return mux
})

// modelRoute returns the route that serves method and path (with its query),
// if any.
func modelRoute(method, path string) (api.Route, bool) {
	r, err := http.NewRequest(method, "http://api.example"+path, nil)
	if err != nil {
		return api.Route{}, false
	}
	h, pattern := modelRouteMux().Handler(r)
	rh, ok := h.(modelRouteHandler)
	return rh.rt, ok && pattern != ""
}

// routeRefusal is the 403 text the route itself gives key k ("" when it
// serves k).
func (m *model) routeRefusal(method, path string, k *mKey) string {
	why, _ := m.refusal(method, path, k)
	return why
}

// refusal is the 403 text a request with key k must get ("" when k may send
// it: its answer is then the book's), and the "*" key of the mode the route
// serves, which may send it instead.
func (m *model) refusal(method, path string, k *mKey) (string, *mKey) {
	rt, ok := modelRoute(method, path)
	if !ok {
		return "", nil
	}
	mode := rt.Mode.String()
	why := ""
	switch {
	case !modelHas(k.scopes, rt.Scope):
		why = msgLacksScope(rt.Scope)
	case mode == "live" && !k.live:
		why = msgLiveOnly
	case mode == "test" && k.live:
		why = msgTestOnly
	default:
		return "", nil
	}
	switch mode {
	case "live":
		return why, k.biz.live.full
	case "test":
		return why, k.biz.test.full
	}
	return why, k.biz.book(k.live).full
}

func (m *model) drawBiz(t *rapid.T) *mBiz {
	return m.bizs[rapid.IntRange(0, len(m.bizs)-1).Draw(t, "account")]
}

func (m *model) drawKey(t *rapid.T, b *mBiz) *mKey {
	return b.keys[rapid.IntRange(0, len(b.keys)-1).Draw(t, "apiKey")]
}

// useKey draws a key of book a's mode for a to send with.
func (m *model) useKey(t *rapid.T, a *mAccount) {
	var ks []*mKey
	for _, k := range a.biz.keys {
		if k.live == a.live {
			ks = append(ks, k)
		}
	}
	a.key = ks[rapid.IntRange(0, len(ks)-1).Draw(t, "bookKey")].secret
}

// otherBook draws a book other than a: another business's, or a's twin.
func (m *model) otherBook(t *rapid.T, a *mAccount) *mAccount {
	var others []*mAccount
	for _, b := range m.accts {
		if b != a {
			others = append(others, b)
		}
	}
	return others[rapid.IntRange(0, len(others)-1).Draw(t, "otherBook")]
}

// refreshBooks lists every business's books in m.accts.
func (m *model) refreshBooks() {
	var out []*mAccount
	for _, b := range m.bizs {
		out = append(out, b.live)
		if b.test != nil {
			out = append(out, b.test)
		}
	}
	m.accts = out
}

// newTwin is the business's next test twin: an empty book of its own id,
// with the business's settings.
func (m *model) newTwin(b *mBiz) *mAccount {
	b.gen++
	id := b.live.id + "_test"
	if b.gen > 1 {
		id += strconv.Itoa(b.gen)
	}
	tw := newBook(id, b.live.name, b.live.code, m.clk, b.live.tz, false)
	tw.biz = b
	if b.test != nil {
		tw.full, tw.key = b.test.full, b.test.full.secret
	}
	return tw
}

// mirrorSettings gives both books of a's business a's settings.
func (m *model) mirrorSettings(a *mAccount) {
	for _, x := range []*mAccount{a.biz.live, a.biz.test} {
		if x != nil && x != a {
			x.name, x.tz = a.name, slices.Clone(a.tz)
		}
	}
}

// drawKeyScopes draws a subset of the scopes other than "*", in any order.
func drawKeyScopes(t *rapid.T, label string) []string {
	n := len(modelScopes) - 1
	return rapid.SliceOfNDistinct(rapid.SampledFrom(modelScopes[:n]), 1, n, rapid.ID[string]).Draw(t, label)
}

// newBusiness makes an account (its default key is a live "*" key) and,
// through the API, its first keys: a live and a test "*" key, the books'
// full keys, and a live and a test key of drawn scopes.
func (m *model) newBusiness(t *rapid.T, e *env, n int) *mBiz {
	acct, secret := e.newAccount(fmt.Sprintf("Model %d", n), fmt.Sprintf("M%d", modelAccounts.Add(1)))
	b := &mBiz{}
	b.live = newBook(acct.ID, acct.Name, acct.BusinessCode, m.clk, []mSpan{{name: "UTC"}}, true)
	b.live.biz = b
	def := &mKey{id: acct.Key.ID, name: "Default key", created: m.clk.stampText(), secret: secret, scopes: []string{"*"}, live: true, biz: b}
	b.keys, m.keys[secret] = []*mKey{def}, def
	b.live.full = def
	b.live.full = m.makeKey(def, "Live all", []string{"*"}, "live")
	m.makeKey(def, "Live some", drawKeyScopes(t, fmt.Sprintf("liveScopes%d", n)), "live")
	b.test.full = m.makeKey(def, "Test all", []string{"*"}, "test")
	m.makeKey(def, "Test some", drawKeyScopes(t, fmt.Sprintf("testScopes%d", n)), "test")
	b.live.key, b.test.key = b.live.full.secret, b.test.full.secret
	return b
}

// makeKey has caller make a key that it may make, and returns it.
func (m *model) makeKey(caller *mKey, name string, scopes []string, mode string) *mKey {
	body := map[string]any{"name": name, "scopes": scopes, "mode": mode}
	return m.checkNewKey(caller.biz, m.sendOnce("POST", "/api/v1/api-keys", caller.secret, body, nil, false), name, scopes, mode != "test")
}

// checkNewKey checks the answer of a key made as asked (name, scopes, live)
// and adds the key to its business.
func (m *model) checkNewKey(b *mBiz, r reply, name string, scopes []string, live bool) *mKey {
	m.expect(r, 200, "create API key")
	got := r.obj("api_key")
	secret, _ := got["key"].(string)
	id, _ := got["id"].(string)
	prefix := "bk_live_"
	if !live {
		prefix = "bk_test_"
	}
	if r.body["message"] != "API key created" || !strings.HasPrefix(secret, prefix) || len(secret) < 40 || m.keys[secret] != nil ||
		!keyIDRE.MatchString(id) || slices.ContainsFunc(b.keys, func(k *mKey) bool { return k.id == id }) {
		m.t.Fatalf("a new %s key: %s", prefix, r.raw)
	}
	k := &mKey{id: id, name: strings.TrimSpace(name), created: m.clk.stampText(), secret: secret, scopes: modelCanonical(scopes), live: live, biz: b}
	want := mKeyWant(k)
	want["key"] = secret
	if d := jsonDiff("api_key", modelStamped(got), want); d != "" {
		m.t.Fatalf("a new key: %s: %s", d, r.raw)
	}
	if !live && b.test == nil { // the first test key makes the test twin
		b.test = m.newTwin(b)
		m.refreshBooks()
	}
	b.keys, m.keys[secret] = append(b.keys, k), k
	return k
}

// mKeyWant is key k as the API shows it (last_used_at "stamped" for any
// time: see modelStamped).
func mKeyWant(k *mKey) map[string]any {
	var used any
	if k.used.Load() {
		used = "stamped"
	}
	return map[string]any{"id": k.id, "name": k.name, "scopes": k.scopes, "mode": k.mode(), "prefix": k.secret[:12],
		"created_at": k.created, "last_used_at": used}
}

// modelStamped is a key's answer with its last_used_at, when it is a time,
// "stamped": it is the real time of a use (stamped at most once a minute),
// not the store's clock.
func modelStamped(v any) map[string]any {
	got, _ := v.(map[string]any)
	got = maps.Clone(got)
	if s, ok := got["last_used_at"].(string); ok {
		if _, err := time.Parse(business.TimeFormat, s); err == nil {
			got["last_used_at"] = "stamped"
		}
	}
	return got
}

// modelKeyNames are names of new keys: valid ones (the spaces around are
// trimmed), then blank or too long ones.
var modelKeyNames = []struct {
	name string
	ok   bool
}{{"Till 2", true}, {"  CI deploy ", true}, {strings.Repeat("é", 100), true}, {strings.Repeat("𝄞", 101), false}, {"   ", false}, {"", false}}

// createKey has a drawn key make a key: of its scopes or not, of either
// mode, now and then with a field refused; or, now and then, fills the
// business up to its most keys and past it.
func (m *model) createKey(t *rapid.T) {
	b := m.drawBiz(t)
	caller := m.drawKey(t, b)
	if rapid.IntRange(0, 9).Draw(t, "fill") == 0 {
		m.checkKeyLimit(b)
		return
	}
	var scopes []string
	switch rapid.IntRange(0, 4).Draw(t, "keyScopes") {
	case 0:
		scopes = []string{"*"}
	case 1:
		scopes = drawKeyScopes(t, "anyScopes") // some the caller may lack
	default: // scopes the caller may give: its own, and the reads its writes imply
		var can []string
		for _, s := range modelScopes[:len(modelScopes)-1] {
			if modelGrants(caller, s) {
				can = append(can, s)
			}
		}
		scopes = rapid.SliceOfNDistinct(rapid.SampledFrom(can), 1, len(can), rapid.ID[string]).Draw(t, "grantable")
	}
	if rapid.IntRange(0, 4).Draw(t, "repeatScope") == 0 {
		scopes = append(scopes, scopes[0]) // repeats are dropped
	}
	kn := modelKeyNames[rapid.IntRange(0, 2).Draw(t, "keyName")]
	if rapid.IntRange(0, 5).Draw(t, "badName") == 0 {
		kn = rapid.SampledFrom(modelKeyNames[3:]).Draw(t, "badKeyName")
	}
	mode := rapid.SampledFrom([]string{"test", "live", ""}).Draw(t, "keyMode")
	body := map[string]any{"name": kn.name, "scopes": scopes}
	if mode != "" {
		body["mode"] = mode
	}
	var bad []string
	if !kn.ok {
		bad = append(bad, "name")
	}
	switch rapid.IntRange(0, 15).Draw(t, "badKey") {
	case 0:
		body["scopes"], bad = []string{}, append(bad, "scopes")
	case 1:
		body["scopes"], bad = append(slices.Clone(scopes), "sales:delete"), append(bad, "scopes")
	case 2:
		body["mode"], bad = "sandbox", append(bad, "mode")
	case 3:
		body["colour"], bad = "red", []string{"colour"} // unknown fields are refused before the others are read
	}
	live := mode != "test"
	r := m.sendOnce("POST", "/api/v1/api-keys", caller.secret, body, nil, false)
	what := fmt.Sprintf("a %s key of scopes %v makes %v", caller.mode(), caller.scopes, body)
	ungranted := slices.IndexFunc(modelCanonical(scopes), func(s string) bool { return !modelGrants(caller, s) })
	switch {
	case !modelHas(caller.scopes, "keys:write"):
		m.expectRefusal(r, 403, msgLacksScope("keys:write"), what)
	case len(bad) > 0:
		m.expect(r, 400, what)
		for _, f := range bad {
			if r.field(f) == "" {
				m.t.Fatalf("%s: 400 does not name %s: %s", what, f, r.raw)
			}
		}
	case live && !caller.live:
		m.expectRefusal(r, 403, msgTestKeysOnly, what)
	case ungranted >= 0:
		s := modelCanonical(scopes)[ungranted]
		m.expectRefusal(r, 403, "This API key lacks the scope "+s+", so it cannot grant it: a key creates keys only with scopes it has itself", what)
	case len(b.keys) >= 20:
		m.expectRefusal(r, http.StatusConflict, msgKeyLimit, what)
	default:
		m.checkNewKey(b, r, kn.name, scopes, live)
	}
}

// expectRefusal checks that r is a refusal: code with the error text why.
func (m *model) expectRefusal(r reply, code int, why, what string) {
	m.t.Helper()
	m.expect(r, code, what)
	if r.errText() != why {
		m.t.Fatalf("%s: error %q, want %q", what, r.errText(), why)
	}
}

// checkKeyLimit makes test keys until the business has 20, the most it may have;
// one more is refused 409 (whatever its mode); then revokes the keys it made.
func (m *model) checkKeyLimit(b *mBiz) {
	caller := b.live.full
	var made []*mKey
	for i := 1; len(b.keys) < 20; i++ {
		made = append(made, m.makeKey(caller, fmt.Sprintf("Filler %d", i), []string{"sales:read"}, "test"))
	}
	for _, mode := range []string{"live", "test"} {
		r := m.sendOnce("POST", "/api/v1/api-keys", caller.secret, map[string]any{"name": "One too many", "scopes": []string{"*"}, "mode": mode}, nil, false)
		m.expectRefusal(r, http.StatusConflict, msgKeyLimit, "a 21st key")
	}
	for _, k := range made {
		m.checkRevoke(caller, k, k.id, m.send("POST", "/api/v1/api-keys/"+k.id+"/revoke", caller.secret, nil, nil))
	}
}

// listKeys lists the keys with a drawn key: a live key sees every active
// key, a test key the test keys; in the order they were made. With a query:
// 400.
func (m *model) listKeys(t *rapid.T) {
	b := m.drawBiz(t)
	k := m.drawKey(t, b)
	path := "/api/v1/api-keys"
	query := rapid.IntRange(0, 5).Draw(t, "keysQuery") == 0
	if query {
		path += "?limit=5"
	}
	// A refused key's request is sent again with the "*" key of its mode:
	// the same keys are seen.
	r := m.send("GET", path, k.secret, nil, nil)
	if query {
		m.expectRefused(r, "limit", "list keys with a query")
		return
	}
	m.expect(r, 200, "list keys")
	want := []any{}
	for _, x := range b.keys { // in the order they were made
		if k.live || !x.live {
			want = append(want, mKeyWant(x))
		}
	}
	var got []any
	for _, x := range r.list("api_keys") {
		got = append(got, modelStamped(x))
	}
	if d := jsonDiff("api_keys", got, want); d != "" || r.body["message"] != "API keys found" {
		m.t.Fatalf("keys as a %s key lists them: %s: %s", k.mode(), d, r.raw)
	}
}

// revokeKey has a drawn key revoke a key (never a book's "*" key), one
// revoked before, one that does not exist, or an id of bad form. A key
// revokes only keys it sees (a test key: test keys) and whose scopes it
// could grant; a key revoked answers 401 at once.
func (m *model) revokeKey(t *rapid.T) {
	b := m.drawBiz(t)
	caller := m.drawKey(t, b)
	var targets []*mKey
	for _, k := range b.keys {
		if k != b.live.full && k != b.test.full {
			targets = append(targets, k)
		}
	}
	targets = append(targets, b.revoked...)
	id := ""
	var target *mKey
	switch c := rapid.IntRange(0, 9).Draw(t, "revokeWhat"); {
	case c == 0:
		id = "key_0000000000000000"
	case c == 1:
		id = "key_NOPE"
	case len(targets) == 0:
		return
	default:
		target = targets[rapid.IntRange(0, len(targets)-1).Draw(t, "revoked")]
		id = target.id
	}
	// A refused key's request is sent again with the "*" key of its mode:
	// the same keys are seen.
	m.checkRevoke(caller, target, id, m.send("POST", "/api/v1/api-keys/"+id+"/revoke", caller.secret, nil, nil))
}

// checkRevoke checks the answer r of caller's revoking key id (target; nil
// when no key has id).
func (m *model) checkRevoke(caller, target *mKey, id string, r reply) {
	b := caller.biz
	by := caller // the key that revoked: a refused caller's "*" key (see sendAllowing)
	if !modelHas(caller.scopes, "keys:write") {
		by = b.book(caller.live).full
	}
	what := fmt.Sprintf("a %s key of scopes %v revokes %s", by.mode(), by.scopes, id)
	switch {
	case !keyIDRE.MatchString(id):
		m.expectRefusal(r, 404, "API key not found", what)
		return
	case target == nil || target.revoked || target.live && !caller.live:
		m.expectRefusal(r, 404, "API key "+id+" not found", what)
		return
	case slices.ContainsFunc(target.scopes, func(s string) bool { return !modelGrants(by, s) }):
		m.expectRefusal(r, 403, "This API key cannot revoke API key "+id+": that key has scopes this one lacks", what)
		return
	case target.live && modelHas(target.scopes, "keys:write") &&
		!slices.ContainsFunc(b.keys, func(k *mKey) bool { return k != target && k.live && modelHas(k.scopes, "keys:write") }):
		m.expectRefusal(r, http.StatusConflict, "API key "+id+" is the last live key with the scope keys:write; create another before revoking it", what)
		return
	}
	m.expect(r, 200, what)
	if d := jsonDiff("api_key", modelStamped(r.obj("api_key")), mKeyWant(target)); d != "" || r.body["message"] != "API key revoked" {
		m.t.Fatalf("%s: %s: %s", what, d, r.raw)
	}
	target.revoked = true
	b.keys = slices.DeleteFunc(b.keys, func(k *mKey) bool { return k == target })
	b.revoked = append(b.revoked, target)
	m.expectRefusal(m.sendOnce("GET", "/api/v1/user/authenticate", target.secret, nil, nil, false), 401, "Unauthorized: Invalid API Key", "a revoked key")
}

// rotateKey gives a drawn key a new secret: the old one answers 401 at
// once; the key keeps its id, name, scopes and mode.
func (m *model) rotateKey(t *rapid.T) {
	b := m.drawBiz(t)
	k := m.drawKey(t, b)
	old := k.secret
	r := m.send("POST", "/api/v1/user/api-key/rotate", old, nil, nil)
	m.expect(r, 200, "rotate a key")
	secret, _ := r.data()["api_key"].(string)
	if r.body["message"] != "API key rotated" || !strings.HasPrefix(secret, "bk_"+k.mode()+"_") || len(secret) < 40 || secret == old || m.keys[secret] != nil {
		m.t.Fatalf("rotation of a %s key: %s", k.mode(), r.raw)
	}
	delete(m.keys, old)
	k.secret, m.keys[secret] = secret, k
	k.used.Store(false)
	m.expectRefusal(m.sendOnce("GET", "/api/v1/user/authenticate", old, nil, nil, false), 401, "Unauthorized: Invalid API Key", "a rotated key's old secret")
}

// authenticate asks who a drawn key is: the business (the live id in both
// modes), the mode, and the key itself.
func (m *model) authenticate(t *rapid.T) {
	b := m.drawBiz(t)
	m.checkAuthenticate(m.drawKey(t, b))
}

// checkAuthenticate checks who key k is.
func (m *model) checkAuthenticate(k *mKey) {
	b := k.biz
	a := b.book(k.live)
	key := mKeyWant(k) // as it was before this use
	r := m.send("GET", "/api/v1/user/authenticate", k.secret, nil, nil)
	m.expect(r, 200, "authenticate")
	want := map[string]any{
		"account": map[string]any{"id": b.live.id, "name": a.name, "business_code": a.code, "currency": "GHS", "invoice_prefix": "INV",
			"timezone": a.tz[len(a.tz)-1].name},
		"livemode": k.live, "api_key": key}
	got := maps.Clone(r.data())
	got["api_key"] = modelStamped(got["api_key"])
	if d := jsonDiff("data", got, want); d != "" || r.body["message"] != "Authenticated" {
		m.t.Fatalf("authenticate with a %s key: %s: %s", k.mode(), d, r.raw)
	}
}

// concurrentKeyChanges changes a business's settings (its name), makes a
// key, rotates another and, now and then, clears the test data, all at once:
// each answers as if alone, and then every key, of both modes, shows the
// new name (each key holds a copy of its business's fields), and so do both
// books' settings.
func (m *model) concurrentKeyChanges(t *rapid.T) {
	b := m.drawBiz(t)
	if len(b.keys) >= 20 {
		return
	}
	name := fmt.Sprintf("Raced %d", rapid.IntRange(1, 9).Draw(t, "raceName"))
	live := rapid.Bool().Draw(t, "raceKeyLive")
	mode := map[bool]string{true: "live", false: "test"}[live]
	var rot *mKey // not a "*" key, which the others send with
	for _, k := range b.keys {
		if k != b.live.full && k != b.test.full && (rot == nil || rapid.Bool().Draw(t, "raceRotate")) {
			rot = k
		}
	}
	clear := rapid.Bool().Draw(t, "raceClear")
	var rs, rk, rr, rc reply
	var wg sync.WaitGroup
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	run(func() {
		rs = m.sendOnce("PUT", "/api/v1/user/settings", b.live.full.secret, map[string]any{"business_name": name}, nil, false)
	})
	run(func() {
		rk = m.sendOnce("POST", "/api/v1/api-keys", b.live.full.secret, map[string]any{"name": "Raced key", "scopes": []string{"sales:read"}, "mode": mode}, nil, false)
	})
	if rot != nil {
		run(func() { rr = m.sendOnce("POST", "/api/v1/user/api-key/rotate", rot.secret, nil, nil, false) })
	}
	if clear {
		run(func() { rc = m.sendOnce("POST", "/api/v1/test-data/clear", b.test.full.secret, nil, nil, false) })
	}
	wg.Wait()
	m.expect(rs, 200, "settings changed at once with keys")
	b.live.name = name
	m.mirrorSettings(b.live)
	m.checkSettings(b.live, rs, "Settings updated")
	m.checkNewKey(b, rk, "Raced key", []string{"sales:read"}, live)
	if rot != nil {
		m.expect(rr, 200, "a key rotated at once with settings")
		secret, _ := rr.data()["api_key"].(string)
		if !strings.HasPrefix(secret, "bk_"+rot.mode()+"_") || m.keys[secret] != nil {
			m.t.Fatalf("rotation of a %s key: %s", rot.mode(), rr.raw)
		}
		delete(m.keys, rot.secret)
		rot.secret, m.keys[secret] = secret, rot
		rot.used.Store(false)
	}
	if clear {
		if rc.code != 200 && rc.code != http.StatusAccepted {
			m.t.Fatalf("test data cleared at once with settings and keys: %d %s", rc.code, rc.raw)
		}
		b.test = m.newTwin(b)
		m.refreshBooks()
	}
	for _, k := range slices.Clone(b.keys) {
		m.checkAuthenticate(k)
	}
	for _, a := range []*mAccount{b.live, b.test} {
		a.key = a.full.secret
		m.checkSettings(a, m.send("GET", "/api/v1/user/settings", a.key, nil, nil), "Settings found")
	}
}

// clearTestData clears the test data with a drawn key: only a test "*" key
// may. The test keys then act on a fresh, empty twin; the live book is as it
// was.
func (m *model) clearTestData(t *rapid.T) {
	b := m.drawBiz(t)
	k := b.test.full // most times the key that may
	if rapid.Bool().Draw(t, "anyKey") {
		k = m.drawKey(t, b)
	}
	const path = "/api/v1/test-data/clear"
	r := m.sendOnce("POST", path, k.secret, nil, nil, false)
	switch {
	case !modelHas(k.scopes, "*"):
		m.expectRefusal(r, 403, msgLacksScope("*"), "clear test data with a key of scopes "+fmt.Sprint(k.scopes))
		return
	case k.live:
		m.expectRefusal(r, 403, msgTestOnly, "clear test data with a live key")
		return
	}
	old := b.test
	m.buryLinks(old)
	// Each call clears again; one answering 202 left some of the old
	// records to delete, which the next call goes on with.
	for calls := 1; ; calls++ {
		b.test = m.newTwin(b)
		m.refreshBooks()
		if r.code != http.StatusAccepted {
			break
		}
		if r.body["message"] != "Test data cleared; deleting the old records continues" || r.data()["purge_complete"] != false || calls > 20 {
			m.t.Fatalf("clear test data (call %d): %s", calls, r.raw)
		}
		r = m.sendOnce("POST", path, k.secret, nil, nil, false)
	}
	m.expect(r, 200, "clear test data")
	if r.body["message"] != "Test data cleared" || r.data()["purge_complete"] != true {
		m.t.Fatalf("clear test data: %s", r.raw)
	}
	// The old twin's records are gone for the test keys; the new twin's
	// books are empty, the live book's as they were.
	a := b.test
	a.key = k.secret
	if code, _, ok := pick(t, old.sales, "oldSale"); ok {
		m.expect(m.send("GET", "/api/v1/sales/"+code, a.key, nil, nil), 404, "a sale of the cleared test data")
	}
	if id, _, ok := pick(t, old.customers, "oldCustomer"); ok {
		m.expect(m.send("GET", fmt.Sprintf("/api/v1/customers/%d", id), a.key, nil, nil), 404, "a customer of the cleared test data")
	}
	m.checkToday(a)
	m.checkReceivables(a, "")
	m.checkInventory(a)
	m.checkHook(a, m.send("GET", "/api/v1/user/webhook", a.key, nil, nil), "Webhook settings found")
	b.live.key = b.live.full.secret
	m.checkToday(b.live)
	m.checkReceivables(b.live, "")
	m.checkInventory(b.live)
}

// webhookSettings changes a book's webhook settings (or not), and reads
// them back: each book has its own.
func (m *model) webhookSettings(t *rapid.T) {
	a := m.drawAccount(t)
	if rapid.Bool().Draw(t, "changeHook") {
		body := map[string]any{}
		hook := a.hook
		switch rapid.IntRange(0, 3).Draw(t, "hookURL") {
		case 1:
			body["callback_url"], hook.url = nil, ""
		case 2, 3:
			u := fmt.Sprintf("https://hooks.example.com/%s/%d", map[bool]string{true: "live", false: "test"}[a.live], rapid.IntRange(1, 3).Draw(t, "hookN"))
			body["callback_url"], hook.url = u, u
		}
		switch rapid.IntRange(0, 2).Draw(t, "hookSecret") {
		case 1:
			body["callback_secret"], hook.signed = "whsec_0123456789abcdef", true
		case 2:
			body["callback_secret"], hook.signed = nil, false
		}
		r := m.send("PUT", "/api/v1/user/webhook", a.key, body, nil)
		hook.at = m.clk.stampText()
		a.hook = hook
		m.checkHook(a, r, "Webhook settings updated")
	}
	m.checkHook(a, m.send("GET", "/api/v1/user/webhook", a.key, nil, nil), "Webhook settings found")
}

// checkHook compares a webhook settings answer with the book's.
func (m *model) checkHook(a *mAccount, r reply, msg string) {
	m.expect(r, 200, msg)
	want := map[string]any{"callback_url": nil, "signed": a.hook.signed, "business_code": a.code, "currency": "GHS", "updated_at": nil}
	if a.hook.url != "" {
		want["callback_url"] = a.hook.url
	}
	if a.hook.at != "" {
		want["updated_at"] = a.hook.at
	}
	if d := jsonDiff("webhook", r.obj("webhook"), want); d != "" || r.body["message"] != msg {
		m.t.Fatalf("webhook settings of a book with livemode %v: %s: %s", a.live, d, r.raw)
	}
}

// forbiddenRoute sends, with a drawn key, a request to a route it may not
// call (any route of the table, those no other step calls too): 403 saying
// why, whatever the path's values and the body.
func (m *model) forbiddenRoute(t *rapid.T) {
	b := m.drawBiz(t)
	k := m.drawKey(t, b)
	type call struct {
		path, why string
		rt        api.Route
	}
	var calls []call
	for _, rt := range api.Routes {
		path := rt.Path
		for _, v := range []string{"{invoice_code}", "{id}", "{item_code}", "{transaction_id}"} {
			path = strings.ReplaceAll(path, v, "1")
		}
		if why, _ := m.refusal(rt.Method, path, k); why != "" {
			calls = append(calls, call{path, why, rt})
		}
	}
	if len(calls) == 0 {
		return
	}
	c := calls[rapid.IntRange(0, len(calls)-1).Draw(t, "forbidden")]
	var body any
	if c.rt.Method != http.MethodGet && c.rt.Method != http.MethodDelete {
		body = rapid.SampledFrom([]any{nil, map[string]any{}, []byte(`{"not JSON`)}).Draw(t, "forbiddenBody")
	}
	r := m.sendOnce(c.rt.Method, c.path, k.secret, body, nil, false)
	m.expectRefusal(r, 403, c.why, fmt.Sprintf("%s %s with a %s key of scopes %v", c.rt.Method, c.path, k.mode(), k.scopes))
}

// TestModelRouteTable checks the route table's scopes and modes, which
// the model takes, against the rules the description states: a family's
// read scope to read it and its write scope to change it; webhooks:write for
// every webhook route; keys:write for the key routes; none for the routes
// that show or change only the calling key, or read the settings; "*" and a
// live key to change the settings, "*" and a test key to clear test data.
func TestModelRouteTable(t *testing.T) {
	for _, rt := range api.Routes {
		scope, mode := "", "any"
		seg := strings.Split(rt.Path, "/")
		switch {
		case rt.Function == "authenticate" || rt.Function == "rotate-api-key" || rt.Function == "get-settings":
			scope = "none"
		case rt.Function == "update-settings":
			scope, mode = "*", "live"
		case rt.Function == "clear-test-data":
			scope, mode = "*", "test"
		case strings.Contains(rt.Path, "/webhook"):
			scope = "webhooks:write"
		case seg[3] == "api-keys":
			scope = "keys:write"
		case rt.Method == http.MethodGet:
			scope = seg[3] + ":read"
		default:
			scope = seg[3] + ":write"
		}
		if rt.Scope != scope || rt.Mode.String() != mode {
			t.Errorf("%s (%s %s): scope %q mode %s, want %q %s", rt.Function, rt.Method, rt.Path, rt.Scope, rt.Mode, scope, mode)
		}
		if scope != "none" && !slices.Contains(modelScopes, scope) {
			t.Errorf("%s: scope %q is none of the scopes", rt.Function, scope)
		}
	}
}
