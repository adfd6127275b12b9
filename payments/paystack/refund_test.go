package paystack_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/boxoffice/boxoffice/payments"
	"github.com/boxoffice/boxoffice/payments/paystack"
	"github.com/boxoffice/boxoffice/payments/paystacktest"
	"github.com/stretchr/testify/require"
)

// paidTransaction makes a successful transaction at the stand-in and
// returns its Paystack reference.
func paidTransaction(t *testing.T, ps *paystacktest.Server, p *paystack.Provider, ref string) string {
	t.Helper()
	pay, err := p.Create(context.Background(), request(ref))
	require.NoError(t, err)
	ps.Approve(pay.Reference)
	return pay.Reference
}

// TestRefund: POST /refund with the amount in subunits and the service's
// refund id as merchant note; the list finds it; processing ends it.
func TestRefund(t *testing.T) {
	t.Parallel()
	ps := paystacktest.New(t, secret)
	p := newProvider(t, ps.URL)
	ctx := context.Background()
	txRef := paidTransaction(t, ps, p, "ord_refund1")

	t.Run("OK", func(t *testing.T) {
		res, err := p.Refund(ctx, payments.RefundRequest{RefundID: "rfd_one", PaymentReference: txRef, Amount: 5000, Currency: "GHS"})
		require.NoError(t, err)
		require.Equal(t, payments.RefundPending, res.State, "Paystack queues refunds")
		require.Equal(t, "rfd_one", res.RefundID)
		require.NotEmpty(t, res.ProviderID)
		got := ps.Refunds(txRef)
		require.Len(t, got, 1)
		require.Equal(t, int64(5000), got[0].Amount)
		require.Equal(t, "rfd_one", got[0].MerchantNote)

		list, err := p.RefundsOf(ctx, txRef)
		require.NoError(t, err)
		require.Equal(t, []payments.RefundResult{{RefundID: "rfd_one", ProviderID: res.ProviderID,
			State: payments.RefundPending, Amount: 5000}}, list)
		ps.ProcessRefunds("processed")
		list, err = p.RefundsOf(ctx, txRef)
		require.NoError(t, err)
		require.Equal(t, payments.RefundSucceeded, list[0].State)
	})

	t.Run("ErrRefusedAboveTheAmount", func(t *testing.T) {
		_, err := p.Refund(ctx, payments.RefundRequest{RefundID: "rfd_two", PaymentReference: txRef, Amount: 12550, Currency: "GHS"})
		var apiErr *paystack.APIError
		require.ErrorAs(t, err, &apiErr)
		require.False(t, errors.Is(err, payments.ErrUnavailable), "a refusal is an answer, not an outage")
	})

	t.Run("ErrAnswerLost", func(t *testing.T) {
		ps.LoseRefundAnswers(1)
		_, err := p.Refund(ctx, payments.RefundRequest{RefundID: "rfd_three", PaymentReference: txRef, Amount: 100, Currency: "GHS"})
		require.ErrorIs(t, err, payments.ErrUnavailable, "an outcome the caller cannot know")
		list, err := p.RefundsOf(ctx, txRef)
		require.NoError(t, err)
		require.Equal(t, "rfd_three", list[len(list)-1].RefundID, "the list shows the refund the lost answer made")
	})
}

// TestParseRefundCallback: a signed refund.* webhook names the order whose
// payment it is; a forged one is refused; another event is not a notice.
func TestParseRefundCallback(t *testing.T) {
	t.Parallel()
	p := newProvider(t, "https://api.paystack.co")
	body, err := json.Marshal(map[string]any{"event": "refund.processed",
		"data": map[string]any{"status": "processed", "transaction_reference": paystack.EncodeReference("ord_abc")}})
	require.NoError(t, err)
	h := http.Header{}
	h.Set(paystack.SignatureHeader, paystacktest.Sign(secret, body))
	n, err := p.ParseRefundCallback(h, body)
	require.NoError(t, err)
	require.Equal(t, &payments.RefundNotice{OrderReference: "ord_abc"}, n)

	h.Set(paystack.SignatureHeader, paystacktest.Sign("sk_test_other", body))
	_, err = p.ParseRefundCallback(h, body)
	require.ErrorIs(t, err, payments.ErrForged)

	charge := []byte(`{"event":"charge.success","data":{"reference":"ord-abc"}}`)
	h.Set(paystack.SignatureHeader, paystacktest.Sign(secret, charge))
	n, err = p.ParseRefundCallback(h, charge)
	require.NoError(t, err)
	require.Nil(t, n)
}
