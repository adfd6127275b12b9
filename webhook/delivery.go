package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/webhook/verify"
)

// NewDeliveryRequest builds the POST that delivers an event: its exact
// payload, signed with secret at now, with every header docs/webhooks.md names.
// It is the one place a delivery is made, for an app's webhook URL and for
// `boxoffice listen` forwarding to a laptop alike.
func NewDeliveryRequest(ctx context.Context, url, secret, eventID, eventType string, payload []byte, now time.Time) (*http.Request, error) {
	return newDeliveryRequest(ctx, url, []string{secret}, eventID, eventType, payload, now)
}

// newDeliveryRequest signs with every secret: X-SVC-Webhook-Signature,
// which holds one signature, with the first (the current one), and
// webhook-signature with each, space-separated, as Standard Webhooks
// allows, so a receiver still holding the secret before a rotation keeps
// verifying during the overlap.
func newDeliveryRequest(ctx context.Context, url string, secrets []string, eventID, eventType string, payload []byte, now time.Time) (*http.Request, error) {
	ts := strconv.FormatInt(now.Unix(), 10)
	stds := make([]string, len(secrets))
	for i, secret := range secrets {
		var err error
		if stds[i], err = verify.SignStandard(secret, eventID, ts, payload); err != nil {
			return nil, err
		}
	}
	std := strings.Join(stds, " ")
	secret := secrets[0]
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Boxoffice-Webhooks/1")
	req.Header.Set(verify.HeaderTimestamp, ts)
	req.Header.Set(verify.HeaderSignature, verify.Sign(secret, ts, payload))
	req.Header.Set(verify.HeaderEventID, eventID)
	req.Header.Set(verify.HeaderEventType, eventType)
	req.Header.Set(verify.HeaderStandardID, eventID)
	req.Header.Set(verify.HeaderStandardTimestamp, ts)
	req.Header.Set(verify.HeaderStandardSignature, std)
	return req, nil
}

// NewSecret returns a fresh webhook secret: "whsec_" and 32 random bytes
// in base64, the form both signatures need.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}
