package portal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/boxoffice/boxoffice/accounts"
)

// Keys and secrets are shown once, on the page a change leads to. The
// change is a form post, and a page answering a post would run the change
// again when reloaded (a second app, another rotation). So the post sends
// what it made, sealed, in a cookie and redirects (POST/redirect/GET); the
// app page opens the cookie, shows what it holds and deletes it. A reload
// finds no cookie and shows nothing twice.
//
// The seal is AES-GCM under a key derived from the session's secret, as
// the form token is: only the browser holding that session can have it
// opened, and the database never holds a key or secret in the clear. The
// cookie is scoped to the app's page and lives a minute.

// revealCookie carries sealed keys and secrets from a post to its page.
const revealCookie = "boxoffice_reveal"

// revealTTL is how long a sealed reveal waits for its page.
const revealTTL = 60

// revealKey is the session's key for sealing reveals.
func revealKey(s *accounts.Session) []byte {
	m := hmac.New(sha256.New, []byte(s.Token))
	m.Write([]byte("boxoffice portal reveal"))
	return m.Sum(nil)
}

func aead(s *accounts.Session) cipher.AEAD {
	block, err := aes.NewCipher(revealKey(s))
	if err != nil {
		panic("portal: " + err.Error()) // a 32-byte key always makes a cipher
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic("portal: " + err.Error())
	}
	return gcm
}

// seal returns secrets sealed for the page of app appID of session s.
func seal(s *accounts.Session, appID int64, secrets []secret) string {
	plain, _ := json.Marshal(secrets)
	gcm := aead(s)
	nonce := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(gcm.Seal(nonce, nonce, plain, []byte(strconv.FormatInt(appID, 10))))
}

// open returns what seal sealed for app appID of session s; false for
// anything else (another session's, another app's, altered, garbage).
func open(s *accounts.Session, appID int64, sealed string) ([]secret, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	gcm := aead(s)
	if err != nil || len(raw) < gcm.NonceSize() {
		return nil, false
	}
	plain, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], []byte(strconv.FormatInt(appID, 10)))
	if err != nil {
		return nil, false
	}
	var secrets []secret
	if json.Unmarshal(plain, &secrets) != nil {
		return nil, false
	}
	return secrets, true
}

// appPath is the address of an app's page.
func appPath(appID int64) string { return "/portal/apps/" + strconv.FormatInt(appID, 10) }

// revealNext sends the browser to the app's page, which shows secrets
// once, with the notice of done.
func (h *Handler) revealNext(w http.ResponseWriter, r *http.Request, appID int64, done string, secrets []secret) {
	http.SetCookie(w, &http.Cookie{
		Name: revealCookie, Value: seal(sessionFrom(r), appID, secrets), Path: appPath(appID), MaxAge: revealTTL,
		HttpOnly: true, Secure: h.secure(), SameSite: http.SameSiteLaxMode,
	})
	back(w, r, appID, done)
}

// takeReveal returns the secrets sealed for the app's page, once: the
// cookie is deleted whether or not it opens.
func (h *Handler) takeReveal(w http.ResponseWriter, r *http.Request, appID int64) []secret {
	c, err := r.Cookie(revealCookie)
	if err != nil {
		return nil
	}
	http.SetCookie(w, &http.Cookie{Name: revealCookie, Path: appPath(appID), MaxAge: -1,
		HttpOnly: true, Secure: h.secure(), SameSite: http.SameSiteLaxMode})
	secrets, _ := open(sessionFrom(r), appID, c.Value)
	return secrets
}
