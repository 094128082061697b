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
	if err == nil && q.views {
		err = s.withViews(ctx, items)
	}
	if err != nil {
		return Page[T]{}, err
	}
	p := Page[T]{Next: next, Scanned: scanned, Items: make([]T, len(items))}
	for i, it := range items {
		p.Items[i] = from(it)
	}
	return p, nil
}

// setStamps sets the attributes every editable record carries: its id, when it
// was created and last updated, and its version.
func setStamps(it attrs, id int64, created, updated time.Time, version int64) {
	it["id"] = nInt(id)
	it["created_at"] = str(fmtTime(created))
	it["updated_at"] = str(fmtTime(updated))
	it["version"] = nInt(version)
}

// listKeys sets the index keys of a record that lists of its kind (base, the
// account's partition for that kind) read through boundedQuery: newest first
// on IndexCreated, by last update on IndexUpperBound, and within one value
// of its filter (the partition base+filter) on IndexPrimaryFilter.
func listKeys(it attrs, base, filter string, id int64, created, updated time.Time) {
	newest := fmtTime(created) + "#" + pad(id)
	it[IndexCreated.PK], it[IndexCreated.SK] = str(base), str(newest)
	it[IndexPrimaryFilter.PK], it[IndexPrimaryFilter.SK] = str(base+filter), str(newest)
	it[IndexUpperBound.PK], it[IndexUpperBound.SK] = str(base), str(fmtTime(updated)+"#"+pad(id))
}

// withViews replaces each index entry of a record written before views (an
// entry without one) with the record read from the table, in one call. Once
// `admin migrate` has run there are none, and a page is the one Query it
// always was.
func (s *Store) withViews(ctx context.Context, items []attrs) error {
	var at []int
	var keys []attrs
	for i, it := range items {
		if !hasView(it) {
			at = append(at, i)
			keys = append(keys, key(getS(it, "PK"), getS(it, "SK")))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	found, err := s.batchGet(ctx, keys)
	if err != nil {
		return err
	}
	for j, i := range at {
		if found[j] != nil {
			items[i] = found[j]
		}
	}
	return nil
}
