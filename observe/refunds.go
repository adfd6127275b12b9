package observe

import (
	"context"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// refundStatuses are the statuses a refund is counted in: pending when it
// is made and waits for its money, succeeded or failed when it settles (a
// refund made succeeded counts once, as succeeded).
var refundStatuses = []string{"pending", "succeeded", "failed"}

var refundsFailedDesc = prometheus.NewDesc("boxoffice_refunds_failed",
	"Refunds whose money the payment provider did not return (status failed), by environment, read from the database "+
		"at scrape time: every instance reports the same number. `boxoffice orders list --refund-failed` lists them.",
	[]string{"environment"}, nil)

// WatchRefunds registers the refund metrics: boxoffice_refunds_total
// (Refund counts into it) and boxoffice_refunds_failed, read by failed at
// scrape time.
func (m *Metrics) WatchRefunds(failed func(context.Context) (map[string]int, error)) {
	m.refunds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "boxoffice_refunds_total", Help: "Refunds made pending, and refunds settled succeeded or failed, on this instance.",
	}, []string{"status"})
	for _, s := range refundStatuses {
		m.refunds.WithLabelValues(s)
	}
	m.Registry.MustRegister(m.refunds, &countCollector{desc: refundsFailedDesc, labels: environments, read: failed})
}

// Refund counts a refund that became pending, succeeded or failed.
func (m *Metrics) Refund(status string) {
	if m.refunds == nil {
		return
	}
	if !slices.Contains(refundStatuses, status) {
		status = Other
	}
	m.refunds.WithLabelValues(status).Inc()
}
