// Package seed creates the demo data `make run` and `boxoffice seed demo`
// start from: a catalog of Accra events covering free, paid, promotional,
// sold-out, multi-date, past, private and hidden cases, and a demo account
// (with a developer portal password) with one app whose keys are printed
// once.
package seed

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/store"
)

// Demo account and app.
const (
	DemoEmail          = "demo@boxoffice.test"
	DemoRedirectDomain = "partner.example"
)

// Result is what seeding printed: the demo app with its one-time secrets.
type Result struct {
	AccountID int64
	// Password signs the demo account in to the developer portal; "" when
	// the account existed already (its password was printed then).
	Password string
	App      *provision.NewApp
	Catalog  *catalog.ImportResult
}

// Demo imports the demo catalog (dates placed relative to now, so it is
// always upcoming) and creates the demo account, if missing, with a fresh
// portal password, and a new demo app whose keys are returned.
func Demo(ctx context.Context, db *store.DB, prov *provision.Service, now time.Time) (*Result, error) {
	res, err := catalog.Import(ctx, db, DemoCatalog(now), now)
	if err != nil {
		return nil, err
	}
	password := ""
	acc, err := store.AccountByEmail(ctx, db, DemoEmail)
	if errors.Is(err, store.ErrNotFound) {
		password = newPassword()
		acc, err = prov.CreateAccount(ctx, provision.AccountInput{Name: "Demo Partner Ltd", Email: DemoEmail, Password: password})
	}
	if err != nil {
		return nil, err
	}
	app, err := prov.CreateApp(ctx, provision.AppInput{
		AccountID: acc.ID, Name: "Demo ticket shop", RedirectDomains: []string{DemoRedirectDomain},
	})
	if err != nil {
		return nil, err
	}
	return &Result{AccountID: acc.ID, Password: password, App: app, Catalog: res}, nil
}

// newPassword returns a password of 16 random characters a person can
// type from a terminal: lower-case letters and digits without look-alikes.
func newPassword() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:4]) + "-" + string(b[4:8]) + "-" + string(b[8:12]) + "-" + string(b[12:])
}
