package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// ResetLink is a one-time password reset link an operator hands to a
// partner; the service sends no email.
type ResetLink struct {
	AccountID int64
	URL       string
	ExpiresAt time.Time
}

// NewResetLink creates a one-time link that sets the account's password,
// valid for ResetTTL, and voids every earlier link of the account that was
// not used: only the newest link works, so one that leaked or was sent to
// the wrong place stops working as soon as another is issued.
// Errors: not_found.
func (s *Service) NewResetLink(ctx context.Context, accountID int64) (*ResetLink, error) {
	token, hash := newToken()
	now := s.Now().UTC()
	link := &ResetLink{AccountID: accountID, URL: s.Config.BaseURL + "/portal/reset/" + token, ExpiresAt: now.Add(s.Config.ResetTTL)}
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Locked first, as ResetPassword does, so that links issued at once
		// void each other in turn and never deadlock with a reset.
		if err := store.LockAccount(ctx, tx, accountID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return apperr.New(apperr.NotFound, "account %d does not exist", accountID)
			}
			return err
		}
		voided, err := store.VoidPasswordResets(ctx, tx, accountID)
		if err != nil {
			return err
		}
		r := &store.PasswordReset{TokenHash: hash, AccountID: accountID, CreatedAt: now, ExpiresAt: link.ExpiresAt}
		if err := store.InsertPasswordReset(ctx, tx, r); err != nil {
			return err
		}
		return audit.Record(ctx, tx, now, audit.Entry{AccountID: accountID, Action: audit.AccountResetLink,
			Detail: "one-time password reset link created, valid until " + link.ExpiresAt.Format(time.RFC3339) + voidedDetail(voided)})
	})
	if err != nil {
		return nil, err
	}
	return link, nil
}

// voidedDetail tells the audit log how many unused links a change voided.
func voidedDetail(n int64) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "; 1 other unused link voided"
	}
	return fmt.Sprintf("; %d other unused links voided", n)
}

var errResetLink = apperr.New(apperr.NotFound, "This reset link is not valid: it was used already, replaced by a newer one, has expired or was never issued. Ask the Boxoffice team for a new one.")

// ResetAccount returns the account a usable reset link is for.
// Errors: not_found (unknown, used or expired link).
func (s *Service) ResetAccount(ctx context.Context, token string) (*store.Account, error) {
	r, err := s.reset(ctx, token)
	if err != nil {
		return nil, err
	}
	return store.AccountByID(ctx, s.DB, r.AccountID)
}

// reset returns the usable reset link of token.
// Errors: not_found (unknown, used or expired link).
func (s *Service) reset(ctx context.Context, token string) (*store.PasswordReset, error) {
	if token == "" || len(token) > 128 {
		return nil, errResetLink
	}
	r, err := store.PasswordResetByTokenHash(ctx, s.DB, auth.HashKey(token))
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!r.UsedAt.IsZero() || !s.Now().Before(r.ExpiresAt))) {
		return nil, errResetLink
	}
	return r, err
}

// ResetPassword sets the password of a reset link's account and uses the
// link up; every other unused link of the account is void, and every
// session of the account ends, so whoever knew the old password or holds
// an older link is shut out.
// Errors: not_found (unknown, used or expired link), validation_failed
// (password).
func (s *Service) ResetPassword(ctx context.Context, token, password string) error {
	ctx = asPartner(ctx)
	r, err := s.reset(ctx, token)
	if err != nil {
		return err
	}
	hash, err := s.Provision.HashPassword(ctx, password)
	if err != nil {
		return err
	}
	now := s.Now().UTC()
	return s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := store.LockAccount(ctx, tx, r.AccountID); err != nil {
			return err
		}
		// Used up only if still unused and unexpired: of two uses, one wins.
		used, err := store.UsePasswordReset(ctx, tx, r.ID, now)
		if err != nil {
			return err
		}
		if !used {
			return errResetLink
		}
		if err := store.SetAccountPassword(ctx, tx, r.AccountID, hash, now); err != nil {
			return err
		}
		voided, err := store.VoidPasswordResets(ctx, tx, r.AccountID)
		if err != nil {
			return err
		}
		if err := store.DeleteAccountSessions(ctx, tx, r.AccountID); err != nil {
			return err
		}
		return audit.Record(ctx, tx, now, audit.Entry{AccountID: r.AccountID, Action: audit.AccountPassword,
			Detail: "password set with a reset link; every session ended" + voidedDetail(voided)})
	})
}
