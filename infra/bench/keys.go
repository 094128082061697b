package main

// The API key routes' round trips (part of the round-trips step).

import (
	"fmt"
	"time"
)

// keyTrips measures the API key routes, and what authenticating costs when
// a key is not cached: its first request reads the key and stamps its first
// use; within the next minute a miss only reads it.
func (b *bench) keyTrips(covered map[string]bool) error {
	restore, err := b.actAsNewAccount("Keys Shop", fmt.Sprintf("KEYS%d", time.Now().UnixNano()%1e9))
	if err != nil {
		return err
	}
	defer restore()
	if err := b.warmKey(); err != nil {
		return err
	}
	created := make([]string, corrRuns)
	var testKey string
	b.printf("### API keys\n\nThe key routes through the Lambda function with the calling key's cache warm, over an account of its own; each case made %d times (clear-test-data 4), the typical run reported. \"first request of a new key\" is authenticate with a key not yet cached: the key's read and the stamp of its first use (`last_used_at`); a cached key makes no call, and a key read again within a minute is not stamped again. Target: at most 2 sequential for the key routes, 3 for a revoke (the registry, the key's own item for the last use its answer shows, the transaction); clear-test-data is one read and one transaction to retire the test data, then a read of what is left to delete and the deletes themselves (bounded at 2000 items a request).\n\n", corrRuns)
	b.printf(tripsTableHead)
	cases := []struct {
		function, what, method string
		path                   func(i int) string
		body                   func(i int) any
		key                    func() string
		runs, max              int
		after                  func(i int, body []byte) error
	}{
		{"create-api-key", "a till's key (sales:write, inventory:read)", "POST", func(int) string { return "/api/v1/api-keys" },
			func(i int) any {
				return map[string]any{"name": fmt.Sprintf("Till %d", i), "scopes": []string{"sales:write", "inventory:read"}}
			}, nil, corrRuns, 2,
			func(i int, body []byte) error { created[i] = answerField(body, "api_key", "id"); return nil }},
		{"list-api-keys", "10 keys", "GET", func(int) string { return "/api/v1/api-keys" }, nil, nil, corrRuns, 2, nil},
		{"revoke-api-key", "a till's key", "POST", func(i int) string { return "/api/v1/api-keys/" + created[i] + "/revoke" }, nil, nil, corrRuns, 3, nil},
		{"authenticate", "first request of a new key", "GET", func(int) string { return "/api/v1/user/authenticate" }, nil,
			func() string {
				res, err := b.invoke("create-api-key", "POST", "/api/v1/api-keys", "", map[string]any{"name": "Fresh", "scopes": []string{"sales:read"}, "mode": "test"})
				if err != nil {
					return ""
				}
				return answerField([]byte(res.Body), "api_key", "key")
			}, 4, 2, nil},
		{"clear-test-data", "a test twin with one customer", "POST", func(int) string { return "/api/v1/test-data/clear" }, nil,
			func() string {
				if testKey == "" {
					res, err := b.invoke("create-api-key", "POST", "/api/v1/api-keys", "", map[string]any{"name": "Tests", "scopes": []string{"*"}, "mode": "test"})
					if err != nil {
						return ""
					}
					testKey = answerField([]byte(res.Body), "api_key", "key")
				}
				restore := b.actAs(testKey)
				_, _ = b.invoke("add-customer", "POST", "/api/v1/customers/add", "", map[string]any{"name": "Test customer"})
				restore()
				return testKey
			}, 4, 0, nil},
	}
	for _, c := range cases {
		covered[c.function] = true
		var useKey string
		before := b.warmKey
		if c.key != nil {
			before = func() error {
				if useKey = c.key(); useKey == "" {
					return fmt.Errorf("%s: could not make its key", c.function)
				}
				return nil
			}
		}
		typical, differed, err := b.typicalRunAfter(c.runs, before, func(i int) error {
			body := bodyAt(c.body, i)
			if useKey != "" {
				defer b.actAs(useKey)()
			}
			res, err := b.invoke(c.function, c.method, c.path(i), "", body)
			if err != nil {
				return err
			}
			if c.after != nil {
				return c.after(i, []byte(res.Body))
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s (%s): %w", c.function, c.what, err)
		}
		met, target := "n/a", "none: bounded by what is left to delete"
		if c.max > 0 {
			met, target = verdict(typical.depth <= c.max), fmt.Sprintf("<= %d", c.max)
		}
		b.printTripRow(c.function, c.what, c.method, typical, differed, target, met)
	}
	b.printf("\n")
	return nil
}
