package portal

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeliveryProblem: a partner reads why a delivery failed without
// learning anything of the service's own network.
func TestDeliveryProblem(t *testing.T) {
	t.Parallel()
	for err, want := range map[string]string{
		`Post "https://hooks.example.com/in": dial tcp: lookup hooks.example.com on 10.255.255.53:53: no such host`:   "the host name does not resolve",
		`Post "https://x.example/": dial tcp 203.0.113.5:443: connect: connection refused`:                            "the connection was refused",
		`Post "https://x.example/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`:       "no answer within 10 s",
		`Post "https://x.example/": webhook: delivery cannot succeed: 10.0.0.5 is not a public address`:               "the URL leads to an address that is not public",
		`webhook: delivery cannot succeed: the app has no webhook URL`:                                                "the app has no webhook URL",
		`Post "https://x.example/": tls: failed to verify certificate: x509: certificate signed by unknown authority`: "the receiver's TLS certificate was not accepted",
		`Post "https://x.example/": EOF`: "the connection failed",
	} {
		require.Equal(t, want, deliveryProblem(err), err)
		require.NotContains(t, deliveryProblem(err), "10.")
	}
}
