// Package observe makes the service visible to operators: Prometheus
// metrics (requests, checkout outcomes, webhook deliveries, job queue depth,
// database pool) and the per-request facts the request log line carries.
package observe

import (
	"context"
	"database/sql"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the service's Prometheus metrics, on a registry of their own.
type Metrics struct {
	Registry  *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	checkouts *prometheus.CounterVec
	webhooks  *prometheus.CounterVec
	issued    *prometheus.CounterVec
	emails    *prometheus.CounterVec
	checkIns  *prometheus.CounterVec
	refunds   *prometheus.CounterVec // WatchRefunds
}

// NewMetrics registers the metrics, the Go and process collectors, the
// database pool statistics of db, the job queue depth read by depth and
// the orders awaiting a refund review read by reviews (counts by
// environment), both read at scrape time.
func NewMetrics(db *sql.DB, depth, reviews func(context.Context) (map[string]int, error)) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "boxoffice_http_requests_total", Help: "HTTP requests by route, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "boxoffice_http_request_duration_seconds", Help: "HTTP request latency by route and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method", "status"}),
		checkouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "boxoffice_checkout_outcomes_total", Help: "Checkout session requests by environment and outcome (created or the error code).",
		}, []string{"environment", "outcome"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "boxoffice_webhook_deliveries_total", Help: "Webhook delivery attempts by outcome (delivered, retry, failed; listen_only: the app has no webhook URL, its events go to boxoffice listen alone).",
		}, []string{"outcome"}),
		issued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "boxoffice_tickets_issued_total", Help: "Tickets issued, by environment.",
		}, []string{"environment"}),
		emails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "boxoffice_ticket_emails_total", Help: "Ticket email send attempts by outcome (sent, retry, failed).",
		}, []string{"outcome"}),
		checkIns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "boxoffice_check_ins_total", Help: "Door scans recorded, by result (admitted, rejected) and reason (none when admitted).",
		}, []string{"result", "reason"}),
	}
	m.Registry.MustRegister(m.requests, m.latency, m.checkouts, m.webhooks, m.issued, m.emails, m.checkIns,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(db, "boxoffice"),
		&countCollector{desc: queueDesc, labels: jobStates, read: depth},
		&countCollector{desc: reviewDesc, labels: environments, read: reviews})
	// Known series read 0 from the start, so a rate or an alert on them
	// works before the first event instead of seeing no series at all.
	for _, outcome := range webhookOutcomes {
		m.webhooks.WithLabelValues(outcome)
	}
	for _, env := range environments {
		for outcome := range checkoutOutcomes {
			m.checkouts.WithLabelValues(env, outcome)
		}
		m.issued.WithLabelValues(env)
	}
	for _, outcome := range emailOutcomes {
		m.emails.WithLabelValues(outcome)
	}
	m.checkIns.WithLabelValues(admitted, noReason)
	for _, reason := range CheckInReasons {
		m.checkIns.WithLabelValues(rejected, reason)
	}
	return m
}

// Every label takes its values from a fixed set, whatever clients send:
// a value outside it counts as Other, so no request can add a series.
const (
	// Other stands for any value outside a label's set.
	Other = "OTHER"
	// Unmatched is the route of a request no route pattern matched.
	Unmatched = "unmatched"
)

// methods are the standard HTTP methods (RFC 9110 and PATCH).
var methods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
	http.MethodConnect: true, http.MethodTrace: true,
}

// Method returns the label of an HTTP method: the method when standard,
// Other otherwise.
func Method(method string) string {
	if methods[method] {
		return method
	}
	return Other
}

var (
	environments    = []string{"test", "live"}
	webhookOutcomes = []string{"delivered", "retry", "failed", "listen_only"}
	emailOutcomes   = []string{"sent", "retry", "failed"}
	// checkoutOutcomes are "created" and every error code.
	checkoutOutcomes = func() map[string]bool {
		out := map[string]bool{"created": true}
		for _, c := range apperr.Codes() {
			out[string(c)] = true
		}
		return out
	}()
)

// Request records one HTTP request. route must be a route pattern of the
// router or Unmatched; the method is labelled by Method.
func (m *Metrics) Request(route, method string, status int, took time.Duration) {
	labels := []string{route, Method(method), strconv.Itoa(status)}
	m.requests.WithLabelValues(labels...).Inc()
	m.latency.WithLabelValues(labels...).Observe(took.Seconds())
}

// Checkout records the outcome of one checkout request: "created" or an
// error code, in the test or live environment.
func (m *Metrics) Checkout(env, outcome string) {
	if !slices.Contains(environments, env) {
		env = Other
	}
	if !checkoutOutcomes[outcome] {
		outcome = Other
	}
	m.checkouts.WithLabelValues(env, outcome).Inc()
}

// Webhook records the outcome of one delivery attempt: delivered, retry or
// failed.
func (m *Metrics) Webhook(outcome string) {
	if !slices.Contains(webhookOutcomes, outcome) {
		outcome = Other
	}
	m.webhooks.WithLabelValues(outcome).Inc()
}

// TicketsIssued records n tickets issued in env.
func (m *Metrics) TicketsIssued(env string, n int) {
	if !slices.Contains(environments, env) {
		env = Other
	}
	m.issued.WithLabelValues(env).Add(float64(n))
}

// TicketEmail records the outcome of one ticket email attempt: sent,
// retry or failed.
func (m *Metrics) TicketEmail(outcome string) {
	if !slices.Contains(emailOutcomes, outcome) {
		outcome = Other
	}
	m.emails.WithLabelValues(outcome).Inc()
}

// Labels of boxoffice_check_ins_total.
const (
	admitted = "admitted"
	rejected = "rejected"
	noReason = "none"
)

// CheckInReasons are the reasons a scan is rejected: checkin.Reasons,
// which observe's test holds equal (observe imports no capability
// package).
var CheckInReasons = []string{"unknown_code", "test_ticket", "wrong_event", "wrong_date", "void", "already_checked_in", "not_inside"}

// CheckIn records one scan recorded at the door: its result and, for a
// rejection, its reason.
func (m *Metrics) CheckIn(result, reason string) {
	switch {
	case result == admitted:
		reason = noReason
	case result != rejected:
		result, reason = Other, Other
	case !slices.Contains(CheckInReasons, reason):
		reason = Other
	}
	m.checkIns.WithLabelValues(result, reason).Inc()
}

var queueDesc = prometheus.NewDesc("boxoffice_jobs", "Background jobs by state (River), read at scrape time.", []string{"state"}, nil)

// jobStates are River's job states, all reported so an empty queue reads 0.
var jobStates = []string{"available", "pending", "scheduled", "running", "retryable", "completed", "cancelled", "discarded"}

var reviewDesc = prometheus.NewDesc("boxoffice_orders_refund_review",
	"Orders whose payment is flagged for a refund review (confirmed after the order expired or failed, or for the wrong amount), "+
		"by environment, read from the database at scrape time: every instance reports the same number.",
	[]string{"environment"}, nil)

// countCollector reports, when scraped, a gauge per label value of desc's
// one label, read by read: a value read doesn't name counts 0, so every
// series exists from the start.
type countCollector struct {
	desc   *prometheus.Desc
	labels []string
	read   func(context.Context) (map[string]int, error)
}

func (c *countCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *countCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := c.read(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, label := range c.labels {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[label]), label)
	}
}
