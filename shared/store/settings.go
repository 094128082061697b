package store

import (
	"context"
	"encoding/json"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Settings are an account's own settings, as the API shows them (see
// business.Settings).
type Settings = business.Settings

const timezonesAttr = "timezones"

func timezonesFrom(it attrs) business.TimezoneHistory {
	var h []struct {
		Name string `json:"name"`
		From int64  `json:"from"`
	}
	if json.Unmarshal([]byte(getS(it, timezonesAttr)), &h) != nil {
		return nil
	}
	out := make(business.TimezoneHistory, len(h))
	for i, s := range h {
		out[i] = business.TimezoneSpan{Name: s.Name}
		if s.From != 0 {
			out[i].From = time.Unix(s.From, 0).UTC()
		}
	}
	return out
}

func timezonesValue(h business.TimezoneHistory) types.AttributeValue {
	type span struct {
		Name string `json:"name"`
		From int64  `json:"from"`
	}
	out := make([]span, len(h))
	for i, s := range h {
		out[i] = span{Name: s.Name}
		if !s.From.IsZero() {
			out[i].From = s.From.Unix()
		}
	}
	b, _ := json.Marshal(out)
	return str(string(b))
}

// timezoneHistory reads the account's timezone history consistently, so
// that every change made before the call is in it.
func (s *Store) timezoneHistory(ctx context.Context, account string) (business.TimezoneHistory, error) {
	it, err := s.getAccountItem(ctx, account)
	if err != nil {
		return nil, err
	}
	return timezonesFrom(it), nil
}

// FindSettings returns the account's settings (one consistent GetItem).
func (s *Store) FindSettings(ctx context.Context, account string) (Settings, error) {
	it, err := s.getAccountItem(ctx, account)
	if err != nil {
		return Settings{}, err
	}
	return settingsFrom(it), nil
}

func settingsFrom(it attrs) Settings {
	return Settings{Account: accountFrom(it), Timezones: timezonesFrom(it)}
}

// SettingsChange is a change of the account's settings (see
// business.SettingsChange).
type SettingsChange = business.SettingsChange

// UpdateSettings changes the account's name and timezone on the account
// item, on every API key's copy (what authenticating reads; at most
// business.MaxAPIKeys) and on the test twin's account item, which mirrors
// them, in one transaction guarded by the account's version (every change
// of the keys bumps it too). One read and one write. The operators' directory entry keeps the
// name the account was created with. A new timezone takes
// effect TimezoneDelay after now. The settings.updated event, in the same
// transaction, names the fields whose value changed (data.changed) and
// nothing else. Returns EINVALID naming a bad field, or one that cannot
// change, and ECONFLICT when the timezone history is full.
func (s *Store) UpdateSettings(ctx context.Context, account string, c SettingsChange) (Settings, error) {
	var out Settings
	err := retrying(ctx, func() error {
		cur, err := s.getAccountItem(ctx, account)
		if err != nil {
			return err
		}
		next, changed, err := business.ChangeSettings(settingsFrom(cur), c, s.now())
		if err != nil {
			return err
		}
		a, hist := next.Account, next.Timezones
		set := "SET #name = :name, #tz = :tz"
		vals := attrs{":name": str(a.Name), ":tz": str(a.Timezone)}
		names := map[string]string{"#name": "name", "#tz": "timezone"}
		acctSet := set + ", " + timezonesAttr + " = :tzs, version = if_not_exists(version, :zero) + :one"
		acctVals := attrs{":tzs": timezonesValue(hist), ":zero": nInt(0), ":one": nInt(1)}
		for k, v := range vals {
			acctVals[k] = v
		}
		cond := accountVersionCond(cur, acctVals)
		updateCopy := func(k attrs) txItem {
			return txItem{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: k,
				UpdateExpression: aws.String(set), ConditionExpression: aws.String("attribute_exists(PK)"),
				ExpressionAttributeNames: names, ExpressionAttributeValues: vals}}, onFail: errRetry}
		}
		actions := []txItem{{action: types.TransactWriteItem{Update: &types.Update{TableName: aws.String(s.table), Key: accountKey(account),
			UpdateExpression: aws.String(acctSet), ConditionExpression: aws.String(cond),
			ExpressionAttributeNames: names, ExpressionAttributeValues: acctVals}}, onFail: errRetry}}
		for _, k := range keysFrom(cur) {
			actions = append(actions, updateCopy(key(keyPK(k.Hash), "KEY")))
		}
		if gen := getInt(cur, twinGenAttr); gen > 0 {
			tw := updateCopy(accountKey(business.TwinID(account, gen)))
			tw.action.Update.UpdateExpression = aws.String(set + ", " + timezonesAttr + " = :tzs")
			tw.action.Update.ExpressionAttributeValues = attrs{":name": vals[":name"], ":tz": vals[":tz"], ":tzs": timezonesValue(hist)}
			actions = append(actions, tw)
		}
		actions, err = s.withEvents(actions, settingsEvent(account, cur, changed, s.now()))
		if err != nil {
			return err
		}
		if err := s.transact(ctx, actions); err != nil {
			return err
		}
		out = next
		return nil
	})
	return out, err
}

// settingsEvent is the settings.updated event of a change of the settings
// of account read in cur: data.changed names the fields whose value changed
// (as the API names them), never a value. The settings' version is the
// account's after the change.
func settingsEvent(account string, cur attrs, changed []string, now time.Time) *events {
	ev := newEvents(account, now)
	ev.add(business.EventSettingsUpdated, business.EventResource{Type: business.ResourceSettings, ID: account, Version: getInt(cur, "version") + 1},
		map[string]any{"changed": changed})
	return ev
}
