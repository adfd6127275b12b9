package resolvers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/checkout/checkouttest"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// checkoutBundle is one test's resolver over a real checkout service, and
// the context of the demo app's key of one environment.
type checkoutBundle struct {
	*checkouttest.Fixture
	r   *Resolver
	ctx context.Context
}

func setupCheckout(t *testing.T, db *store.DB, env string) *checkoutBundle {
	t.Helper()
	f := checkouttest.MustNew(t, db)
	ctx := auth.WithPrincipal(context.Background(), &auth.Principal{AppID: f.Demo.App.App.ID, Environment: env})
	return &checkoutBundle{Fixture: f, r: &Resolver{Checkout: f.Service}, ctx: ctx}
}

// input is the mutation's input for one ticket of a demo date.
func (b *checkoutBundle) input(t *testing.T, key, event, date, ticket string, qty int) model.CreateCheckoutSessionInput {
	return model.CreateCheckoutSessionInput{IdempotencyKey: key, CheckoutRequest: model.CheckoutRequest{
		EventID: ptr(b.ID(t, event)), EventdateID: ptr(b.ID(t, date)),
		Items:      []*model.CheckoutItemInput{{TicketID: ptr(b.ID(t, ticket)), Quantity: ptr(qty)}},
		Customer:   &model.CustomerInput{Name: ptr("Ama Mensah"), Email: ptr("ama@example.com"), Phone: ptr("0241234567")},
		SuccessURL: ptr("https://partner.example/ok"), CancelURL: ptr("https://partner.example/no"),
	}}
}

func (b *checkoutBundle) highlife(t *testing.T, key string) model.CreateCheckoutSessionInput {
	return b.input(t, key, "DEMO-HIGHLIFE", "DEMO-HIGHLIFE-1", "DEMO-HIGHLIFE-REG", 2)
}

// TestCreateCheckoutSession checks the mutation's adapting work: the
// caller from the context, the input converted for checkout, the session
// converted back, replays reported, and refusals as user errors whose
// field is the GraphQL input path.
func TestCreateCheckoutSession(t *testing.T) {
	t.Parallel()
	type userError struct{ code, field, message string }
	tests := []struct {
		name  string
		input func(*testing.T, *checkoutBundle) model.CreateCheckoutSessionInput
		want  func(*testing.T, *checkoutBundle) []userError
	}{
		{
			name: "ErrValidationFailedFieldPaths",
			input: func(t *testing.T, b *checkoutBundle) model.CreateCheckoutSessionInput {
				in := b.highlife(t, "k")
				in.EventID = nil
				in.Items = append(in.Items, nil)
				in.Items[0].Quantity = ptr(0)
				in.Customer.Email = ptr("ama@")
				return in
			},
			want: func(*testing.T, *checkoutBundle) []userError {
				return []userError{
					{"validation_failed", "input/customer/email", "must be a valid email address"},
					{"validation_failed", "input/eventId", "is required"},
					{"validation_failed", "input/items/0/quantity", "must be between 1 and 50"},
					{"validation_failed", "input/items/1", "must be an object with ticket_id and quantity"},
				}
			},
		},
		{
			name: "ErrValidationFailedMetadataKeyKeptWhole",
			input: func(t *testing.T, b *checkoutBundle) model.CreateCheckoutSessionInput {
				in := b.highlife(t, "k")
				in.Metadata = map[string]any{"buyer.name": "Ama Mensah"}
				return in
			},
			want: func(*testing.T, *checkoutBundle) []userError {
				return []userError{{"validation_failed", "input/metadata/buyer.name",
					"must not contain personal data (customer name, email address or phone number)"}}
			},
		},
		{
			name:  "ErrMissingIdempotencyKey",
			input: func(t *testing.T, b *checkoutBundle) model.CreateCheckoutSessionInput { return b.highlife(t, "") },
			want: func(*testing.T, *checkoutBundle) []userError {
				return []userError{{"missing_idempotency_key", "input/idempotencyKey", "idempotencyKey is required."}}
			},
		},
		{
			name: "ErrEventNotFound",
			input: func(t *testing.T, b *checkoutBundle) model.CreateCheckoutSessionInput {
				in := b.highlife(t, "k")
				in.EventID = ptr(b.ID(t, "DEMO-HIDDEN"))
				return in
			},
			want: func(t *testing.T, b *checkoutBundle) []userError {
				return []userError{{"event_not_found", "input/eventId", fmt.Sprintf("Event %d was not found.", b.ID(t, "DEMO-HIDDEN"))}}
			},
		},
		{
			name: "ErrRedirectDomainNotAllowed",
			input: func(t *testing.T, b *checkoutBundle) model.CreateCheckoutSessionInput {
				in := b.highlife(t, "k")
				in.CancelURL = ptr("https://elsewhere.example/no")
				return in
			},
			want: func(*testing.T, *checkoutBundle) []userError {
				return []userError{{"redirect_domain_not_allowed", "input/cancelUrl",
					"The host elsewhere.example of cancel_url is not on this app's redirect allowlist."}}
			},
		},
		{
			name: "ErrSoldOutHasNoField",
			input: func(t *testing.T, b *checkoutBundle) model.CreateCheckoutSessionInput {
				return b.input(t, "k", "DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1)
			},
			want: func(t *testing.T, b *checkoutBundle) []userError {
				return []userError{{"sold_out", "", fmt.Sprintf("Ticket %d does not have enough tickets left.", b.ID(t, "DEMO-COMEDY-REG"))}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				b := setupCheckout(t, db, store.EnvTest)
				p, err := b.r.Mutation().CreateCheckoutSession(b.ctx, tt.input(t, b))
				require.NoError(t, err, "refusals are user errors")
				require.Nil(t, p.CheckoutSession)
				require.False(t, p.Replayed)
				var got []userError
				for _, ue := range p.UserErrors {
					got = append(got, userError{ue.Code, strings.Join(ue.Field, "/"), ue.Message})
				}
				require.Equal(t, tt.want(t, b), got)
			})
		})
	}

	t.Run("OKReplayed", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupCheckout(t, db, store.EnvLive)
			first, err := b.r.Mutation().CreateCheckoutSession(b.ctx, b.highlife(t, "k"))
			require.NoError(t, err)
			require.False(t, first.Replayed)
			require.Equal(t, []*model.UserError{}, first.UserErrors, "an empty list, never null")
			s := first.CheckoutSession
			require.True(t, strings.HasPrefix(s.OrderReference, checkout.LivePrefix), "the caller's environment: %s", s.OrderReference)
			require.Equal(t, store.EnvLive, s.Environment)
			total, err := b.r.CheckoutSession().TotalMoney(b.ctx, s)
			require.NoError(t, err)
			require.Equal(t, &model.Money{Amount: "240.00", Currency: "GHS"}, total)

			again, err := b.r.Mutation().CreateCheckoutSession(b.ctx, b.highlife(t, "k"))
			require.NoError(t, err)
			require.True(t, again.Replayed)
			require.Equal(t, first.CheckoutSession, again.CheckoutSession)
		})
	})
	t.Run("ErrSoldOutReplayed", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupCheckout(t, db, store.EnvTest)
			in := b.input(t, "k", "DEMO-COMEDY", "DEMO-COMEDY-1", "DEMO-COMEDY-REG", 1)
			first, err := b.r.Mutation().CreateCheckoutSession(b.ctx, in)
			require.NoError(t, err)
			again, err := b.r.Mutation().CreateCheckoutSession(b.ctx, in)
			require.NoError(t, err)
			require.True(t, again.Replayed, "a saved refusal is a replay too")
			require.Equal(t, first.UserErrors, again.UserErrors)
		})
	})
	t.Run("ErrTopLevel", func(t *testing.T) {
		t.Parallel()
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			b := setupCheckout(t, db, store.EnvLive)
			b.Service.Config.LiveFreeDisabled = true
			p, err := b.r.Mutation().CreateCheckoutSession(b.ctx, b.input(t, "k", "DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1))
			require.Nil(t, p, "a service failure is not about the input")
			require.Equal(t, apperr.FreeCheckoutUnavailable, apperr.CodeOf(err))

			p, err = b.r.Mutation().CreateCheckoutSession(context.Background(), b.highlife(t, "k"))
			require.Nil(t, p)
			require.Equal(t, apperr.Unauthorized, apperr.CodeOf(err))
		})
	})
}

// TestOrder checks that the Order both APIs show is checkout's view of the
// stored order as Views makes it, the webhook payload's order, and that
// reading it takes a caller.
func TestOrder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setupCheckout(t, db, store.EnvLive)
		in := b.highlife(t, "k")
		sess, _, err := b.Service.Create(b.ctx, checkout.Caller{AppID: b.Demo.App.App.ID, Environment: store.EnvLive},
			checkout.Request{Key: in.IdempotencyKey, Input: toCheckoutInput(&in.CheckoutRequest)})
		require.NoError(t, err)

		o, err := b.r.Order(b.ctx, sess.OrderReference)
		require.NoError(t, err)
		stored, err := store.OrderByReference(b.ctx, db, sess.OrderReference)
		require.NoError(t, err)
		views, err := b.Service.Views(b.ctx, db, []*store.Order{stored})
		require.NoError(t, err)
		require.JSONEq(t, mustJSON(t, views[0]), mustJSON(t, o))
		require.Len(t, o.Items, 1)

		_, err = b.r.Order(context.Background(), sess.OrderReference)
		require.Equal(t, apperr.Unauthorized, apperr.CodeOf(err))
	})
}

func TestToCheckoutInput(t *testing.T) {
	t.Parallel()
	require.Nil(t, toCheckoutInput(nil), "a body that was not a JSON object")
	in := &model.CheckoutRequest{
		EventID: ptr(1), Items: []*model.CheckoutItemInput{nil, {TicketID: ptr(2)}},
		SuccessURL: ptr("https://a.example"), Metadata: map[string]any{"n": json.Number("1.50")},
	}
	require.Equal(t, &checkout.Input{
		EventID: ptr(1), Items: []*checkout.Item{nil, {TicketID: ptr(2)}},
		SuccessURL: ptr("https://a.example"), Metadata: map[string]any{"n": json.Number("1.50")},
	}, toCheckoutInput(in), "nils stay nil for validation to name them")
	require.Equal(t, []*checkout.Item{}, toCheckoutInput(&model.CheckoutRequest{Items: []*model.CheckoutItemInput{}}).Items,
		"an empty list is not a missing one")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
