package observe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/observe"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"
)

func TestCheckInReasons(t *testing.T) {
	require.Equal(t, checkin.Reasons, observe.CheckInReasons, "every reason a scan is rejected has its series")
}

// TestDoorAndTicketMetrics: each count goes to its series, and a value
// outside a label's set counts as OTHER, never as a new series.
func TestDoorAndTicketMetrics(t *testing.T) {
	none := func(context.Context) (map[string]int, error) { return map[string]int{}, nil }
	m := observe.NewMetrics(storetest.MustOpen(t, "sqlite").DB.DB, none, none)
	m.TicketsIssued("live", 3)
	m.TicketsIssued("made-up", 1)
	m.TicketEmail("sent")
	m.TicketEmail("retry")
	m.TicketEmail("whatever")
	m.CheckIn("admitted", "")
	m.CheckIn("rejected", "void")
	m.CheckIn("rejected", "made_up")
	m.CheckIn("odd", "void")
	m.Webhook("listen_only")
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	text := rec.Body.String()
	for _, want := range []string{
		`boxoffice_tickets_issued_total{environment="live"} 3`,
		`boxoffice_tickets_issued_total{environment="OTHER"} 1`,
		`boxoffice_tickets_issued_total{environment="test"} 0`,
		`boxoffice_ticket_emails_total{outcome="sent"} 1`,
		`boxoffice_ticket_emails_total{outcome="retry"} 1`,
		`boxoffice_ticket_emails_total{outcome="failed"} 0`,
		`boxoffice_ticket_emails_total{outcome="OTHER"} 1`,
		`boxoffice_check_ins_total{reason="none",result="admitted"} 1`,
		`boxoffice_check_ins_total{reason="void",result="rejected"} 1`,
		`boxoffice_check_ins_total{reason="OTHER",result="rejected"} 1`,
		`boxoffice_check_ins_total{reason="OTHER",result="OTHER"} 1`,
		`boxoffice_webhook_deliveries_total{outcome="listen_only"} 1`,
	} {
		require.Contains(t, text, want+"\n")
	}
}
