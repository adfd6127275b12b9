package provision

import (
	"context"
	"errors"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/clientinput"
	"github.com/boxoffice/boxoffice/store"
)

// ScannerInput creates a scanner: a door device's key for one event in
// one environment.
type ScannerInput struct {
	EventID     int64
	Environment string
	Name        string
}

// NewScanner is a scanner just created, with its key: shown this once.
type NewScanner struct {
	Scanner *store.Scanner
	Key     string
}

// CreateScanner makes a scanner key for the door of one event in one
// environment (spec/fulfilment.md section 4); only its hash is stored.
// Scanners belong to the operator, not to a partner's account, so they are
// not in the audit log, which is kept per account.
// Errors: validation_failed (name, env), not_found (the event).
func (s *Service) CreateScanner(ctx context.Context, in ScannerInput) (*NewScanner, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return nil, apperr.Invalid("name", "is required")
	}
	if p := clientinput.NameProblem(name); p != "" {
		return nil, apperr.Invalid("name", "%s", p)
	}
	if err := auth.CheckEnv(in.Environment); err != nil {
		return nil, err
	}
	if _, err := store.EventByID(ctx, s.DB, in.EventID); errors.Is(err, store.ErrNotFound) {
		return nil, notFound("event %d does not exist", in.EventID)
	} else if err != nil {
		return nil, err
	}
	key, hash, hint := auth.NewScannerKey(in.Environment)
	sc := &store.Scanner{Name: name, EventID: in.EventID, Environment: in.Environment, KeyHash: hash, Hint: hint,
		CreatedAt: s.Now().UTC()}
	if err := store.InsertScanner(ctx, s.DB, sc); err != nil {
		return nil, err
	}
	return &NewScanner{Scanner: sc, Key: key}, nil
}

// ListScanners returns the scanners of an event (every event's for 0),
// revoked ones included, oldest first; never their keys.
func (s *Service) ListScanners(ctx context.Context, eventID int64) ([]store.Scanner, error) {
	return store.Scanners(ctx, s.DB, eventID)
}

// RevokeScanner revokes a scanner: its key stops working at once. Revoking
// a revoked scanner changes nothing.
// Errors: not_found.
func (s *Service) RevokeScanner(ctx context.Context, id int64) (*store.Scanner, error) {
	sc, err := store.RevokeScanner(ctx, s.DB, id, s.Now().UTC())
	s.changed()
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("scanner %d does not exist", id)
	}
	return sc, err
}
