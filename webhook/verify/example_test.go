package verify_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/boxoffice/boxoffice/webhook/verify"
)

// A receiver reads the raw body, verifies it, and only then parses it.
func Example() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := verify.Verify(secret, r.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		// Deduplicate by r.Header.Get(verify.HeaderEventID), then handle the event.
		fmt.Println("accepted", r.Header.Get(verify.HeaderEventType))
		w.WriteHeader(http.StatusNoContent)
	})

	// What Boxoffice sends:
	body := `{"id":"evt_1","type":"order.paid","created_at":"2026-11-21T10:00:00Z","environment":"test","data":{}}`
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/boxoffice", strings.NewReader(body))
	req.Header.Set(verify.HeaderTimestamp, ts)
	req.Header.Set(verify.HeaderSignature, verify.Sign(secret, ts, []byte(body)))
	req.Header.Set(verify.HeaderEventID, "evt_1")
	req.Header.Set(verify.HeaderEventType, "order.paid")

	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	fmt.Println(rec.Code)

	// A tampered body is refused.
	req = httptest.NewRequest(http.MethodPost, "/webhooks/boxoffice", strings.NewReader(strings.Replace(body, "paid", "failed", 1)))
	req.Header.Set(verify.HeaderTimestamp, ts)
	req.Header.Set(verify.HeaderSignature, verify.Sign(secret, ts, []byte(body)))
	rec = httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
	// Output:
	// accepted order.paid
	// 204
	// 401 verify: signature does not match
}
