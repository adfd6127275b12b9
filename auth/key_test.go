package auth

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewKey(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, env := range []string{"test", "live"} {
		for range 100 {
			key, hash, hint := NewKey(env)
			kind, got := parseKey(key)
			require.Equal(t, env, got, key)
			require.Equal(t, KindApp, kind)
			require.Len(t, key, len("svc_"+env+"_")+32)
			require.Equal(t, HashKey(key), hash)
			require.Equal(t, key[len(key)-4:], hint)
			require.False(t, seen[key], "duplicate key")
			seen[key] = true

			key, hash, hint = NewScannerKey(env)
			kind, got = parseKey(key)
			require.Equal(t, env, got, key)
			require.Equal(t, KindScanner, kind)
			require.Len(t, key, len("svc_scan_"+env+"_")+32)
			require.Equal(t, HashKey(key), hash)
			require.Equal(t, key[len(key)-4:], hint)
			require.False(t, seen[key], "duplicate key")
			seen[key] = true
		}
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"svc_test_abcdefghijklmnopqrstuvwxyz234567":       "app test",
		"svc_live_abcdefghijklmnopqrstuvwxyz234567":       "app live",
		"svc_scan_test_abcdefghijklmnopqrstuvwxyz234567":  "scanner test",
		"svc_scan_live_abcdefghijklmnopqrstuvwxyz234567":  "scanner live",
		"svc_live_ABCDEFGHIJKLMNOPQRSTUVWXYZ234567":       " ",
		"svc_live_abcdefghijklmnopqrstuvwxyz23456":        " ",
		"svc_live_abcdefghijklmnopqrstuvwxyz2345678":      " ",
		"svc_live_abcdefghijklmnopqrstuvwxyz234501":       " ",
		"svc_prod_abcdefghijklmnopqrstuvwxyz234567":       " ",
		"svc_scan_prod_abcdefghijklmnopqrstuvwxyz234567":  " ",
		"svc_scan_live_abcdefghijklmnopqrstuvwxyz23456":   " ",
		"svc_scan_live_abcdefghijklmnopqrstuvwxyz2345670": " ",
		"svc_scan_abcdefghijklmnopqrstuvwxyz234567":       " ",
		"": " ",
	} {
		kind, env := parseKey(key)
		require.Equal(t, want, string(kind)+" "+env, key)
	}
}
