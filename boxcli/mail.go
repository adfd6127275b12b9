package boxcli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/boxoffice/boxoffice/mail"
	"github.com/boxoffice/boxoffice/server"
	"github.com/urfave/cli/v3"
)

// mailListJSON is one message as `mail list --json` prints it.
type mailListJSON struct {
	ID             int64   `json:"id"`
	To             string  `json:"to"`
	Subject        string  `json:"subject"`
	CreatedAt      string  `json:"created_at"`
	OrderReference *string `json:"order_reference"`
}

// mailShowJSON is one message as `mail show --json` prints it.
type mailShowJSON struct {
	mailListJSON
	From string `json:"from"`
	// Headers are the main headers as sent, by name.
	Headers     map[string]string    `json:"headers"`
	Text        string               `json:"text"`
	HTML        string               `json:"html"`
	Attachments []mailAttachmentJSON `json:"attachments"`
}

type mailAttachmentJSON struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int    `json:"size"`
}

func mailCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "mail",
		Usage: "read the development mailbox: the mail the service sends while SMTP_URL is unset",
		Commands: []*cli.Command{
			{
				Name:  "list",
				Usage: "the development mailbox, newest first",
				Flags: []cli.Flag{limitFlag(20, mail.MaxRecent, "of the newest messages"), jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					n, err := limit(cmd, mail.MaxRecent)
					if err != nil {
						return err
					}
					ms, err := m.Mailbox.Recent(ctx, n)
					if err != nil {
						return err
					}
					out := make([]mailListJSON, len(ms))
					for i, msg := range ms {
						out[i] = mailListJSON{ID: msg.ID, To: msg.To, Subject: msg.Subject, CreatedAt: rfc3339(msg.CreatedAt),
							OrderReference: msg.OrderReference}
					}
					return output(cmd, stdout, map[string]any{"messages": out}, func(w io.Writer) {
						if len(out) == 0 {
							fmt.Fprintln(w, "the development mailbox is empty (mail goes there while SMTP_URL is unset)")
						}
						for _, msg := range out {
							fmt.Fprintf(w, "%-5d %s  %s  %q", msg.ID, msg.CreatedAt, msg.To, msg.Subject)
							if msg.OrderReference != nil {
								fmt.Fprintf(w, "  %s", *msg.OrderReference)
							}
							fmt.Fprintln(w)
						}
					})
				}),
			},
			{
				Name:      "show",
				Usage:     "one message of the development mailbox: its headers and text part (the HTML part is at /mail/ID on the admin listener)",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: withMigrated(stderr, func(ctx context.Context, cmd *cli.Command, m *server.Main) error {
					id, err := idArg(cmd, "mail message")
					if err != nil {
						return err
					}
					msg, err := m.Mailbox.Message(ctx, id)
					if err != nil {
						return err
					}
					out := mailShowJSON{
						mailListJSON: mailListJSON{ID: msg.ID, To: msg.To, Subject: msg.Subject, CreatedAt: rfc3339(msg.CreatedAt),
							OrderReference: msg.OrderReference},
						From: msg.From, Headers: map[string]string{}, Text: msg.TextBody, HTML: msg.HTMLBody,
						Attachments: []mailAttachmentJSON{},
					}
					for _, h := range msg.Headers {
						out.Headers[h.Name] = h.Value
					}
					for _, at := range msg.Attachments {
						out.Attachments = append(out.Attachments, mailAttachmentJSON{Name: at.Name, ContentType: at.ContentType, Size: len(at.Data)})
					}
					return output(cmd, stdout, out, func(w io.Writer) { printMailMessage(w, msg) })
				}),
			},
		},
	}
}

// printMailMessage prints a message as a mail client's "show source"
// would begin: its headers, a blank line, its text part; then its files.
func printMailMessage(w io.Writer, msg *mail.Stored) {
	for _, h := range msg.Headers {
		fmt.Fprintf(w, "%s: %s\n", h.Name, h.Value)
	}
	if msg.OrderReference != nil {
		fmt.Fprintf(w, "Order: %s\n", *msg.OrderReference)
	}
	fmt.Fprintln(w)
	if msg.TextBody == "" {
		fmt.Fprintf(w, "(no text part; the admin listener shows the HTML part at /mail/%d)\n", msg.ID)
	} else {
		fmt.Fprint(w, msg.TextBody)
		if !strings.HasSuffix(msg.TextBody, "\n") {
			fmt.Fprintln(w)
		}
	}
	if len(msg.Attachments) > 0 {
		fmt.Fprintf(w, "\nAttachments (download at /mail/%d/attachments/N on the admin listener):\n", msg.ID)
		for i, a := range msg.Attachments {
			fmt.Fprintf(w, "  %d. %s (%s, %d bytes)\n", i+1, a.Name, a.ContentType, len(a.Data))
		}
	}
}
