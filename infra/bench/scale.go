package main

// The one-busy-account step: sale adds on one account against many, and
// the ceiling of one account's event writes.

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"bizdata/shared/api"
	"bizdata/shared/business"
	"bizdata/shared/store"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// writeScaling compares sale adds per second with n clients all writing to
// ONE account against n clients spread over n accounts, through the
// devserver's HTTP handler on loopback, for 16 and 64 clients.
func (b *bench) writeScaling() error {
	srv := httptest.NewServer(b.srv.Handler(api.Routes))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	const maxClients, window = 64, 5 * time.Second
	keys := make([]string, maxClients)
	var busy string // the account of keys[0]
	for i := range keys {
		acct, key, err := createAccount(b.ctx, b.store, fmt.Sprintf("Till shop %d", i), fmt.Sprintf("TILL%d", i))
		if err != nil {
			return err
		}
		keys[i] = key
		if i == 0 {
			busy = acct.ID
		}
		if err := sendOverHTTP(client, "POST", srv.URL+"/api/v1/customers/add", key, map[string]any{"name": "Walk-in"}); err != nil {
			return err
		}
	}
	sale := map[string]any{"customer_id": 1, "sub_total_amount": "20.00", "total_amount": "20.00", "amount_paid": "5.00",
		"payment_type": "Cash", "invoice_type": "pos", "due_date": "2026-12-31"}
	// postSales has clients[i] post sales with keyOf(i) for the window; it
	// returns sales per second, the 503 answers and the p95 latency.
	postSales := func(clients int, keyOf func(int) string) (float64, int64, time.Duration, error) {
		var n, busy atomic.Int64
		var mu sync.Mutex
		var lat []time.Duration
		err := untilDeadline(clients, time.Now().Add(window), func(i int) error {
			start := time.Now()
			err := sendOverHTTP(client, "POST", srv.URL+"/api/v1/sales/add", keyOf(i), sale)
			if se, ok := err.(statusError); ok && se == 503 {
				busy.Add(1)
				return nil
			} else if err != nil {
				return err
			}
			mu.Lock()
			lat = append(lat, time.Since(start))
			mu.Unlock()
			n.Add(1)
			return nil
		})
		if err != nil {
			return 0, 0, 0, err
		}
		return float64(n.Load()) / window.Seconds(), busy.Load(), percentile(lat, 0.95), nil
	}
	b.printf("## One busy account\n\nSale adds per second through the devserver's HTTP handler on loopback, each client posting sales back to back for %s: all clients on ONE account, then the same number of clients each on an account of its own. Ids come from an atomic counter drawn in parallel with the create's reads, so one account's creates do not take turns. Target: one ÷ spread at least 0.8, and no 503.\n\n| clients | one account (sales/s, 503s, p95) | spread over accounts (sales/s, 503s, p95) | one ÷ spread |\n|---|---|---|---|\n", window)
	var peak eventRate
	for _, clients := range []int{16, 64} {
		was, err := b.accountEvents(busy)
		if err != nil {
			return err
		}
		one, oneBusy, oneP95, err := postSales(clients, func(int) string { return keys[0] })
		if err != nil {
			return err
		}
		now, err := b.accountEvents(busy)
		if err != nil {
			return err
		}
		if r := now.since(was, one*window.Seconds(), window); r.perSecond > peak.perSecond {
			peak = r
		}
		spread, spreadBusy, spreadP95, err := postSales(clients, func(i int) string { return keys[i] })
		if err != nil {
			return err
		}
		b.printf("| %d | %.0f, %d, %s | %.0f, %d, %s | %.2f |\n", clients, one, oneBusy, oneP95.Round(time.Millisecond),
			spread, spreadBusy, spreadP95.Round(time.Millisecond), one/spread)
	}
	b.printf("\n")
	b.eventCeiling(peak)
	return nil
}

// eventCount is what an account's events are at one moment: how many of
// each type, and the largest event item and type- or family-index entry.
type eventCount struct {
	types       map[string]int
	item, entry int // bytes
	itemOf      string
}

// eventRate is the events one window of sales wrote.
type eventRate struct {
	perSecond, perSale float64
	types              map[string]float64 // per second, by type and by family ("sale.*")
	item, entry        int
	itemOf             string
}

// accountEvents reads all of an account's events, from the table's
// partitions of its shards (A#<acct>#EVENT#<shard>).
func (b *bench) accountEvents(account string) (eventCount, error) {
	sch := schemaOf(store.TableDefinition(b.cfg.TableName))
	c := eventCount{types: map[string]int{}}
	for shard := range store.EventShards {
		in := &dynamodb.QueryInput{TableName: aws.String(b.cfg.TableName), KeyConditionExpression: aws.String("PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("A#%s#EVENT#%d", account, shard)}}}
		for pages := dynamodb.NewQueryPaginator(b.db, in); pages.HasMorePages(); {
			out, err := pages.NextPage(b.ctx)
			if err != nil {
				return c, err
			}
			for _, it := range out.Items {
				_, t, _ := store.EventFromImage(it) // its type, in the item's view
				c.types[t]++
				if n := itemSize(it); n > c.item {
					c.item, c.itemOf = n, t
				}
				for _, g := range sch.indexes {
					if g.name == store.IndexPrimaryFilter.Name || g.name == store.IndexStatus.Name {
						if e := sch.entry(g, it); e != nil {
							c.entry = max(c.entry, itemSize(e))
						}
					}
				}
			}
		}
	}
	return c, nil
}

// since returns the events written between was and c, over window, by
// sales sales.
func (c eventCount) since(was eventCount, sales float64, window time.Duration) eventRate {
	r := eventRate{types: map[string]float64{}, item: c.item, entry: c.entry, itemOf: c.itemOf}
	n := 0
	for t, k := range c.types {
		d := k - was.types[t]
		n += d
		r.types[t] += float64(d) / window.Seconds()
		r.types[business.EventFamily(t)+".*"] += float64(d) / window.Seconds()
	}
	r.perSecond = float64(n) / window.Seconds()
	if sales > 0 {
		r.perSale = float64(n) / sales
	}
	return r
}

// eventCeiling reports the ceiling of one account's event writes against
// the peak the one-account runs wrote: an account's events spread over
// store.EventShards partitions of the table (and of each type's and
// family's index), each able to take 1,000 WCU a second.
func (b *bench) eventCeiling(peak eventRate) {
	const partitionWCU = 1000
	eventWCU := 2 * writeUnits(peak.item)  // its one table partition, twice in a transaction
	entryWCU := 2 * writeUnits(peak.entry) // its one partition of the type's (or family's) index
	ceiling := float64(store.EventShards) * partitionWCU / eventWCU
	indexCeiling := float64(store.EventShards) * partitionWCU / entryWCU
	busiest, busiestRate := "none", 0.0
	for _, t := range slices.Sorted(maps.Keys(peak.types)) {
		if peak.types[t] > busiestRate {
			busiest, busiestRate = t, peak.types[t]
		}
	}
	b.printf("Events the one-account runs wrote, counted from the account's events in the table before and after each run: at the peak %.0f events/s (%.2f per sale). "+
		"An account's events spread over %d partitions of the table by a hash of their ids, and a partition takes at most %d WCU a second; "+
		"the largest of its event items is %d bytes (%s), %s WCU written in a transaction, so the ceiling is %d × %d ÷ %s = %.0f events/s. "+
		"The type and family indexes spread each type's (and family's) entries over %d partitions too; the largest entry is %d bytes, %s WCU in a transaction: "+
		"%d × %d ÷ %s = %.0f events/s of one type or family; the busiest at the peak was %s, %.0f/s. "+
		"The resource index is not spread: one record's events come no faster than its own writes.\n\n",
		peak.perSecond, peak.perSale, store.EventShards, partitionWCU, peak.item, peak.itemOf, plainNumber(eventWCU), store.EventShards, partitionWCU, plainNumber(eventWCU), ceiling,
		store.EventShards, peak.entry, plainNumber(entryWCU), store.EventShards, partitionWCU, plainNumber(entryWCU), indexCeiling, busiest, busiestRate)
	if peak.perSecond == 0 {
		b.printf("The one-account runs wrote no events: no peak to compare the ceiling with.\n\n")
		return
	}
	all, one := ceiling/(10*peak.perSecond), indexCeiling/(10*busiestRate)
	b.printf("| goal | measured | target | met |\n|---|---|---|---|\n")
	b.printf("| one account's event writes: stated ceiling ÷ 10× the peak (%.0f ÷ (10 × %.0f)) | %.2f | at least 1 | %s |\n", ceiling, peak.perSecond, all, verdict(all >= 1))
	b.printf("| one account's events of one type or family (index partitions): ceiling ÷ 10× the busiest's peak (%.0f ÷ (10 × %.0f)) | %.2f | at least 1 | %s |\n\n",
		indexCeiling, busiestRate, one, verdict(one >= 1))
}
