// Package auth authenticates partners. API requests carry a key: it issues
// keys, stores only their hashes, and turns an X-API-Key header into the
// calling app's identity or one of the spec's authentication errors. People
// sign in to the developer portal with a password, stored as an argon2id
// hash made and checked here.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
)

// Key prefixes name the environment a key belongs to (spec section 5),
// and for a door device's key that it is one (spec/fulfilment.md
// section 4).
const (
	TestPrefix        = "svc_test_"
	LivePrefix        = "svc_live_"
	ScannerTestPrefix = "svc_scan_test_"
	ScannerLivePrefix = "svc_scan_live_"
)

// keyBytes of randomness: 160 bits, above the 128 the contract asks for.
const keyBytes = 20

var keyEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// keyBodyLen is the length of the random part of a key.
var keyBodyLen = keyEncoding.EncodedLen(keyBytes)

// NewKey returns a fresh key for env ("test" or "live"), its hash and a short
// hint (its last four characters) an operator can recognise it by.
func NewKey(env string) (key, hash, hint string) {
	return newKey(Prefix(env))
}

// NewScannerKey returns a fresh scanner key for env ("test" or "live"),
// its hash and its hint, as NewKey does for app keys.
func NewScannerKey(env string) (key, hash, hint string) {
	prefix := ScannerTestPrefix
	if env == store.EnvLive {
		prefix = ScannerLivePrefix
	}
	return newKey(prefix)
}

func newKey(prefix string) (key, hash, hint string) {
	b := make([]byte, keyBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	body := strings.ToLower(keyEncoding.EncodeToString(b))
	key = prefix + body
	return key, HashKey(key), body[len(body)-4:]
}

// HashKey returns the stored form of a key (or of a portal session or reset
// token): hex SHA-256. Keys carry 160 random bits and tokens 256, so a fast
// hash is enough; a slow one would only cost latency.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// CheckEnv refuses an environment other than test and live.
// Errors: validation_failed (env).
func CheckEnv(env string) error {
	if env != store.EnvTest && env != store.EnvLive {
		return apperr.Invalid("env", "%q is not one of test, live", env)
	}
	return nil
}

// Prefix returns the prefix of keys of env: svc_live_ for live, svc_test_
// otherwise.
func Prefix(env string) string {
	if env == store.EnvLive {
		return LivePrefix
	}
	return TestPrefix
}

// parseKey returns the kind and environment of a well-formed key, or ""
// for both when the key is malformed.
func parseKey(key string) (Kind, string) {
	var (
		kind      = KindApp
		env, body string
	)
	switch {
	case strings.HasPrefix(key, TestPrefix):
		env, body = store.EnvTest, key[len(TestPrefix):]
	case strings.HasPrefix(key, LivePrefix):
		env, body = store.EnvLive, key[len(LivePrefix):]
	case strings.HasPrefix(key, ScannerTestPrefix):
		kind, env, body = KindScanner, store.EnvTest, key[len(ScannerTestPrefix):]
	case strings.HasPrefix(key, ScannerLivePrefix):
		kind, env, body = KindScanner, store.EnvLive, key[len(ScannerLivePrefix):]
	default:
		return "", ""
	}
	if len(body) != keyBodyLen {
		return "", ""
	}
	for _, r := range body {
		if (r < 'a' || r > 'z') && (r < '2' || r > '7') {
			return "", ""
		}
	}
	return kind, env
}
