package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/mail/mailtest"
	"github.com/boxoffice/boxoffice/store"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/boxoffice/boxoffice/testwait"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/stretchr/testify/require"
)

// withSMTP sends ticket emails to srv, retrying after 50 ms, doubling.
func withSMTP(srv *mailtest.Server) func(*Config) {
	return func(c *Config) {
		fastJobs(c)
		c.SMTPURL = srv.URL()
		c.MailRetryBase = 50 * time.Millisecond
	}
}

// liveFreeOrder checks out a live free cart of n tickets: completed at
// once, its email queued.
func (tb *testBundle) liveFreeOrder(t testing.TB, n int) string {
	t.Helper()
	res := tb.checkout(t, tb.liveKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", n))
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Raw)
	return res.data()["order_reference"].(string)
}

// emailStatus is the order's tickets_email.
func (tb *testBundle) emailStatus(t testing.TB, ref string) map[string]any {
	t.Helper()
	return tb.get(t, "/api/v1/orders/"+ref, tb.liveKey).data()["tickets_email"].(map[string]any)
}

// waitEmail waits until the order's ticket email is no longer queued and
// returns its status. The condition runs on the test's goroutine (a
// failed request inside it fails the test at once), and a stuck wait says
// where the email's job stands. Seconds on a quiet machine; the deadline
// is testwait's, minutes away, as retries wait on River's polls.
func (tb *testBundle) waitEmail(t testing.TB, ref string) map[string]any {
	t.Helper()
	start := time.Now()
	deadline := testwait.Deadline(t, 30*time.Second)
	for {
		got := tb.emailStatus(t, ref)
		if got["status"] != store.TicketsEmailQueued {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ticket email of %s is still queued after %s; its jobs: %s", ref, time.Since(start).Round(time.Second), tb.emailJobs(t, ref))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// emailJobs describes the ticket email jobs of an order as River holds
// them: state, attempts, errors.
func (tb *testBundle) emailJobs(t testing.TB, ref string) string {
	t.Helper()
	ctx := context.Background()
	o, err := store.OrderByReference(ctx, tb.db, ref)
	require.NoError(t, err)
	var client *river.Client[*sql.Tx]
	if tb.db.Postgres() {
		client, err = river.NewClient(riverdatabasesql.New(tb.db.DB.DB), &river.Config{})
	} else {
		client, err = river.NewClient(riversqlite.New(tb.db.DB.DB), &river.Config{})
	}
	require.NoError(t, err)
	res, err := client.JobList(ctx, river.NewJobListParams().Kinds("ticket_email").First(100))
	require.NoError(t, err)
	var out []string
	for _, j := range res.Jobs {
		var args struct {
			OrderID int64 `json:"order_id"`
		}
		if json.Unmarshal(j.EncodedArgs, &args) != nil || args.OrderID != o.ID {
			continue
		}
		line := fmt.Sprintf("job %d %s, attempt %d of %d, scheduled %s", j.ID, j.State, j.Attempt, j.MaxAttempts, j.ScheduledAt.Format(time.RFC3339Nano))
		for _, e := range j.Errors {
			line += fmt.Sprintf("; attempt %d at %s: %s", e.Attempt, e.At.Format(time.RFC3339Nano), e.Error)
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " | ")
}

// decoded reads a MIME part's body, undoing base64 (multipart.Reader
// already undoes quoted-printable).
func decoded(t testing.TB, encoding string, r io.Reader) []byte {
	t.Helper()
	if strings.EqualFold(encoding, "base64") {
		r = base64.NewDecoder(base64.StdEncoding, r)
	}
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}

// parts reads a received message: its headers, text and HTML parts and
// attachments by file name.
func parts(t testing.TB, raw []byte) (h netmail.Header, text, html string, files map[string][]byte) {
	t.Helper()
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	files = map[string][]byte{}
	var walk func(ct string, body io.Reader)
	walk = func(ct string, body io.Reader) {
		media, params, err := mime.ParseMediaType(ct)
		require.NoError(t, err)
		if strings.HasPrefix(media, "multipart/") {
			r := multipart.NewReader(body, params["boundary"])
			for {
				p, err := r.NextPart()
				if err == io.EOF {
					return
				}
				require.NoError(t, err)
				if name := p.FileName(); name != "" {
					files[name] = decoded(t, p.Header.Get("Content-Transfer-Encoding"), p)
					continue
				}
				walk(p.Header.Get("Content-Type"), bytes.NewReader(decoded(t, p.Header.Get("Content-Transfer-Encoding"), p)))
			}
		}
		b, err := io.ReadAll(body)
		require.NoError(t, err)
		switch media {
		case "text/plain":
			text = string(b)
		case "text/html":
			html = string(b)
		}
	}
	walk(msg.Header.Get("Content-Type"), msg.Body)
	return msg.Header, text, html, files
}

// TestTicketEmail is spec/fulfilment.md section 3 against a real SMTP
// server: a live order's buyer gets one email with the link and the PDF;
// a temporary refusal is retried, a permanent one gives up; a crash after
// the commit still sends it, and never twice.
func TestTicketEmail(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			// Each subtest has a server and a service of its own: a refusal
			// one sets up (RefuseNext) is one-shot state, and a retry of
			// another subtest's email must never take it.
			bundle := func(t *testing.T) (*mailtest.Server, *testBundle) {
				t.Parallel()
				srv := mailtest.Start(t, false)
				tb := setup(t, storetest.MustOpen(t, kind), withSMTP(srv))
				tb.startJobs(t)
				return srv, tb
			}

			t.Run("Delivered", func(t *testing.T) {
				srv, tb := bundle(t)
				before := len(srv.Messages())
				ref := tb.liveFreeOrder(t, 2)
				got := tb.waitEmail(t, ref)
				require.Equal(t, store.TicketsEmailSent, got["status"])
				require.NotNil(t, got["sent_at"])
				msgs := srv.Messages()
				require.Len(t, msgs, before+1, "one email")
				m := msgs[len(msgs)-1]
				require.Equal(t, []string{"ama@example.com"}, m.To)
				h, text, html, files := parts(t, m.Data)
				subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
				require.NoError(t, err)
				require.Contains(t, subject, "Chale Wote")
				order := tb.get(t, "/api/v1/orders/"+ref, tb.liveKey).data()
				link := order["tickets_url"].(string)
				require.Contains(t, text, link)
				require.Contains(t, html, `href="`+link+`"`)
				require.Len(t, files, 1)
				for name, pdf := range files {
					require.Equal(t, "tickets-"+ref+".pdf", name)
					require.True(t, bytes.HasPrefix(pdf, []byte("%PDF-")))
				}
				for _, tk := range order["tickets"].([]any) {
					require.NotContains(t, text+html, tk.(map[string]any)["code"], "codes travel in the PDF and behind the link, not in the text")
				}
			})

			t.Run("TemporaryThenDelivered", func(t *testing.T) {
				srv, tb := bundle(t)
				before := len(srv.Messages())
				srv.RefuseNext("mail", 451, 2)
				ref := tb.liveFreeOrder(t, 1)
				require.Equal(t, store.TicketsEmailSent, tb.waitEmail(t, ref)["status"])
				require.Len(t, srv.Messages(), before+1, "one email, after two refusals")
			})

			t.Run("PermanentGivesUp", func(t *testing.T) {
				srv, tb := bundle(t)
				before := len(srv.Messages())
				srv.RefuseNext("rcpt", 550, 1)
				ref := tb.liveFreeOrder(t, 1)
				got := tb.waitEmail(t, ref)
				require.Equal(t, store.TicketsEmailFailed, got["status"])
				require.Nil(t, got["sent_at"])
				require.Len(t, srv.Messages(), before, "nothing was sent")
			})

			t.Run("TestOrdersNeverEmail", func(t *testing.T) {
				_, tb := bundle(t)
				res := tb.checkout(t, tb.testKey, newIdemKey(), tb.cartFor("DEMO-CHALEWOTE", "DEMO-CHALEWOTE-1", "DEMO-CHALEWOTE-1-GA", 1))
				require.Equal(t, http.StatusCreated, res.Status)
				o := tb.get(t, "/api/v1/orders/"+res.data()["order_reference"].(string), tb.testKey).data()
				require.Equal(t, map[string]any{"status": "not_sent", "sent_at": nil}, o["tickets_email"])
			})
		})
	}
}

// TestTicketEmailSurvivesCrash: the order commits with its email job, and
// the instance dies before sending. Another instance on the same database
// sends it, once; running the job again sends nothing more.
func TestTicketEmailSurvivesCrash(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := mailtest.Start(t, false)
			rawURL := storetest.MigratedURL(t, kind)
			crashed := setup(t, storetest.OpenURL(t, rawURL), withSMTP(srv)) // never works its jobs
			ref := crashed.liveFreeOrder(t, 2)
			require.Equal(t, store.TicketsEmailQueued, crashed.emailStatus(t, ref)["status"])
			require.Empty(t, srv.Messages())

			other := crashed.peer(t, rawURL)
			other.startJobs(t)
			require.Equal(t, store.TicketsEmailSent, other.waitEmail(t, ref)["status"])
			require.Len(t, srv.Messages(), 1)

			// The job run again (a redelivered job, a second worker): the
			// order's email is no longer queued, so nothing is sent.
			o, err := store.OrderByReference(context.Background(), other.db, ref)
			require.NoError(t, err)
			require.NoError(t, other.m.Tickets.SendEmail(context.Background(), o.ID, false))
			require.Len(t, srv.Messages(), 1, "no second email for one order")
		})
	}
}
