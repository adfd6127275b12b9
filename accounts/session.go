package accounts

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/ratelimit"
	"github.com/boxoffice/boxoffice/store"
	"github.com/uptrace/bun"
)

// Session is a signed-in partner.
type Session struct {
	// Token is the browser's secret; set by SignIn and Session.
	Token     string
	Account   *store.Account
	ExpiresAt time.Time
}

// CSRF is the session's form token: it proves a form was rendered for this
// session, so a page elsewhere cannot post one. Derived from the session's
// secret, it needs no storage and ends with the session.
func (s *Session) CSRF() string {
	m := hmac.New(sha256.New, []byte(s.Token))
	m.Write([]byte("boxoffice portal form"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports whether token is the session's form token.
func (s *Session) CheckCSRF(token string) bool {
	return hmac.Equal([]byte(token), []byte(s.CSRF()))
}

// SignUpInput is the sign-up form.
type SignUpInput struct {
	Name     string
	Email    string
	Password string
}

// SignUp creates an account awaiting an operator's approval; its owner can
// sign in at once, but only to read its status until it is approved.
//
// An email that already has an account gets the same answer after the
// same work (the password is hashed either way), so sign-up never tells
// anyone which addresses have accounts: the returned Account is then the
// one that would have been created, not stored (its ID is 0), nothing
// changes, and the attempt is recorded in the existing account's audit
// log (audit.AccountSignUpTaken).
// Errors: rate_limit_exceeded (per client address), validation_failed
// (name, email, password).
func (s *Service) SignUp(ctx context.Context, in SignUpInput) (*store.Account, error) {
	ctx = asPartner(ctx)
	if err := s.PerIP.Allow(ctx, ratelimit.ClientIPFrom(ctx), "attempts from this address"); err != nil {
		return nil, err
	}
	if in.Password == "" {
		return nil, apperr.Invalid("password", "is required")
	}
	acc, err := s.CreateAccount(ctx, provision.AccountInput{
		Name: in.Name, Email: in.Email, Password: in.Password, Status: store.AccountPendingApproval,
	})
	if errors.Is(err, provision.ErrEmailTaken) {
		return s.signUpTaken(ctx, in)
	}
	return acc, err
}

// CreateAccount creates an account whose name and email address pass the
// identity rule (Name, Email), stored in their one form: a sign-up, or an
// operator's `accounts create`.
// Errors: validation_failed (name, email, status, password; an email that
// already has an account, wrapping provision.ErrEmailTaken).
func (s *Service) CreateAccount(ctx context.Context, in provision.AccountInput) (*store.Account, error) {
	name, err := Name(in.Name)
	if err != nil {
		return nil, err
	}
	email, err := Email(in.Email)
	if err != nil {
		return nil, err
	}
	in.Name, in.Email = name, email
	return s.Provision.CreateAccount(ctx, in)
}

// signUpTaken answers a sign-up with an email that has an account as a new
// account would be answered, and records the attempt for that account and
// schedules an email telling its owner (SendSignUpNotice), in one
// transaction.
func (s *Service) signUpTaken(ctx context.Context, in SignUpInput) (*store.Account, error) {
	email := lookupEmail(in.Email)
	existing, err := store.AccountByEmail(ctx, s.DB, email)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := audit.Record(ctx, tx, now, audit.Entry{AccountID: existing.ID, Action: audit.AccountSignUpTaken,
			Detail: "sign-up with this account's email; answered as a new sign-up, nothing created"}); err != nil {
			return err
		}
		if s.EnqueueNotice == nil {
			return nil
		}
		return s.EnqueueNotice(ctx, tx, existing.ID)
	})
	if err != nil {
		return nil, err
	}
	name, _ := Name(in.Name)
	return &store.Account{Name: name, Email: email, Status: store.AccountPendingApproval,
		CreatedAt: now, UpdatedAt: now}, nil
}

var errWrongPassword = apperr.New(apperr.Unauthorized, "The email address or password is not right.")

// SignIn checks an email address and password and starts a session. An
// account awaiting approval or disabled can sign in, to read its status and
// nothing else. Every attempt counts against the client address and the
// email address, whether the account exists or not, and an unknown address
// takes as long to refuse as a wrong password.
// Errors: rate_limit_exceeded, unauthorized.
func (s *Service) SignIn(ctx context.Context, email, password string) (*Session, error) {
	ctx = asPartner(ctx)
	if err := s.PerIP.Allow(ctx, ratelimit.ClientIPFrom(ctx), "attempts from this address"); err != nil {
		return nil, err
	}
	email = lookupEmail(email)
	if err := s.PerAccount.Allow(ctx, email, "sign-in attempts for this account"); err != nil {
		return nil, err
	}
	acc, err := store.AccountByEmail(ctx, s.DB, email)
	if errors.Is(err, store.ErrNotFound) {
		acc, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	hash, err := s.dummyHash(ctx)
	if err != nil {
		return nil, err
	}
	if acc != nil && acc.PasswordHash != "" {
		hash = acc.PasswordHash
	}
	ok, err := auth.CheckPassword(ctx, password, hash)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	if !ok || acc == nil || acc.PasswordHash == "" {
		if acc != nil {
			if err := audit.Record(ctx, s.DB, now, audit.Entry{AccountID: acc.ID, Action: audit.SignInFailed, Detail: "wrong password"}); err != nil {
				return nil, err
			}
		}
		return nil, errWrongPassword
	}
	token, hashed := newToken()
	sess := &Session{Token: token, Account: acc, ExpiresAt: now.Add(s.Config.SessionTTL)}
	err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		row := &store.PortalSession{TokenHash: hashed, AccountID: acc.ID, CreatedAt: now, ExpiresAt: sess.ExpiresAt}
		if err := store.InsertSession(ctx, tx, row); err != nil {
			return err
		}
		return audit.Record(ctx, tx, now, audit.Entry{AccountID: acc.ID, Action: audit.SignIn, Detail: "status " + acc.Status})
	})
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// dummyHash is a password hash made with the service's costs, checked when
// the email address has no password, so a refusal takes as long either way.
func (s *Service) dummyHash(ctx context.Context) (string, error) {
	var err error
	s.dummyOnce.Do(func() {
		s.dummy, err = auth.HashPassword(context.WithoutCancel(ctx), "no account has this password", s.Provision.Password)
	})
	return s.dummy, err
}

// Session returns the signed-in partner of a session token, with the
// account as it is now (an operator may have approved or disabled it).
// Errors: unauthorized (no such session, or expired).
func (s *Service) Session(ctx context.Context, token string) (*Session, error) {
	if token == "" || len(token) > 128 {
		return nil, ErrNotSignedIn
	}
	row, err := store.SessionByTokenHash(ctx, s.DB, auth.HashKey(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotSignedIn
	}
	if err != nil {
		return nil, err
	}
	if !s.Now().Before(row.ExpiresAt) {
		if err := store.DeleteSession(ctx, s.DB, row.TokenHash); err != nil {
			return nil, err
		}
		return nil, errSessionExpired
	}
	return &Session{Token: token, Account: row.Account, ExpiresAt: row.ExpiresAt.UTC()}, nil
}

// SignOut ends a session.
func (s *Service) SignOut(ctx context.Context, sess *Session) error {
	ctx = asPartner(ctx)
	return s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := store.DeleteSession(ctx, tx, auth.HashKey(sess.Token)); err != nil {
			return err
		}
		return audit.Record(ctx, tx, s.Now(), audit.Entry{AccountID: sess.Account.ID, Action: audit.SignOut, Detail: "signed out"})
	})
}

// PurgeSessions deletes expired sessions and returns how many. Expired
// sessions are refused (and removed) when met; this keeps the table small.
func (s *Service) PurgeSessions(ctx context.Context) (int64, error) {
	return store.DeleteExpiredSessions(ctx, s.DB, s.Now().UTC())
}
