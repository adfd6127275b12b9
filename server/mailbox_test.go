package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestMailboxListeners: the mailbox is on the admin listener, and only
// there: it holds buyers' addresses and ticket links.
func TestMailboxListeners(t *testing.T) {
	t.Parallel()
	m := mustNew(t, storetest.MustOpen(t, "sqlite"))
	admin := httptest.NewServer(m.AdminHandler())
	t.Cleanup(admin.Close)
	public := httptest.NewServer(m.Handler())
	t.Cleanup(public.Close)
	send := func(t *testing.T, method, url string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, url, nil)
		require.NoError(t, err)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, body
	}
	require.NoError(t, m.Mailbox.Send(context.Background(), mail.Message{From: mail.DefaultFrom, To: "ama@example.com",
		Subject: "Your tickets", Text: "tok_secret", Attachments: []mail.Attachment{{Name: "t.pdf", ContentType: "application/pdf", Data: []byte("%PDF")}}}))
	for _, path := range []string{"/mail", "/mail/1", "/mail/1/attachments/1"} {
		res, body := send(t, http.MethodGet, admin.URL+path)
		require.Equal(t, http.StatusOK, res.StatusCode, "admin %s", path)
		head, _ := send(t, http.MethodHead, admin.URL+path)
		require.Equal(t, http.StatusOK, head.StatusCode, "admin HEAD %s", path)
		if path == "/mail/1" {
			require.Contains(t, string(body), "tok_secret")
		}
		res, body = send(t, http.MethodGet, public.URL+path)
		require.Equal(t, http.StatusNotFound, res.StatusCode, "public %s", path)
		require.NotContains(t, string(body), "tok_secret")
		require.NotContains(t, string(body), "ama@example.com")
	}
	res, _ := send(t, http.MethodGet, fmt.Sprintf("%s/mail/%d", admin.URL, 2))
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}
