package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// MailMessage is one message of the development mailbox: what the service
// would have sent, kept where the admin listener and the CLI show it.
type MailMessage struct {
	bun.BaseModel `bun:"table:mail_messages,alias:mm"`

	ID int64 `bun:"id,pk,autoincrement"`
	// OrderID is the order the message is about; 0 for none.
	OrderID int64  `bun:"order_id,nullzero"`
	From    string `bun:"mail_from,notnull"`
	To      string `bun:"mail_to,notnull"`
	Subject string `bun:"subject,notnull"`
	// TextBody and HTMLBody are the message's parts, for display; Raw is
	// the whole MIME message as SMTP would have carried it.
	TextBody  string    `bun:"text_body,notnull"`
	HTMLBody  string    `bun:"html_body,notnull"`
	Raw       string    `bun:"raw,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	// OrderReference is the reference of OrderID's order, read with the
	// message; nil for none.
	OrderReference *string `bun:"order_reference,scanonly"`
}

// InsertMailMessage stores a message and sets its id.
func InsertMailMessage(ctx context.Context, db bun.IDB, m *MailMessage) error {
	_, err := db.NewInsert().Model(m).Returning("id").Exec(ctx)
	return translate(err)
}

// RecentMailMessages returns the newest limit messages, newest first,
// without their bodies (a list shows who, what and when).
func RecentMailMessages(ctx context.Context, db bun.IDB, limit int) ([]MailMessage, error) {
	ms := []MailMessage{}
	err := selectMailMessages(db, &ms).
		Column("mm.id", "mm.order_id", "mm.mail_from", "mm.mail_to", "mm.subject", "mm.created_at").
		Order("mm.created_at DESC", "mm.id DESC").Limit(int64(limit)).Scan(ctx)
	for i := range ms {
		ms[i].CreatedAt = ms[i].CreatedAt.UTC()
	}
	return ms, translate(err)
}

// MailMessageByID returns one whole message. Errors: ErrNotFound.
func MailMessageByID(ctx context.Context, db bun.IDB, id int64) (*MailMessage, error) {
	m := new(MailMessage)
	err := selectMailMessages(db, m).Column("mm.*").Where("mm.id = ?", id).Scan(ctx)
	m.CreatedAt = m.CreatedAt.UTC()
	return m, translate(err)
}

// selectMailMessages selects messages into model with their order's
// reference.
func selectMailMessages(db bun.IDB, model any) *bun.SelectQuery {
	return db.NewSelect().Model(model).ColumnExpr("o.reference AS order_reference").
		Join("LEFT JOIN orders AS o ON o.id = mm.order_id")
}
