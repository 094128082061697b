package business

import (
	"testing"
	"time"

	"bizdata/shared/money"
)

func delta(s string) money.Delta {
	d, err := money.ParseDelta(s)
	if err != nil {
		panic(err)
	}
	return d
}

func stocked(q string) Item {
	return Item{ItemCode: "RICE", Quantity: money.MustQuantity(q), Version: 7}
}

func TestMoveStock(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cause := StockCause{Kind: MoveSale, InvoiceCode: "100001", Reason: "r", Note: "n"}
	item := func(q string) *Item { x := stocked(q); return &x }
	// Two lines of one item, each of the largest quantity, give back more
	// than any stock can hold.
	huge := money.MaxQuantity().Delta().Add(money.MaxQuantity().Delta()).Neg()
	for _, c := range []struct {
		name    string
		read    *Item
		d       money.Delta
		code    string
		fields  map[string]string
		after   string
		refusal map[string]string
	}{
		{name: "ErrNoItem", d: delta("1"), code: EINVALID, fields: map[string]string{"items": "item_code RICE: no such inventory item"}},
		{name: "ErrGiveBackNoStockTakes", read: item("0"), d: huge, code: EINVALID,
			fields: map[string]string{"items": "item_code RICE: giving back 1999999999.998 would take its stock above 999999999.999"}},
		{name: "OKTake", read: item("5"), d: delta("2"), after: "3",
			refusal: map[string]string{"items": "insufficient stock of item RICE (5 in stock)"}},
		{name: "OKTakeShortAsRead", read: item("1"), d: delta("2"), after: "-1",
			refusal: map[string]string{"items": "insufficient stock of item RICE (1 in stock)"}},
		{name: "OKGiveBack", read: item("5"), d: delta("-1.5"), after: "6.5",
			refusal: map[string]string{"items": "item_code RICE: giving back 1.5 would take its stock above 999999999.999"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mv, err := MoveStock("RICE", c.read, c.d, cause, now)
			wantError(t, err, c.code, c.fields)
			if c.code != "" {
				return
			}
			wantError(t, mv.Refusal, EINVALID, c.refusal)
			x, m := mv.Item, mv.Movement
			if x.Quantity.String() != c.after || x.Version != 8 || !x.UpdatedAt.Equal(now) {
				t.Fatalf("item %s at version %d, %v; want %s at 8", x.Quantity, x.Version, x.UpdatedAt, c.after)
			}
			if m.ID != 8 || m.ItemCode != "RICE" || m.Kind != MoveSale || m.Change.String() != c.d.Neg().String() || m.After.String() != c.after ||
				m.InvoiceCode != "100001" || m.Reason != "r" || m.Note != "n" || !m.CreatedAt.Equal(now) {
				t.Fatalf("movement %+v", m)
			}
			if c.read.Version != 7 {
				t.Fatal("the item as read changed")
			}
		})
	}
}

func TestCheckStockAdjustment(t *testing.T) {
	for _, c := range []struct {
		name, q, change string
		msg             string
	}{
		{name: "OKAdd", q: "1", change: "2"},
		{name: "OKToZero", q: "1", change: "-1"},
		{name: "ErrBelowZero", q: "1", change: "-1.001", msg: "would take the stock below zero: 1 in stock"},
		{name: "ErrAboveMax", q: "999999999", change: "1", msg: "would take the stock above 999999999.999: 999999999 in stock"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckStockAdjustment(stocked(c.q), delta(c.change))
			if c.msg == "" {
				wantError(t, err, "", nil)
				return
			}
			wantError(t, err, EINVALID, map[string]string{"quantity": c.msg})
		})
	}
}

func TestCheckStockCount(t *testing.T) {
	q := money.MustQuantity
	for _, c := range []struct {
		name             string
		first, read, set string
		code             string
	}{
		{name: "OKUnmoved", first: "5", read: "5", set: "9"},
		{name: "OKQuantityKept", first: "5", read: "3", set: "3"},
		{name: "ErrMovedMeanwhile", first: "5", read: "3", set: "9", code: ECONFLICT},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckStockCount(q(c.first), q(c.read), q(c.set))
			if c.code == "" {
				wantError(t, err, "", nil)
				return
			}
			wantError(t, err, c.code, map[string]string{"quantity": "stock moved to 3 while this edit was made; nothing was changed"})
			if want := "the item's stock changed while this edit was made (5 when read, 3 now); read the item again and send the quantity you mean, or use its adjustments"; err.(*Error).Message != want {
				t.Fatalf("message %q", err.(*Error).Message)
			}
		})
	}
}

func TestCountMovement(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, old, next string
		ok              bool
		change          string
	}{
		{name: "Unchanged", old: "5", next: "5.000"},
		{name: "Up", old: "5", next: "7.5", ok: true, change: "2.5"},
		{name: "Down", old: "5", next: "0", ok: true, change: "-5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			next := stocked(c.next)
			next.Version, next.UpdatedAt = 8, at
			m, ok := CountMovement(stocked(c.old), next)
			if ok != c.ok {
				t.Fatalf("ok %v, want %v", ok, c.ok)
			}
			if ok && (m.ID != 8 || m.Kind != MoveAdjustment || m.Reason != "count" || m.Change.String() != c.change || m.After.String() != c.next || !m.CreatedAt.Equal(at)) {
				t.Fatalf("movement %+v", m)
			}
		})
	}
}

func TestInitialMovement(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		q  string
		ok bool
	}{{"0", false}, {"4.5", true}} {
		t.Run(c.q, func(t *testing.T) {
			x := stocked(c.q)
			x.Version, x.CreatedAt = 1, at
			m, ok := InitialMovement(x)
			if ok != c.ok {
				t.Fatalf("ok %v, want %v", ok, c.ok)
			}
			if ok && (m.ID != 1 || m.Kind != MoveInitial || m.Change.String() != c.q || m.After.String() != c.q || !m.CreatedAt.Equal(at)) {
				t.Fatalf("movement %+v", m)
			}
		})
	}
}

func TestOpeningBalance(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, q, sum string
		first        int64
		ok, err      bool
		change, at   string
	}{
		{name: "OKAddsUp", q: "5", sum: "5", first: 3},
		{name: "OKOpened", q: "5", sum: "-2", first: 3, ok: true, change: "7", at: "7"},
		{name: "ErrBeyondStock", q: "5", sum: "6", first: 3, err: true},
		{name: "ErrNoNumberBelow", q: "5", sum: "2", first: 1, err: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, ok, err := OpeningBalance(stocked(c.q), delta(c.sum), c.first, at)
			if (err != nil) != c.err || ok != c.ok {
				t.Fatalf("ok %v, err %v", ok, err)
			}
			if ok && (m.ID != c.first-1 || m.Kind != MoveInitial || m.Reason != "opening balance" || m.Change.String() != c.change || m.After.String() != c.at || !m.CreatedAt.Equal(at)) {
				t.Fatalf("movement %+v", m)
			}
		})
	}
}

func TestCheckStockedItems(t *testing.T) {
	line := func(code string) SaleLine { return SaleLine{ItemCode: code, Quantity: money.MustQuantity("1")} }
	lines := func(codes ...string) []SaleLine {
		out := make([]SaleLine, len(codes))
		for i, c := range codes {
			out[i] = line(c)
		}
		return out
	}
	tooMany := map[string]string{"items": "may name at most 2 distinct inventory items by item_code"}
	t.Run("Sale", func(t *testing.T) {
		wantError(t, CheckStockedItems(StockMoves(nil, lines("A", "B", "A", "")), 2), "", nil)
		wantError(t, CheckStockedItems(StockMoves(nil, lines("A", "B", "C")), 2), EINVALID, tooMany)
	})
	for _, c := range []struct {
		name      string
		old, next []SaleLine
		fields    map[string]string
	}{
		{name: "OKWithin", old: lines("A"), next: lines("A", "B")},
		{name: "OKWideKeepsItsItems", old: lines("A", "B", "C"), next: lines("A", "B", "C")},
		{name: "ErrWideAddsAnItem", old: lines("A", "B", "C"), next: lines("A", "B", "C", "D"), fields: tooMany},
		{name: "ErrGrowsPastTheBound", old: lines("A"), next: lines("A", "B", "C"), fields: tooMany},
		{name: "ErrMovesTooMany", old: lines("A", "B", "C"), next: lines("D"), fields: tooMany},
	} {
		t.Run("Edit"+c.name, func(t *testing.T) {
			code := ""
			if c.fields != nil {
				code = EINVALID
			}
			wantError(t, CheckSaleEditStock(c.old, c.next, 2), code, c.fields)
		})
	}
}

func TestPickSlug(t *testing.T) {
	for _, c := range []struct {
		name                    string
		plainFree, suffixedFree bool
		want                    string
	}{
		{"Plain", true, false, "rice"},
		{"Suffixed", false, true, "rice-itm-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := PickSlug("rice", "ITM-1", c.plainFree, c.suffixedFree); got != c.want {
				t.Fatalf("slug %q, want %q", got, c.want)
			}
		})
	}
	t.Run("RandomTail", func(t *testing.T) {
		got := PickSlug("rice", "ITM-1", false, false)
		if len(got) != len("rice-itm-1-123456") || got[:len("rice-itm-1-")] != "rice-itm-1-" {
			t.Fatalf("slug %q", got)
		}
	})
}

func TestReferenceErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		code   string
		fields map[string]string
	}{
		{"MissingCustomer", MissingCustomer(7), EINVALID, map[string]string{"customer_id": "no customer with id 7 in this account"}},
		{"MissingCategory", MissingCategory(3), EINVALID, map[string]string{"category_id": "no category with id 3 in this account"}},
		{"MissingItem", MissingItem("RICE"), EINVALID, map[string]string{"items": "item_code RICE: no such inventory item"}},
		{"Taken", Taken("invoice_code", "100001"), ECONFLICT, map[string]string{"invoice_code": "is already used"}},
	} {
		t.Run(c.name, func(t *testing.T) { wantError(t, c.err, c.code, c.fields) })
	}
	if msg := Taken("invoice_code", "100001").Error(); msg != "invoice_code 100001 is already used by another record (invoice_code: is already used)" {
		t.Fatalf("Taken: %q", msg)
	}
}
