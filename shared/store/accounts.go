package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func keyPK(hash string) string { return "KEY#" + hash }

// isConditionFailed reports whether err is a single write's failed condition.
func isConditionFailed(err error) bool {
	var cf *types.ConditionalCheckFailedException
	return errors.As(err, &cf)
}

// accountFields writes the account's own fields into it; the key item carries
// a copy so that authenticating a request is one GetItem.
func accountFields(it attrs, a business.Account) {
	it["account_id"] = str(a.ID)
	it["name"] = str(a.Name)
	it["business_code"] = str(a.BusinessCode)
	it["currency"] = str(a.Currency)
	it["invoice_prefix"] = str(a.InvoicePrefix)
	if a.Timezone != "" && a.Timezone != business.DefaultTimezone {
		it["timezone"] = str(a.Timezone)
	}
	it["created_at"] = str(fmtTime(a.CreatedAt))
}

func accountFrom(it attrs) business.Account {
	a := business.Account{
		ID:            getS(it, "account_id"),
		Name:          getS(it, "name"),
		BusinessCode:  getS(it, "business_code"),
		Currency:      getS(it, "currency"),
		InvoicePrefix: getS(it, "invoice_prefix"),
		Timezone:      getS(it, "timezone"),
		CreatedAt:     getTime(it, "created_at"),
	}
	if a.Timezone == "" {
		a.Timezone = business.DefaultTimezone
	}
	return a
}

// The account directory: one item per account in one partition, keyed by
// business code. Its condition keeps business codes unique (the webhook
// payload names the merchant by it), and one Query lists every account for
// operators. Accounts are created rarely, so the partition is never hot.
const accountsPK = "ACCOUNTS"

func accountCodeKey(businessCode string) attrs { return key(accountsPK, "CODE#"+businessCode) }

func accountCodeItem(a business.Account) attrs {
	it := accountCodeKey(a.BusinessCode)
	accountFields(it, a)
	it["type"] = str("account_code")
	return it
}

func errCodeTaken(code string) error {
	return business.Errorf(business.ECONFLICT, "business_code %s is already taken by another account", code)
}

// CreateAccount stores a new account a (its ID is assigned here; a.Timezone,
// if set, is its timezone from the start) with a fresh "*" live API key, and returns the account (Key describing that key) and
// the key. The key is not stored, only
// its hash. Returns ECONFLICT naming business_code when another account has
// that business code.
func (s *Store) CreateAccount(ctx context.Context, a business.Account) (business.Account, string, error) {
	return s.createAccount(ctx, a, nil)
}

// createAccount is CreateAccount with one more action, made by also from the
// new account's id, in its transaction (nil for none).
func (s *Store) createAccount(ctx context.Context, a business.Account, also func(id string) txItem) (business.Account, string, error) {
	a.ID = business.NewAccountID()
	a.CreatedAt = s.now()
	k, apiKey := business.NewKey(business.DefaultKeySpec(), a.CreatedAt)
	acct := accountKey(a.ID)
	accountFields(acct, a)
	acct["type"] = str("account")
	acct[keysAttr] = keysValue([]business.APIKey{k})
	if a.Timezone != "" && a.Timezone != business.DefaultTimezone { // its zone since the start
		acct[timezonesAttr] = timezonesValue(business.TimezoneHistory{{Name: a.Timezone}})
	}
	actions := []txItem{
		{action: put(s.table, acct, "attribute_not_exists(PK)"), onFail: business.Errorf(business.ECONFLICT, "account id collision; retry")},
		{action: put(s.table, keyItem(a, k), "attribute_not_exists(PK)"), onFail: business.Errorf(business.ECONFLICT, "api key collision; retry")},
		{action: put(s.table, accountCodeItem(a), "attribute_not_exists(PK)"), onFail: errCodeTaken(a.BusinessCode)},
	}
	if also != nil {
		actions = append(actions, also(a.ID))
	}
	err := s.transact(ctx, actions)
	if err != nil {
		return business.Account{}, "", err
	}
	a.Key = k
	return a, apiKey, nil
}

// ListAccounts returns every account of the directory, by business code.
func (s *Store) ListAccounts(ctx context.Context) ([]business.Account, error) {
	var out []business.Account
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: attrs{":pk": str(accountsPK)},
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list accounts: %w", err)
		}
		for _, it := range page.Items {
			out = append(out, accountFrom(it))
		}
	}
	return out, nil
}

// FindAccountByCode returns the account with businessCode. Returns ENOTFOUND
// when no account of the directory has it.
func (s *Store) FindAccountByCode(ctx context.Context, businessCode string) (business.Account, error) {
	it, err := s.getOne(ctx, accountCodeKey(businessCode), "no account has business_code "+businessCode, true)
	if err != nil {
		return business.Account{}, err
	}
	return accountFrom(it), nil
}

// IndexAccountCodes adds to the directory every account created before it
// existed (one Scan of the table; run once per deployment, idempotent). It
// returns how many it added, and names the business codes that two accounts
// share: those keep the first account found, and the other must be given
// another code by hand. A test twin is not an account of the directory (it
// carries its live account's code, so filing it would take that code): it is
// skipped, and an entry a twin holds (as an index run that filed twins left
// it) goes to its live account.
func (s *Store) IndexAccountCodes(ctx context.Context) (added int, shared []string, err error) {
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("#t = :account"),
		ExpressionAttributeNames:  map[string]string{"#t": "type"},
		ExpressionAttributeValues: attrs{":account": str("account")},
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return added, shared, fmt.Errorf("scan accounts: %w", err)
		}
		for _, it := range page.Items {
			a := accountFrom(it)
			if business.IsTestAccount(a.ID) {
				continue
			}
			_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
				TableName: aws.String(s.table), Item: accountCodeItem(a),
				ConditionExpression:                 aws.String("attribute_not_exists(PK)"),
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			})
			var cf *types.ConditionalCheckFailedException
			switch {
			case err == nil:
				added++
			case errors.As(err, &cf):
				holder := getS(cf.Item, "account_id")
				switch {
				case holder == a.ID: // already listed: nothing to do
				case business.IsTestAccount(holder) && business.LiveID(holder) == a.ID:
					// The entry names a's own twin: it becomes a's, on
					// condition that the twin still holds it.
					_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
						TableName: aws.String(s.table), Item: accountCodeItem(a),
						ConditionExpression:       aws.String("account_id = :twin"),
						ExpressionAttributeValues: attrs{":twin": str(holder)},
					})
					if err != nil && !isConditionFailed(err) {
						return added, shared, fmt.Errorf("index account %s: %w", a.ID, err)
					}
					if err == nil {
						added++
					}
				default:
					shared = append(shared, a.BusinessCode+" ("+a.ID+")")
				}
			default:
				return added, shared, fmt.Errorf("index account %s: %w", a.ID, err)
			}
		}
	}
	return added, shared, nil
}

// lastUsedKey is the attribute of a key's item that holds its last use.
const lastUsedKey = "last_used_at"

// LastUsedEvery is how stale a key's last_used_at may be before a request
// that reads the key from the table stamps it again. With the API's 5 s key
// cache, the stamp trails the key's last use by at most a minute, and a busy
// key costs about one write a minute, not one per request.
const LastUsedEvery = 55 * time.Second

// FindAccountByKeyHash returns the account whose API key hashes to hash,
// with the key (Account.Key) and when it was last used. Returns
// EUNAUTHORIZED when no such key exists (unknown, rotated or revoked). The
// read is consistent, so that right after a rotation the new key works and
// the old one does not; the API's key cache (shared/api/auth.go) keeps this
// read off most requests, so its double cost is rarely paid.
func (s *Store) FindAccountByKeyHash(ctx context.Context, hash string) (business.Account, error) {
	it, err := s.getItem(ctx, key(keyPK(hash), "KEY"), true)
	if err != nil {
		return business.Account{}, fmt.Errorf("get api key: %w", err)
	}
	if it == nil {
		return business.Account{}, business.Errorf(business.EUNAUTHORIZED, "Unauthorized: Invalid API Key")
	}
	a := accountFrom(it)
	a.Key = keyFrom(it, hash)
	return a, nil
}

// StampKeyUse records that the key with hash was used at `at`, unless its
// stamp is already within LastUsedEvery of it (a concurrent stamp won) or
// the key is gone. One conditional write; losing the condition is no error.
func (s *Store) StampKeyUse(ctx context.Context, hash string, at time.Time) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(keyPK(hash), "KEY"),
		UpdateExpression:          aws.String("SET " + lastUsedKey + " = :at"),
		ConditionExpression:       aws.String("attribute_exists(PK) AND (attribute_not_exists(" + lastUsedKey + ") OR " + lastUsedKey + " < :stale)"),
		ExpressionAttributeValues: attrs{":at": str(fmtTime(at)), ":stale": str(fmtTime(at.Add(-LastUsedEvery)))},
	})
	if isConditionFailed(err) {
		return nil
	}
	return err
}

// SecretKeyPrefix starts the partition key of every callback secret's item.
// Secrets live apart from the account so that IAM can keep them from every
// function but the ones that sign: template.yaml denies the API functions
// any item whose leading key matches it (dynamodb:LeadingKeys).
const SecretKeyPrefix = "SECRET#"

func secretKey(accountID string) attrs { return key(SecretKeyPrefix+accountID, "WEBHOOK") }

// FindAccount returns the account and its webhook settings, the callback
// secret included, with one BatchGetItem. Only the webhook functions may
// call it on AWS. Returns ENOTFOUND when the account does not exist.
func (s *Store) FindAccount(ctx context.Context, accountID string) (business.Account, business.Webhook, error) {
	found, err := s.batchGet(ctx, []attrs{accountKey(accountID), secretKey(accountID)})
	if err != nil {
		return business.Account{}, business.Webhook{}, fmt.Errorf("get account: %w", err)
	}
	acct, secret := found[0], found[1]
	if acct == nil {
		return business.Account{}, business.Webhook{}, business.Errorf(business.ENOTFOUND, "account %s not found", accountID)
	}
	wh := business.Webhook{CallbackURL: getS(acct, "callback_url"), CallbackSecret: getS(secret, "secret")}
	if secret == nil { // set before secrets had an item of their own
		wh.CallbackSecret = getS(acct, "callback_secret")
	}
	return accountFrom(acct), wh, nil
}

// WebhookSettings is what an account's own API key may see of its webhook:
// the URL, whether a secret is set (never the secret) and when they changed.
type WebhookSettings struct {
	CallbackURL string
	Signed      bool
	UpdatedAt   time.Time
}

func webhookSettingsFrom(it attrs) WebhookSettings {
	_, legacy := it["callback_secret"]
	signed, _ := it["webhook_signed"].(*types.AttributeValueMemberBOOL)
	return WebhookSettings{CallbackURL: getS(it, "callback_url"), Signed: legacy || (signed != nil && signed.Value), UpdatedAt: getTime(it, "webhook_updated_at")}
}

// FindWebhookSettings returns the account and its webhook settings without
// the secret (one GetItem of the account item). Returns ENOTFOUND when the
// account does not exist.
func (s *Store) FindWebhookSettings(ctx context.Context, accountID string) (business.Account, WebhookSettings, error) {
	it, err := s.getAccountItem(ctx, accountID)
	if err != nil {
		return business.Account{}, WebhookSettings{}, err
	}
	return accountFrom(it), webhookSettingsFrom(it), nil
}

// SetWebhook stores both webhook settings at once (the admin CLI's form of
// UpdateWebhook): an empty secret removes it.
func (s *Store) SetWebhook(ctx context.Context, accountID string, w business.Webhook) error {
	_, err := s.UpdateWebhook(ctx, accountID, &w.CallbackURL, &w.CallbackSecret)
	return err
}

// UpdateWebhook changes the account's webhook settings: the URL on the
// account item, the secret in an item of its own (see SecretKeyPrefix),
// never read here. A nil argument keeps that setting; an empty URL stops
// notifications and an empty secret removes it (deliveries then carry no
// signature header). The settings.updated event, in the same transaction,
// names callback_url when it changed and callback_secret whenever one was
// sent (it is never read here, nor put in the event). It returns the
// settings as stored. Returns ENOTFOUND when the account does not exist.
func (s *Store) UpdateWebhook(ctx context.Context, accountID string, callbackURL, secret *string) (WebhookSettings, error) {
	var out WebhookSettings
	err := retrying(ctx, func() error {
		cur, err := s.getAccountItem(ctx, accountID)
		if err != nil {
			return err
		}
		out = webhookSettingsFrom(cur)
		changed := []string{}
		if callbackURL != nil && *callbackURL != out.CallbackURL {
			out.CallbackURL, changed = *callbackURL, append(changed, "callback_url")
		}
		actions := []txItem{}
		if secret != nil {
			changed = append(changed, "callback_secret")
			out.Signed = *secret != ""
			del := types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: secretKey(accountID)}}
			if *secret != "" {
				it := secretKey(accountID)
				it["type"], it["account_id"], it["secret"] = str("webhook_secret"), str(accountID), str(*secret)
				del = put(s.table, it, "")
			}
			actions = append(actions, txItem{action: del})
		} else if legacy, ok := cur["callback_secret"]; ok {
			// The account's secret predates secret items: it moves to its item
			// before the REMOVE below takes it off the account, so deliveries
			// stay signed.
			actions = append(actions, s.moveLegacySecret(accountID, legacy))
		}
		out.UpdatedAt = s.stamp()
		set := "SET webhook_signed = :signed, webhook_updated_at = :at, version = if_not_exists(version, :zero) + :one"
		remove := " REMOVE callback_secret"
		vals := attrs{":signed": &types.AttributeValueMemberBOOL{Value: out.Signed}, ":at": str(fmtTime(out.UpdatedAt)), ":zero": nInt(0), ":one": nInt(1)}
		if out.CallbackURL != "" {
			set += ", callback_url = :u"
			vals[":u"] = str(out.CallbackURL)
		} else {
			remove += ", callback_url"
		}
		// Guarded by the version read, so a concurrent change starts over.
		cond := "attribute_exists(PK) AND (attribute_not_exists(version) OR version = :v)"
		vals[":v"] = nInt(getInt(cur, "version"))
		if _, ok := cur["version"]; !ok {
			cond = "attribute_exists(PK) AND attribute_not_exists(version)"
			delete(vals, ":v")
		}
		actions = append([]txItem{{action: types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: accountKey(accountID),
			UpdateExpression: aws.String(set + remove), ConditionExpression: aws.String(cond), ExpressionAttributeValues: vals,
		}}, onFail: errRetry}}, actions...)
		actions, err = s.withEvents(actions, settingsEvent(accountID, cur, changed, out.UpdatedAt))
		if err != nil {
			return err
		}
		return s.transact(ctx, actions)
	})
	return out, err
}

// MigrateLegacySecrets moves every callback secret still kept on its account
// item (set before secrets had an item of their own, see SecretKeyPrefix) to
// its secret item, so that no function that may read account items can read
// a secret. One Scan of the table finds them (run once per deployment, from
// the admin CLI; idempotent). Each account is one transaction: the secret
// item gets the secret unless it has one (an existing item is the newer
// setting and wins), and callback_secret leaves the account item, which says
// webhook_signed from then on, on condition that it still holds the secret
// read; a concurrent change starts that account over. It returns how many
// accounts it migrated; no secret appears in what it returns, errors
// included.
func (s *Store) MigrateLegacySecrets(ctx context.Context) (int, error) {
	migrated := 0
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          aws.String("#t = :account AND attribute_exists(callback_secret)"),
		ProjectionExpression:      aws.String("account_id"), // the secret is read again, consistently, per account
		ExpressionAttributeNames:  map[string]string{"#t": "type"},
		ExpressionAttributeValues: attrs{":account": str("account")},
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return migrated, fmt.Errorf("scan for account items with a callback_secret: %w", err)
		}
		for _, it := range page.Items {
			id := getS(it, "account_id")
			moved, err := s.migrateLegacySecret(ctx, id)
			if err != nil {
				return migrated, fmt.Errorf("migrate the callback secret of account %s (%d accounts migrated before it; run again to go on): %w", id, migrated, err)
			}
			if moved {
				migrated++
			}
		}
	}
	return migrated, nil
}

// migrateLegacySecret moves one account's legacy callback_secret to its
// secret item; false when there was none left to move.
func (s *Store) migrateLegacySecret(ctx context.Context, accountID string) (bool, error) {
	moved := false
	err := retrying(ctx, func() error {
		acct, err := s.getAccountItem(ctx, accountID)
		if err != nil {
			return err
		}
		legacy, ok := acct["callback_secret"]
		if moved = ok; !ok { // moved or replaced since the Scan saw it
			return nil
		}
		// The account item changes only if it still holds the secret read: a
		// concurrent change reads again.
		return s.transact(ctx, []txItem{{action: types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.table), Key: accountKey(accountID),
			UpdateExpression:    aws.String("SET webhook_signed = :signed, version = if_not_exists(version, :zero) + :one REMOVE callback_secret"),
			ConditionExpression: aws.String("callback_secret = :legacy"),
			ExpressionAttributeValues: attrs{":signed": &types.AttributeValueMemberBOOL{Value: true}, ":legacy": legacy,
				":zero": nInt(0), ":one": nInt(1)},
		}}, onFail: errRetry}, s.moveLegacySecret(accountID, legacy)})
	})
	return moved, err
}

// moveLegacySecret is the transaction action that gives an account's legacy
// callback_secret its own item, unless the account has one already (the
// newer setting, which wins). It never reads the secret item, so a function
// denied reading secrets may run it.
func (s *Store) moveLegacySecret(accountID string, legacy types.AttributeValue) txItem {
	return txItem{action: types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: secretKey(accountID),
		UpdateExpression:          aws.String("SET secret = if_not_exists(secret, :legacy), #type = :type, account_id = :a"),
		ExpressionAttributeNames:  map[string]string{"#type": "type"},
		ExpressionAttributeValues: attrs{":legacy": legacy, ":type": str("webhook_secret"), ":a": str(accountID)},
	}}}
}

func accountKey(accountID string) attrs { return key(acctPK(accountID), "ACCOUNT") }

// accountVersionCond is the condition that the account item is still at
// the version read in cur (for an item from before versions: still
// without one), its value set in vals.
func accountVersionCond(cur, vals attrs) string {
	if _, ok := cur["version"]; ok {
		vals[":v"] = nInt(getInt(cur, "version"))
		return "version = :v"
	}
	return "attribute_exists(PK) AND attribute_not_exists(version)"
}

// getAccountItem reads the account item consistently; ENOTFOUND when the
// account does not exist.
func (s *Store) getAccountItem(ctx context.Context, accountID string) (attrs, error) {
	return s.getOne(ctx, accountKey(accountID), "account "+accountID+" not found", true)
}
