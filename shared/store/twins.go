package store

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Test twins. A live account's test keys act on its test twin, an account
// item of its own (business.TwinID) that copies the live account's fields.
// The live account item holds the twin's generation (twin_gen; none until
// the first test key or test session makes one) and the retired twins
// whose items are still to delete (purging).
const (
	twinGenAttr = "twin_gen"
	purgingAttr = "purging"
)

// twinOf returns the test twin (generation gen) of live account a: the same
// business, under its own id.
func twinOf(a business.Account, gen int64) business.Account {
	a.ID = business.TwinID(a.ID, gen)
	return a
}

// twinItem is the account item of a's test twin (generation gen): a copy of
// the live account's fields and timezone history, without keys or webhook.
func twinItem(cur attrs, gen int64) attrs {
	a := twinOf(accountFrom(cur), gen)
	it := accountKey(a.ID)
	accountFields(it, a)
	it["type"] = str("account")
	it["live_id"] = str(business.LiveID(a.ID))
	if tz, ok := cur[timezonesAttr]; ok {
		it[timezonesAttr] = tz
	}
	return it
}

// makeFirstTwin returns the actions that make the first test twin of the
// live account read in cur, when it has none yet, with the SET clause and
// values that record its generation on the account item (for
// registryUpdate); nothing when the twin exists. cur then holds the twin's
// generation.
func (s *Store) makeFirstTwin(cur attrs) (actions []txItem, extra string, vals attrs) {
	if getInt(cur, twinGenAttr) > 0 {
		return nil, "", nil
	}
	cur[twinGenAttr] = nInt(1)
	actions = []txItem{{action: put(s.table, twinItem(cur, 1), "attribute_not_exists(PK)"), onFail: errRetry}}
	return actions, ", " + twinGenAttr + " = :gen", attrs{":gen": nInt(1)}
}

// ClearTestData gives account's test keys a fresh, empty test twin (the next
// generation) and retires the current one, in one transaction: from then on
// (within the API's key cache TTL on other warm processes) test keys see no
// record, event, report, webhook setting or endpoint of before. The retired
// twin's id joins the account's purging list, whose items PurgeAccount
// deletes. Returns the retired twin's id. Returns ECONFLICT when the account
// has no test twin (no test key was ever made).
func (s *Store) ClearTestData(ctx context.Context, account string) (string, error) {
	live := business.LiveID(account)
	var retired string
	err := retrying(ctx, func() error {
		cur, err := s.getAccountItem(ctx, live)
		if err != nil {
			return err
		}
		gen := getInt(cur, twinGenAttr)
		var fresh string
		if retired, fresh, err = business.RetireTwin(live, gen); err != nil {
			return err
		}
		reg := s.registryUpdate(live, cur, keysFrom(cur), ", "+twinGenAttr+" = :gen", attrs{":gen": nInt(gen + 1), ":old": &types.AttributeValueMemberSS{Value: []string{retiredEntry(retired, s.now())}}})
		reg.action.Update.UpdateExpression = aws.String(*reg.action.Update.UpdateExpression + " ADD " + purgingAttr + " :old")
		actions := []txItem{reg,
			{action: put(s.table, twinItem(cur, gen+1), "attribute_not_exists(PK)"), onFail: errRetry},
			{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: accountKey(retired)}}},
		}
		for _, k := range keysFrom(cur) {
			if !k.Live {
				actions = append(actions, txItem{action: types.TransactWriteItem{Update: &types.Update{
					TableName: aws.String(s.table), Key: key(keyPK(k.Hash), "KEY"),
					UpdateExpression:          aws.String("SET account_id = :twin"),
					ConditionExpression:       aws.String("attribute_exists(PK)"),
					ExpressionAttributeValues: attrs{":twin": str(fresh)},
				}}, onFail: errRetry})
			}
		}
		return s.transact(ctx, actions)
	})
	return retired, err
}

// Retired is a test twin retired by ClearTestData, whose items PurgeAccount
// deletes.
type Retired struct {
	ID string
	At time.Time
	// entry is how the account's purging set holds it.
	entry string
}

// retiredEntry is how the purging set holds twin, retired at `at`: the id and
// the Unix second, so that a clear made twice within a second stays two
// entries and each is taken off exactly.
func retiredEntry(twin string, at time.Time) string {
	return twin + "@" + strconv.FormatInt(at.Unix(), 10)
}

// Purging returns the retired test twins of account whose items may still
// need deleting, oldest first.
func (s *Store) Purging(ctx context.Context, account string) ([]Retired, error) {
	cur, err := s.liveAccountItem(ctx, account)
	if err != nil {
		return nil, err
	}
	ss, _ := cur[purgingAttr].(*types.AttributeValueMemberSS)
	if ss == nil {
		return nil, nil
	}
	out := make([]Retired, 0, len(ss.Value))
	for _, e := range ss.Value {
		id, at, _ := strings.Cut(e, "@")
		sec, _ := strconv.ParseInt(at, 10, 64)
		out = append(out, Retired{ID: id, At: time.Unix(sec, 0).UTC(), entry: e})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// Purged takes r off account's purging list, once PurgeAccount has deleted
// all of its items and nothing can write to it any more.
func (s *Store) Purged(ctx context.Context, account string, r Retired) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: accountKey(business.LiveID(account)),
		UpdateExpression:          aws.String("DELETE " + purgingAttr + " :t"),
		ConditionExpression:       aws.String("attribute_exists(PK)"),
		ExpressionAttributeValues: attrs{":t": &types.AttributeValueMemberSS{Value: []string{r.entry}}},
	})
	if isConditionFailed(err) {
		return nil
	}
	return err
}
