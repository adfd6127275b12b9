package accounts_test

import (
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

const (
	invisibleMsg = "must not contain invisible or formatting characters"
	markMsg      = "must not put a combining mark on a letter (write the accented letter itself)"
)

// TestEmail: an account's address is stored in one form, and one that
// could pass for another is refused, naming why.
func TestEmail(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in, want, err string
	}{
		{"OK", "ama@example.com", "ama@example.com", ""},
		{"OKCaseAndSpace", "  Ama@Example.COM ", "ama@example.com", ""},
		{"OKFullWidth", "ａｍａ@example.com", "ama@example.com", ""},
		{"OKPrecomposedAccent", "josé@example.com", "josé@example.com", ""},
		{"OKDecomposedAccentComposes", "jose\u0301@example.com", "josé@example.com", ""},
		{"OKIDNStoredASCII", "ama@bücher.example", "ama@xn--bcher-kva.example", ""},
		{"OKCyrillicThroughout", "иван@почта.рф", "иван@xn--80a1acny.xn--p1ai", ""},
		{"OKPlusTag", "ama+shop@example.com", "ama+shop@example.com", ""},
		{"ErrZeroWidthSpace", "b\u200b@victim.test", "", invisibleMsg},
		{"ErrWordJoiner", "b\u2060@victim.test", "", invisibleMsg},
		{"ErrSoftHyphen", "b\u00ad@victim.test", "", invisibleMsg},
		{"ErrBidiOverride", "\u202eb@victim.test", "", invisibleMsg},
		{"ErrCombiningMarkOnLatin", "b\u0301@victim.test", "", markMsg},
		{"ErrCyrillicLocalLatinDomain", "б@victim.test", "", "must not mix letters of different scripts (Cyrillic and Latin): it could imitate another"},
		{"ErrCyrillicAInLatin", "p\u0430ypal@example.com", "", "must not mix letters of different scripts (Latin and Cyrillic): it could imitate another"},
		{"ErrGreekOmicronDomain", "ama@g\u03bfogle.com", "", "must not mix letters of different scripts (Latin and Greek): it could imitate another"},
		{"ErrEmpty", " ", "", "is required"},
		{"ErrNoAt", "ama.example.com", "", `"ama.example.com" is not a valid email address`},
		{"ErrDisplayName", "A <a@b.example>", "", `"A <a@b.example>" is not a valid email address`},
		{"ErrNoDotDomain", "ama@localhost", "", `"ama@localhost" does not end in a valid domain name`},
		{"ErrBadDomain", "ama@-bad-.example", "", `"ama@-bad-.example" does not end in a valid domain name`},
		{"ErrTooLong", strings.Repeat("a", 250) + "@x.io", "", "must be at most 254 characters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := accounts.Email(tt.in)
			if tt.err != "" {
				requireField(t, err, "email", tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			again, err := accounts.Email(got)
			require.NoError(t, err)
			require.Equal(t, got, again, "the stored form is its own stored form")
		})
	}
}

// TestName: an account's name is visible text, one form, and no word of
// it mixes scripts.
func TestName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in, want, err string
	}{
		{"OK", "Kofi Tickets", "Kofi Tickets", ""},
		{"OKSpacesCollapsed", "  Kofi   Tickets ", "Kofi Tickets", ""},
		{"OKTwoScriptsTwoWords", "Иван Events", "Иван Events", ""},
		{"OKJapanese", "山田たろう", "山田たろう", ""},
		{"OKAccents", "Café Ñoño", "Café Ñoño", ""},
		{"ErrZeroWidthOnly", "\u200b\u200b", "", invisibleMsg},
		{"ErrZeroWidthInside", "Ko\u200bfi", "", invisibleMsg},
		{"ErrRLO", "Kofi\u202eexe.", "", invisibleMsg},
		{"ErrEscape", "Kofi\x1b[2J", "", invisibleMsg},
		{"ErrMixedWord", "P\u0430yPal Ltd", "", "must not mix letters of different scripts (Latin and Cyrillic): it could imitate another"},
		{"ErrBlank", "   ", "", "is required"},
		{"ErrTooLong", strings.Repeat("a", 201), "", "must be at most 200 characters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := accounts.Name(tt.in)
			if tt.err != "" {
				requireField(t, err, "name", tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestSignUpLookAlikes: the four sign-ups that listed as one address, and
// a name of zero-width spaces, create nothing; an address typed in
// another case or width signs in to the account it names.
func TestSignUpLookAlikes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		for _, email := range []string{"b\u200b@victim.test", "b\u2060@victim.test", "b\u0301@victim.test", "б@victim.test"} {
			_, err := f.svc.SignUp(f.ctx, accounts.SignUpInput{Name: "B", Email: email, Password: password})
			require.Error(t, err, "%+q", email)
		}
		_, err := f.svc.SignUp(f.ctx, accounts.SignUpInput{Name: "\u200b\u200b", Email: f.email("zw"), Password: password})
		requireField(t, err, "name", invisibleMsg)
		n, err := db.NewSelect().TableExpr("accounts").Where("email LIKE ?", "%victim.test").WhereOr("email LIKE ?", "%"+f.prefix+"%").Count(f.ctx)
		require.NoError(t, err)
		require.Zero(t, n, "nothing was created")

		acc, err := f.svc.SignUp(f.ctx, accounts.SignUpInput{Name: "Kofi", Email: "Ｋofi-" + f.prefix + "@Partner.Example", Password: password})
		require.NoError(t, err)
		require.Equal(t, "kofi-"+f.prefix+"@partner.example", acc.Email)
		require.NoError(t, f.svc.Provision.SetAccountStatus(f.ctx, acc.ID, store.AccountActive))
		sess, err := f.svc.SignIn(f.ctx, "KOFI-"+f.prefix+"@partner.example", password)
		require.NoError(t, err)
		require.Equal(t, acc.ID, sess.Account.ID)
	})
}
