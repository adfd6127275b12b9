package boxcli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/store/storetest"
	"github.com/stretchr/testify/require"
)

func TestCLIMail(t *testing.T) {
	t.Parallel()
	for _, kind := range storetest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.MigratedURL(t, kind)
			db := storetest.OpenURL(t, dbURL)
			ctx := context.Background()

			t.Run("OKEmpty", func(t *testing.T) {
				out, err := runCLI(t, dbURL, "mail", "list")
				require.NoError(t, err)
				require.Equal(t, "the development mailbox is empty (mail goes there while SMTP_URL is unset)\n", out)
				require.Equal(t, map[string]any{"messages": []any{}}, mustJSON(t, dbURL, "mail", "list", "--json"))
			})

			order := storetest.MustOrder(t, db, storetest.MustApp(t, db), storetest.MustCatalog(t, db, nil), "ord_cli_mail")
			at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
			send := func(m mail.Message, at time.Time) {
				t.Helper()
				require.NoError(t, (&mail.Mailbox{DB: db, Now: func() time.Time { return at }}).Send(ctx, m))
			}
			send(mail.Message{From: mail.DefaultFrom, To: "ama@example.com", Subject: "Your tickets for Highlife Night",
				Text: "Hello Ama,\n\nYour tickets: https://boxoffice.example/tickets/tok_1", HTML: "<p>Hello Ama</p>", OrderID: order.ID,
				Attachments: []mail.Attachment{{Name: "tickets-ord_cli_mail.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.7 ticket")}},
			}, at)
			send(mail.Message{From: mail.DefaultFrom, To: "kofi@example.com", Subject: "Only HTML \"quoted\"", HTML: "<p>Hi</p>"}, at.Add(time.Minute))

			t.Run("OKList", func(t *testing.T) {
				got := mustJSON(t, dbURL, "mail", "list", "--json")
				require.Equal(t, map[string]any{"messages": []any{
					map[string]any{"id": 2.0, "to": "kofi@example.com", "subject": "Only HTML \"quoted\"", "created_at": "2026-12-24T18:01:00Z", "order_reference": nil},
					map[string]any{"id": 1.0, "to": "ama@example.com", "subject": "Your tickets for Highlife Night", "created_at": "2026-12-24T18:00:00Z", "order_reference": "ord_cli_mail"},
				}}, got, "newest first")
				got = mustJSON(t, dbURL, "mail", "list", "--limit", "1", "--json")
				require.Len(t, got["messages"], 1)
				out, err := runCLI(t, dbURL, "mail", "list")
				require.NoError(t, err)
				require.Equal(t, "2     2026-12-24T18:01:00Z  kofi@example.com  \"Only HTML \\\"quoted\\\"\"\n"+
					"1     2026-12-24T18:00:00Z  ama@example.com  \"Your tickets for Highlife Night\"  ord_cli_mail\n", out)
			})

			t.Run("OKShow", func(t *testing.T) {
				out, err := runCLI(t, dbURL, "mail", "show", "1")
				require.NoError(t, err)
				lines := strings.Split(out, "\n")
				require.Equal(t, "Date: Thu, 24 Dec 2026 18:00:00 +0000", lines[0])
				require.Equal(t, []string{`From: "Boxoffice" <tickets@localhost>`, "To: <ama@example.com>", "Subject: Your tickets for Highlife Night"}, lines[1:4])
				require.Regexp(t, `^Message-Id: <[a-z2-7]{26}@localhost>$`, lines[4])
				require.Equal(t, "Order: ord_cli_mail\n\nHello Ama,\n\nYour tickets: https://boxoffice.example/tickets/tok_1\n\n"+
					"Attachments (download at /mail/1/attachments/N on the admin listener):\n"+
					"  1. tickets-ord_cli_mail.pdf (application/pdf, 15 bytes)\n", strings.Join(lines[5:], "\n"))

				out, err = runCLI(t, dbURL, "mail", "show", "2")
				require.NoError(t, err)
				require.True(t, strings.HasSuffix(out, "\n\n(no text part; the admin listener shows the HTML part at /mail/2)\n"), out)

				got := mustJSON(t, dbURL, "mail", "show", "1", "--json")
				require.ElementsMatch(t, []string{"id", "to", "subject", "created_at", "order_reference", "from", "headers", "text", "html", "attachments"}, keys(got))
				require.Equal(t, "ord_cli_mail", got["order_reference"])
				require.Equal(t, "Hello Ama,\n\nYour tickets: https://boxoffice.example/tickets/tok_1", got["text"])
				require.Equal(t, "<p>Hello Ama</p>", got["html"])
				require.Equal(t, "Your tickets for Highlife Night", got["headers"].(map[string]any)["Subject"])
				require.Equal(t, []any{map[string]any{"name": "tickets-ord_cli_mail.pdf", "content_type": "application/pdf", "size": 15.0}}, got["attachments"])
			})

			t.Run("Err", func(t *testing.T) {
				tests := []struct {
					name string
					args []string
					want string
				}{
					{"ErrNotFound", []string{"mail", "show", "99"}, "mail message 99 does not exist"},
					{"ErrBadID", []string{"mail", "show", "abc"}, `mail message "abc" is not a positive integer id`},
					{"ErrNoID", []string{"mail", "show"}, "mail show needs 1 argument(s): ID"},
					{"ErrLimit", []string{"mail", "list", "--limit", "0"}, "--limit 0 is not between 1 and 500"},
					{"ErrStrayArgument", []string{"mail", "list", "1"}, `mail list takes no arguments, but was given "1"`},
				}
				for _, tt := range tests {
					t.Run(tt.name, func(t *testing.T) {
						stdout, stderr, err := runMain(t, dbURL, tt.args...)
						require.Error(t, err)
						require.Empty(t, stdout)
						require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
						require.Contains(t, stderr, tt.want)
						stdout, _, err = runMain(t, dbURL, append(tt.args, "--json")...)
						require.Error(t, err)
						var v map[string]any
						require.NoError(t, json.Unmarshal([]byte(stdout), &v), "%q", stdout)
						require.Contains(t, v["error"], tt.want)
					})
				}
				t.Run("ErrNoCommand", func(t *testing.T) {
					_, stderr, err := runMain(t, dbURL, "mail")
					require.Error(t, err)
					require.Equal(t, "boxoffice: mail needs a command: list, show\n", stderr)
				})
			})
		})
	}
}
