package verify_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/webhook/verify"
	"github.com/stretchr/testify/require"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func signed(body string, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	h := http.Header{}
	h.Set(verify.HeaderTimestamp, ts)
	h.Set(verify.HeaderSignature, verify.Sign(secret, ts, []byte(body)))
	h.Set(verify.HeaderStandardID, "evt_1")
	h.Set(verify.HeaderStandardTimestamp, ts)
	sig, _ := verify.SignStandard(secret, "evt_1", ts, []byte(body))
	h.Set(verify.HeaderStandardSignature, sig)
	return h
}

func TestVerify(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := `{"id":"evt_1"}`
	tests := []struct {
		name   string
		secret string
		header http.Header
		body   string
		want   error
	}{
		{"OK", secret, signed(body, now), body, nil},
		{"OKFourMinutesOld", secret, signed(body, now.Add(-4*time.Minute)), body, nil},
		{"OKSlightlyAhead", secret, signed(body, now.Add(4*time.Minute)), body, nil},
		{"ErrTampered", secret, signed(body, now), `{"id":"evt_2"}`, verify.ErrSignature},
		{"ErrWrongSecret", "whsec_other", signed(body, now), body, verify.ErrSignature},
		{"ErrStale", secret, signed(body, now.Add(-6*time.Minute)), body, verify.ErrTimestamp},
		{"ErrFuture", secret, signed(body, now.Add(6*time.Minute)), body, verify.ErrTimestamp},
		{"ErrMissing", secret, http.Header{}, body, verify.ErrMissingHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, verify.VerifyAt(tt.secret, tt.header, []byte(tt.body), now), tt.want)
			if tt.secret == secret {
				require.ErrorIs(t, verify.VerifyStandardAt(tt.secret, tt.header, []byte(tt.body), now), tt.want)
			}
		})
	}
	t.Run("ErrTimestampNotANumber", func(t *testing.T) {
		h := signed(body, now)
		h.Set(verify.HeaderTimestamp, "yesterday")
		require.ErrorIs(t, verify.VerifyAt(secret, h, []byte(body), now), verify.ErrTimestamp)
	})
	t.Run("SignatureFormat", func(t *testing.T) {
		// HMAC-SHA256 keyed with the secret string, over "ts.body", standard base64.
		// Expected value from: printf '1700000000.{}' | openssl dgst -sha256 -hmac whsec_test -binary | base64
		require.Equal(t, "NUlQJPTvP5TlqT4iIhVExLdemkIwDNllq4HLhc2ZTpE=", verify.Sign("whsec_test", "1700000000", []byte(`{}`)))
	})
	t.Run("StandardWebhooksVector", func(t *testing.T) {
		// The test vector published with the Standard Webhooks specification.
		sig, err := verify.SignStandard("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
			"1614265330", []byte(`{"test": 2432232314}`))
		require.NoError(t, err)
		require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", sig)
	})
}
