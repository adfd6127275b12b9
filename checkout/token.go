package checkout

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/store"
)

// Cursors of the order list and tokens of the changes feed are opaque to
// clients: base64url of "KIND|FIELD|FIELD" followed by the first 4 bytes
// of its SHA-256, so that a token that was cut, edited or belongs to the
// other kind is refused (validation_failed) instead of quietly reading from
// somewhere else. The checksum is not a signature: a forged token only
// moves its holder within its own app's orders, which every read is
// scoped to anyway.
var tokenEncoding = base64.RawURLEncoding.Strict()

// Token kinds.
const (
	orderCursorKind = "o1" // an order's place in the list: created_at (Unix µs), reference
	changeTokenKind = "c1" // a place in the changes feed: transaction id, sequence number
)

// maxTokenLength bounds what is decoded: ours are under 100 characters.
const maxTokenLength = 200

func encodeToken(kind string, fields ...string) string {
	raw := []byte(kind + "|" + strings.Join(fields, "|"))
	sum := sha256.Sum256(raw)
	return tokenEncoding.EncodeToString(append(raw, sum[:4]...))
}

// decodeToken returns the n fields of a token of kind, and false for
// anything else.
func decodeToken(s, kind string, n int) ([]string, bool) {
	if len(s) > maxTokenLength {
		return nil, false
	}
	b, err := tokenEncoding.DecodeString(s)
	if err != nil || len(b) < 5 {
		return nil, false
	}
	raw, sum := b[:len(b)-4], b[len(b)-4:]
	want := sha256.Sum256(raw)
	if !bytes.Equal(sum, want[:4]) {
		return nil, false
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != n+1 || parts[0] != kind {
		return nil, false
	}
	return parts[1:], true
}

func encodeOrderCursor(k store.OrderKey) string {
	return encodeToken(orderCursorKind, strconv.FormatInt(k.CreatedAt.UnixMicro(), 10), k.Reference)
}

func decodeOrderCursor(s string) (store.OrderKey, bool) {
	f, ok := decodeToken(s, orderCursorKind, 2)
	if !ok {
		return store.OrderKey{}, false
	}
	us, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || !store.PlausibleReference(f[1]) {
		return store.OrderKey{}, false
	}
	return store.OrderKey{CreatedAt: time.UnixMicro(us).UTC(), Reference: f[1]}, true
}

func encodeChangeToken(c store.ChangeCursor) string {
	return encodeToken(changeTokenKind, strconv.FormatUint(c.Tx, 10), strconv.FormatInt(c.Seq, 10))
}

func decodeChangeToken(s string) (store.ChangeCursor, bool) {
	f, ok := decodeToken(s, changeTokenKind, 2)
	if !ok {
		return store.ChangeCursor{}, false
	}
	tx, err1 := strconv.ParseUint(f[0], 10, 64)
	seq, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || seq < 0 {
		return store.ChangeCursor{}, false
	}
	return store.ChangeCursor{Tx: tx, Seq: seq}, true
}
