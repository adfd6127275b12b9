// Package verify checks that a webhook delivery really comes from Boxoffice.
// Partners import it in their receivers; Boxoffice signs with the same
// functions.
//
// Every delivery carries two signatures over the raw request body:
//
//   - X-SVC-Webhook-Signature: base64 (standard, padded) of HMAC-SHA256 keyed
//     with the webhook secret string exactly as issued (whsec_ included),
//     over X-SVC-Webhook-Timestamp + "." + body.
//   - webhook-signature: the Standard Webhooks form "v1,<base64>", keyed with
//     the base64-decoded part of the secret after "whsec_", over
//     webhook-id + "." + webhook-timestamp + "." + body. It signs the event
//     id too, and Standard Webhooks libraries verify it as they are.
//
// Deliveries whose timestamp is more than Tolerance away from now are
// refused, so a captured delivery cannot be replayed later.
package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	HeaderTimestamp = "X-SVC-Webhook-Timestamp"
	HeaderSignature = "X-SVC-Webhook-Signature"
	HeaderEventID   = "X-SVC-Event-Id"
	HeaderEventType = "X-SVC-Event-Type"

	HeaderStandardID        = "webhook-id"
	HeaderStandardTimestamp = "webhook-timestamp"
	HeaderStandardSignature = "webhook-signature"
)

// Tolerance is how far a delivery's timestamp may be from the receiver's clock.
const Tolerance = 5 * time.Minute

// Errors returned by Verify.
var (
	ErrMissingHeader = errors.New("verify: signature or timestamp header missing")
	ErrTimestamp     = errors.New("verify: timestamp is not within 5 minutes of now")
	ErrSignature     = errors.New("verify: signature does not match")
)

// Sign returns the X-SVC-Webhook-Signature of body sent at timestamp
// (Unix seconds in decimal).
func Sign(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// SignStandard returns the Standard Webhooks webhook-signature ("v1,<base64>")
// of body with event id msgID sent at timestamp.
func SignStandard(secret, msgID, timestamp string, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", errors.New("verify: the secret is not whsec_ followed by base64")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + timestamp + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// Verify checks the X-SVC signature of a delivery against the app's webhook
// secret, in constant time, and refuses a timestamp more than Tolerance from
// now. body must be the raw request body, read before any JSON parsing.
func Verify(secret string, h http.Header, body []byte) error {
	return VerifyAt(secret, h, body, time.Now())
}

// VerifyAt is Verify with the receiver's clock given.
func VerifyAt(secret string, h http.Header, body []byte, now time.Time) error {
	ts, sig := h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if ts == "" || sig == "" {
		return ErrMissingHeader
	}
	if err := checkTimestamp(ts, now); err != nil {
		return err
	}
	if !hmac.Equal([]byte(sig), []byte(Sign(secret, ts, body))) {
		return ErrSignature
	}
	return nil
}

// VerifyStandardAt checks the Standard Webhooks headers of a delivery the
// way Standard Webhooks libraries do (any of several space-separated v1
// signatures may match).
func VerifyStandardAt(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get(HeaderStandardID), h.Get(HeaderStandardTimestamp), h.Get(HeaderStandardSignature)
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeader
	}
	if err := checkTimestamp(ts, now); err != nil {
		return err
	}
	want, err := SignStandard(secret, id, ts, body)
	if err != nil {
		return err
	}
	for _, s := range strings.Fields(sigs) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return ErrSignature
}

func checkTimestamp(ts string, now time.Time) error {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	d := now.Sub(time.Unix(sec, 0))
	if d > Tolerance || d < -Tolerance {
		return ErrTimestamp
	}
	return nil
}
