package provision

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckWebhookURL(t *testing.T) {
	t.Parallel()
	strict := &Service{}
	for _, raw := range []string{
		"https://127.0.0.1/hook", "https://[::1]/hook", "https://[::127.0.0.1]/hook",
		"https://[64:ff9b::7f00:1]/hook", "https://[2002:7f00:1::]/hook", "https://0.0.0.0/hook",
		"https://198.18.0.1/hook", "https://240.0.0.1/hook", "https://255.255.255.255/hook",
		"https://[fec0::1]/hook", "https://[::ffff:10.0.0.1]/hook", "https://169.254.169.254/latest",
		"https://[fe80::1%25eth0]:8443/hook", "https://100.64.0.1/hook", "https://192.0.2.10/hook",
	} {
		err := strict.CheckWebhookURL(raw)
		require.ErrorContains(t, err, "points at a special-purpose address", raw)
	}
	for _, raw := range []string{
		"https://hooks.example.com/x", "https://8.8.8.8/x", "https://[2001:4860:4860::8888]:8443/x", "",
	} {
		require.NoError(t, strict.CheckWebhookURL(raw), raw)
	}
	require.ErrorContains(t, strict.CheckWebhookURL("http://hooks.example.com/x"), "must be an absolute https:// URL")

	dev := &Service{AllowPrivateWebhooks: true}
	for _, raw := range []string{"http://127.0.0.1:8080/hook", "https://[::127.0.0.1]/hook", "http://localhost:9000/x"} {
		require.NoError(t, dev.CheckWebhookURL(raw), "WEBHOOK_ALLOW_PRIVATE_TARGETS allows %s", raw)
	}
}
