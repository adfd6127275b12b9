package audit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/audit"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// errRollback ends a transaction the test wants rolled back.
var errRollback = errors.New("roll back")

// entries reads every entry of an account straight from the table, oldest
// first, so the tests of Record do not lean on List.
func entries(t *testing.T, db *store.DB, accountID int64) []store.AuditEntry {
	t.Helper()
	var es []store.AuditEntry
	require.NoError(t, db.NewSelect().Model(&es).Where("account_id = ?", accountID).Order("id").Scan(context.Background()))
	return es
}

func TestActorFrom(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ctx  context.Context
		want audit.Actor
	}{
		{"OKPartner", audit.AsPartner(context.Background(), "203.0.113.7"), audit.Actor{Kind: store.ActorPartner, IP: "203.0.113.7"}},
		{"OKPartnerIPv6", audit.AsPartner(context.Background(), "2001:db8::1"), audit.Actor{Kind: store.ActorPartner, IP: "2001:db8::1"}},
		// The CLI and seeding carry no partner: whoever has the shell is
		// the operator.
		{"OKOperator", context.Background(), audit.Actor{Kind: store.ActorOperator}},
		{"OKOperatorUnderOtherValues", context.WithValue(context.Background(), struct{}{}, "partner"), audit.Actor{Kind: store.ActorOperator}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, audit.ActorFrom(tt.ctx))
		})
	}
}

// TestRecord: an entry is written in the caller's transaction, so the log
// and the change it records commit or roll back together.
func TestRecord(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		accra := time.FixedZone("GMT+1", 3600)
		at := time.Date(2026, 11, 20, 14, 30, 5, 0, accra)
		tests := []struct {
			name string
			ctx  context.Context
			// fail rolls the caller's transaction back after Record.
			fail   bool
			entry  func(app *store.App) audit.Entry
			want   func(app *store.App) *store.AuditEntry // nil: no entry
			wantIn error
		}{
			{
				name: "OKPartner",
				ctx:  audit.AsPartner(context.Background(), "203.0.113.7"),
				entry: func(app *store.App) audit.Entry {
					return audit.Entry{AccountID: app.AccountID, AppID: app.ID, Action: audit.AppRename, Detail: "Box Office"}
				},
				want: func(app *store.App) *store.AuditEntry {
					return &store.AuditEntry{AccountID: app.AccountID, AppID: app.ID, Actor: store.ActorPartner, IP: "203.0.113.7",
						Action: audit.AppRename, Detail: "Box Office", CreatedAt: at.UTC()}
				},
			},
			{
				name: "OKOperatorWithoutApp",
				ctx:  context.Background(),
				entry: func(app *store.App) audit.Entry {
					return audit.Entry{AccountID: app.AccountID, Action: audit.AccountStatus, Detail: "active → disabled"}
				},
				want: func(app *store.App) *store.AuditEntry {
					return &store.AuditEntry{AccountID: app.AccountID, Actor: store.ActorOperator,
						Action: audit.AccountStatus, Detail: "active → disabled", CreatedAt: at.UTC()}
				},
			},
			{
				name: "OKDetailTrimmed",
				ctx:  audit.AsPartner(context.Background(), "198.51.100.2"),
				entry: func(app *store.App) audit.Entry {
					return audit.Entry{AccountID: app.AccountID, AppID: app.ID, Action: audit.RedirectAdd, Detail: " \t shop.example \n"}
				},
				want: func(app *store.App) *store.AuditEntry {
					return &store.AuditEntry{AccountID: app.AccountID, AppID: app.ID, Actor: store.ActorPartner, IP: "198.51.100.2",
						Action: audit.RedirectAdd, Detail: "shop.example", CreatedAt: at.UTC()}
				},
			},
			{
				name: "OKRolledBackWithTheChange",
				ctx:  audit.AsPartner(context.Background(), "203.0.113.7"),
				fail: true,
				entry: func(app *store.App) audit.Entry {
					return audit.Entry{AccountID: app.AccountID, AppID: app.ID, Action: audit.KeyRotate, Detail: "test"}
				},
				want:   func(*store.App) *store.AuditEntry { return nil },
				wantIn: errRollback,
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				app := storetest.MustApp(t, db)
				err := db.RunInTx(tt.ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					if err := audit.Record(ctx, tx, at, tt.entry(app)); err != nil {
						return err
					}
					// Until the caller commits, the entry is the
					// transaction's alone.
					var n int
					require.NoError(t, tx.NewSelect().Model((*store.AuditEntry)(nil)).ColumnExpr("count(*)").
						Where("account_id = ?", app.AccountID).Scan(ctx, &n))
					require.Equal(t, 1, n, "the entry is written in the caller's transaction")
					if tt.fail {
						return errRollback
					}
					return nil
				})
				if tt.wantIn != nil {
					require.ErrorIs(t, err, tt.wantIn)
				} else {
					require.NoError(t, err)
				}
				got := entries(t, db, app.AccountID)
				want := tt.want(app)
				if want == nil {
					require.Empty(t, got, "rolled back with the caller's transaction")
					return
				}
				require.Len(t, got, 1)
				require.Positive(t, got[0].ID)
				want.ID = got[0].ID
				require.True(t, want.CreatedAt.Equal(got[0].CreatedAt), "created_at %s, want %s", got[0].CreatedAt, want.CreatedAt)
				got[0].CreatedAt = want.CreatedAt
				require.Equal(t, *want, got[0])
			})
		}
	})
}

// TestList: newest first, at most the limit (clamped to 1…1000), of one
// account or, with 0, of all.
func TestList(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		start := time.Now().UTC().Truncate(time.Second)
		a, b := storetest.MustApp(t, db), storetest.MustApp(t, db)
		// a's and b's entries interleave, one second apart, a's first.
		var wantA, wantB []string
		for i := range 3 {
			for _, app := range []*store.App{a, b} {
				detail := fmt.Sprintf("app %d step %d", app.ID, i)
				require.NoError(t, audit.Record(ctx, db, start.Add(time.Duration(len(wantA)+len(wantB))*time.Second),
					audit.Entry{AccountID: app.AccountID, AppID: app.ID, Action: audit.AppRename, Detail: detail}))
				if app == a {
					wantA = append([]string{detail}, wantA...)
				} else {
					wantB = append([]string{detail}, wantB...)
				}
			}
		}
		details := func(es []store.AuditEntry) []string {
			out := []string{}
			for _, e := range es {
				out = append(out, e.Detail)
			}
			return out
		}

		tests := []struct {
			name    string
			account int64
			limit   int
			want    []string
		}{
			{"OKNewestFirst", a.AccountID, 10, wantA},
			{"OKOtherAccount", b.AccountID, 10, wantB},
			{"OKLimit", a.AccountID, 2, wantA[:2]},
			{"OKZeroLimitIsOne", a.AccountID, 0, wantA[:1]},
			{"OKNegativeLimitIsOne", b.AccountID, -7, wantB[:1]},
			{"OKUnknownAccount", a.AccountID + b.AccountID + 1000, 10, []string{}},
			{"OKEveryAccount", 0, 4, []string{wantB[0], wantA[0], wantB[1], wantA[1]}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := audit.List(ctx, db, tt.account, tt.limit)
				require.NoError(t, err)
				require.Equal(t, tt.want, details(got))
				for i := 1; i < len(got); i++ {
					require.True(t, got[i-1].CreatedAt.After(got[i].CreatedAt), "newest first")
				}
			})
		}

		t.Run("OKLimitAtMost1000", func(t *testing.T) {
			c := storetest.MustApp(t, db)
			rows := make([]store.AuditEntry, 1001)
			for i := range rows {
				rows[i] = store.AuditEntry{AccountID: c.AccountID, Actor: store.ActorOperator, Action: audit.SignIn,
					Detail: fmt.Sprint(i), CreatedAt: start}
			}
			_, err := db.NewInsert().Model(&rows).Exec(ctx)
			require.NoError(t, err)
			for _, limit := range []int{1000, 1001, 1 << 30} {
				got, err := audit.List(ctx, db, c.AccountID, limit)
				require.NoError(t, err)
				require.Len(t, got, 1000, "limit %d", limit)
				require.Equal(t, "1000", got[0].Detail, "the newest first")
				require.Equal(t, "1", got[999].Detail, "the oldest is the one left out")
			}
		})
	})
}
