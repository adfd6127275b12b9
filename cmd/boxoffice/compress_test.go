package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

// TestCompression: JSON, HTML and scripts of 1 KB or more are gzipped for a client that
// accepts it, and read back the same; a client that does not gets them
// as they are; the event stream is never compressed, so each event
// reaches listen as it is written.
func TestCompression(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.MustOpen(t, "sqlite"))
	// The transport's own gzip handling is off: the test sees the bytes sent.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(t *testing.T, path, encoding string, headers ...string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, tb.srv.URL+path, nil)
		require.NoError(t, err)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, body
	}
	_, docs := get(t, "/docs", "")
	script := regexp.MustCompile(`/docs/assets/[^"]+\.js`).FindString(string(docs))
	require.NotEmpty(t, script, "the reference page's script: %s", docs)
	for _, tc := range []struct{ name, path, key string }{
		{"JSON", "/api/v1/openapi.json", ""},
		{"APIAnswer", "/api/v1/events", tb.testKey},
		{"Script", script, ""},
		{"Portal", "/portal/signin", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain, raw := get(t, tc.path, "", "X-API-Key", tc.key)
			require.Equal(t, http.StatusOK, plain.StatusCode)
			require.Empty(t, plain.Header.Get("Content-Encoding"))
			res, zipped := get(t, tc.path, "gzip, br", "X-API-Key", tc.key)
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
			require.Contains(t, res.Header.Values("Vary"), "Accept-Encoding")
			zr, err := gzip.NewReader(bytes.NewReader(zipped))
			require.NoError(t, err)
			unzipped, err := io.ReadAll(zr)
			require.NoError(t, err)
			if tc.name != "Portal" { // the portal's form token differs per answer
				require.Equal(t, string(raw), string(unzipped))
			}
			require.Less(t, len(zipped), len(raw), "smaller")
			t.Logf("%s: %d bytes, %d gzipped", tc.path, len(raw), len(zipped))
		})
	}
	t.Run("StreamsUntouched", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, tb.srv.URL+"/api/v1/webhook-events/stream", nil)
		require.NoError(t, err)
		req.Header.Set("X-API-Key", tb.testKey)
		req.Header.Set("Accept-Encoding", "gzip")
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
		require.Empty(t, res.Header.Get("Content-Encoding"))
		line := make([]byte, 64)
		n, err := res.Body.Read(line)
		require.NoError(t, err)
		require.Contains(t, string(line[:n]), "ready", "the first event arrives at once, uncompressed")
	})
}
