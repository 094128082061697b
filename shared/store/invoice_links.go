package store

import (
	"context"

	"bizdata/shared/business"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A sale's invoice link lives on the sale item (its token's hash, the
// token sealed, when it was made): making or ending one is a change of the
// sale, a new version with its sale.updated event, as invoice_link_active
// is part of what the sale's GET shows. A lookup item (PK "LINK#<hash>")
// takes a public request from a token to its sale with one GetItem by key:
// nothing of the account is in the URL, and an unknown token costs that one
// read.

func linkLookupKey(hash string) attrs { return key("LINK#"+hash, "LINK") }

func linkLookupItem(hash, account, code string) attrs {
	it := linkLookupKey(hash)
	it["type"] = str("invoice_link")
	it["account_id"] = str(account)
	it["invoice_code"] = str(code)
	return it
}

// CreateInvoiceLink gives the sale a new invoice link, replacing (and so
// ending) any it had, and returns the sale with it (its Link.Token set).
// Returns ENOTFOUND for a missing sale and ECONFLICT for a void one.
func (s *Store) CreateInvoiceLink(ctx context.Context, account, code string) (SaleRecord, error) {
	var token string
	rec, err := s.relinkSale(ctx, account, code, func(cur SaleRecord) (*business.InvoiceLink, []txItem, error) {
		if cur.Sale.Void() {
			return nil, nil, business.Errorf(business.ECONFLICT, "Sale is void: no invoice link can be made for it (add a new sale to bill the customer)")
		}
		var hash string
		token, hash = business.NewInvoiceToken()
		link := &business.InvoiceLink{Hash: hash, Sealed: s.sealToken(token), CreatedAt: s.stamp()}
		made := txItem{action: put(s.table, linkLookupItem(hash, account, code), "attribute_not_exists(PK)"), onFail: errRetry}
		return link, append([]txItem{made}, s.endLink(cur.Sale.Link)...), nil
	})
	if err == nil {
		rec.Sale.Link.Token = token
	}
	return rec, err
}

// endLink returns the delete of link's lookup item (none for no link).
func (s *Store) endLink(link *business.InvoiceLink) []txItem {
	if link == nil {
		return nil
	}
	return []txItem{{action: types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: linkLookupKey(link.Hash)}}}}
}

// RevokeInvoiceLink ends the sale's invoice link. A void sale's link can be
// ended too (the one change a void sale takes): the merchant may always
// take a page down. Returns ENOTFOUND for a missing sale, or a sale without
// a link.
func (s *Store) RevokeInvoiceLink(ctx context.Context, account, code string) (SaleRecord, error) {
	return s.relinkSale(ctx, account, code, func(cur SaleRecord) (*business.InvoiceLink, []txItem, error) {
		if cur.Sale.Link == nil {
			return nil, nil, business.Errorf(business.ENOTFOUND, "Sale has no invoice link")
		}
		return nil, s.endLink(cur.Sale.Link), nil
	})
}

// relinkSale gives the sale the link relink decides (nil: none), with the
// writes it returns, as a new version of the sale with its sale.updated
// event: nothing else of the sale changes, so nothing is read but the sale.
func (s *Store) relinkSale(ctx context.Context, account, code string, relink func(cur SaleRecord) (*business.InvoiceLink, []txItem, error)) (SaleRecord, error) {
	var rec SaleRecord
	err := retrying(ctx, func() error {
		cur, err := s.findSale(ctx, account, code, true)
		if err != nil {
			return err
		}
		link, writes, err := relink(cur)
		if err != nil {
			return err
		}
		now := s.stamp()
		next := cur.Sale
		next.Link, next.Version, next.UpdatedAt = link, cur.Sale.Version+1, now
		rec = SaleRecord{Sale: next, Payments: cur.Payments, Refunds: cur.Refunds, Notices: cur.Notices}
		ev := newEvents(account, now)
		ev.sale(business.EventSaleUpdated, rec)
		// The rewrite marks the sale counted: one written before reports
		// or receivables brings its figures in now, as any edit does.
		if cur.uncounted {
			ev.count(business.SaleCreatedFigures(next, nil))
		}
		ev.owe(business.ReceivableChange{Old: owedBefore(cur), New: business.OwedBy(next)})
		actions, err := s.withEvents(append([]txItem{s.saleRewrite(account, cur, next)}, writes...), ev)
		if err != nil {
			return err
		}
		return s.transact(ctx, actions)
	})
	return rec, err
}

// InvoiceDocument is what a hosted invoice shows: the sale and the account
// it belongs to.
type InvoiceDocument struct {
	Account   business.Account
	Timezones business.TimezoneHistory
	Sale      SaleRecord
}

// FindInvoice reads the sale and its account item together (two calls at
// once). Returns ENOTFOUND when either is missing.
func (s *Store) FindInvoice(ctx context.Context, account, code string) (InvoiceDocument, error) {
	var doc InvoiceDocument
	var acctErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		var it attrs
		if it, acctErr = s.getAccountItem(ctx, account); acctErr == nil {
			doc.Account, doc.Timezones = accountFrom(it), timezonesFrom(it)
		}
	}()
	var err error
	doc.Sale, err = s.findSale(ctx, account, code, true)
	<-done
	if err == nil {
		err = acctErr
	}
	return doc, err
}

// errNoInvoice is the one answer to every token that opens nothing.
var errNoInvoice = business.Errorf(business.ENOTFOUND, "Invoice not found")

// FindInvoiceByToken returns the invoice an active link's token opens: one
// GetItem for the token, then the sale and its account together. Every
// token that opens nothing (unknown, revoked, replaced, of a sale since
// deleted) is ENOTFOUND, after the same one read.
func (s *Store) FindInvoiceByToken(ctx context.Context, token string) (InvoiceDocument, error) {
	if !business.WellFormedInvoiceToken(token) {
		return InvoiceDocument{}, errNoInvoice
	}
	hash := business.InvoiceTokenHash(token)
	lookup, err := s.getItem(ctx, linkLookupKey(hash), true)
	if err != nil {
		return InvoiceDocument{}, err
	}
	if lookup == nil {
		return InvoiceDocument{}, errNoInvoice
	}
	doc, err := s.FindInvoice(ctx, getS(lookup, "account_id"), getS(lookup, "invoice_code"))
	switch {
	case business.ErrorCode(err) == business.ENOTFOUND:
		return InvoiceDocument{}, errNoInvoice
	case err != nil:
		return InvoiceDocument{}, err
	case doc.Sale.Sale.Link == nil || doc.Sale.Sale.Link.Hash != hash:
		return InvoiceDocument{}, errNoInvoice
	}
	return doc, nil
}
