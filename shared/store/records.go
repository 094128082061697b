package store

import (
	"context"
	"time"
)

// The two shapes every kind of record shares: the read-modify-write of an
// edit and the decoding of a list page.

// editRecord is the read-modify-write of every edit: it reads the record at k
// (consistently; ENOTFOUND with notFound as message when missing), decodes it
// with from, lets edit change a copy, and commits what save returns for the
// record as read and as edited, in one transaction. save stamps the new
// version and writes it guarded by the old one, so when another writer got
// in between the whole starts over and no concurrent edit is lost. edit may
// return an error (EPRECONDITION, EINVALID) to stop.
func editRecord[T any](ctx context.Context, s *Store, k attrs, notFound string, from func(attrs) T, edit func(*T) error, save func(old T, next *T) ([]txItem, error)) (T, error) {
	var next T
	err := retrying(ctx, func() error {
		it, err := s.getOne(ctx, k, notFound, true)
		if err != nil {
			return err
		}
		old := from(it)
		next = old
		if err := edit(&next); err != nil {
			return err
		}
		actions, err := save(old, &next)
		if err != nil {
			return err
		}
		return s.transact(ctx, actions)
	})
	return next, err
}

// stamp is the updated_at of a write made now: whole seconds, as the API
// shows them.
func (s *Store) stamp() time.Time { return s.now().Truncate(time.Second) }

// page runs a list's query and decodes each item it read with from.
func page[T any](ctx context.Context, s *Store, q query, from func(attrs) T) (Page[T], error) {
	items, next, scanned, err := s.run(ctx, q)
	if err != nil {
		return Page[T]{}, err
	}
	p := Page[T]{Next: next, Scanned: scanned, Items: make([]T, len(items))}
	for i, it := range items {
		p.Items[i] = from(it)
	}
	return p, nil
}
