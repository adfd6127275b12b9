package checkin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/store"
)

// Bounds of a manifest read (spec/offline-door.md section 1).
const (
	MaxManifest     = 1000
	DefaultManifest = 1000
)

// ManifestEntry is a ticket as a scanner holds it to decide offline:
// never its code, nothing that leads to its buyer.
type ManifestEntry struct {
	TicketID string `json:"ticket_id"`
	// CodeHash is the lower-case hex SHA-256 of the ticket's code (upper
	// case, no spaces), as the door hashes what it reads.
	CodeHash       string `json:"code_hash"`
	TicketName     string `json:"ticket_name"`
	Position       int64  `json:"position"`
	TicketsInOrder int64  `json:"tickets_in_order"`
	// Status is valid, checked_in or void, as the ticket's.
	Status string `json:"status"`
	Inside bool   `json:"inside"`
}

// ManifestRequest is a read of a date's manifest as the scanner asked
// for it. Since "" reads from the first change; Limit nil is the default.
type ManifestRequest struct {
	EventdateID int64
	Since       string
	Limit       *int
}

// ManifestPage is one read of a date's manifest.
type ManifestPage struct {
	// Entries are the tickets changed after Since, in the order of their
	// latest change, each as it is now.
	Entries []ManifestEntry
	// NextSince is what the scanner passes as since next time: the place
	// of the last ticket returned, or the since it sent when none was.
	NextSince string
	// HasMore reports that more changes can be read at once.
	HasMore bool
}

// CodeHash is the manifest's code_hash of a code as a scan reads it.
func CodeHash(code string) string {
	sum := sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(code))))
	return hex.EncodeToString(sum[:])
}

// Manifest reads the tickets of a date of sc's event, in sc's
// environment, changed after r.Since: issued, voided (a refund or a
// cancelled date included), checked in or out on any device, each once
// per read as it is now. The promise is the changes feed's: a scanner
// that starts without since and always passes back next_since sees every
// change of every ticket of the date at least once, whatever order
// concurrent transactions commit in (store.ManifestAfter says how). A
// change is listed as soon as it is committed; while a transaction older
// than it still runs somewhere, the read after the scanner caught up
// lists it again.
// Errors: validation_failed (details keyed limit and since),
// event_date_not_found.
func (s *Service) Manifest(ctx context.Context, sc Scanner, r ManifestRequest) (*ManifestPage, error) {
	d := apperr.Details{}
	limit := DefaultManifest
	if r.Limit != nil {
		if *r.Limit < 1 || *r.Limit > MaxManifest {
			d.Add("limit", "must be between 1 and 1000")
		} else {
			limit = *r.Limit
		}
	}
	var tok manifestToken
	if r.Since != "" {
		var ok bool
		if tok, ok = decodeManifestToken(r.Since, r.EventdateID); !ok {
			d.Add("since", "is not a token this date's manifest handed out")
		}
	}
	if err := apperr.Validation(d); err != nil {
		return nil, err
	}
	if err := s.checkDate(ctx, sc, r.EventdateID); err != nil {
		return nil, err
	}
	rows, more, err := store.ManifestAfter(ctx, s.DB, sc.Environment, r.EventdateID, tok.read, limit)
	if err != nil {
		return nil, err
	}
	p := &ManifestPage{Entries: make([]ManifestEntry, len(rows)), HasMore: more}
	for i, t := range rows {
		p.Entries[i] = ManifestEntry{TicketID: t.PublicID, CodeHash: CodeHash(t.Code), TicketName: t.TicketName,
			Position: t.Position, TicketsInOrder: t.TicketsInOrder, Status: t.Status, Inside: t.Inside}
		// Final changes come first in the log's order.
		if t.Final {
			tok.safe = t.Cursor
		}
		tok.read = t.Cursor
	}
	if !more {
		// Caught up: the next read starts again after the last final
		// change, so a change a running transaction commits later, in
		// a place already read past, is listed too; changes listed that
		// were not final yet are listed again (at least once).
		tok.read = tok.safe
	}
	p.NextSince = encodeManifestToken(r.EventdateID, tok)
	return p, nil
}

// manifestToken is a scanner's place in a date's manifest: read is where
// the next page starts, safe the last change that was final when read
// (store.ManifestAfter); read is past safe only while a scanner pages
// through changes that were not final yet.
type manifestToken struct {
	safe, read store.ManifestCursor
}

// A since token is base64url of "m1|DATE|TX|SEQ|TX|SEQ" (safe, then
// read) and the first 4 bytes of
// its SHA-256, as the order changes feed's tokens are: a token cut,
// edited or handed out for another date is refused, not read from
// somewhere else. The checksum is not a signature: a forged token only
// moves a scanner within its own date's manifest.
var manifestEncoding = base64.RawURLEncoding.Strict()

const manifestTokenKind = "m1"

func encodeManifestToken(dateID int64, t manifestToken) string {
	raw := []byte(manifestTokenKind + "|" + strconv.FormatInt(dateID, 10) + "|" +
		strconv.FormatUint(t.safe.Tx, 10) + "|" + strconv.FormatInt(t.safe.Seq, 10) + "|" +
		strconv.FormatUint(t.read.Tx, 10) + "|" + strconv.FormatInt(t.read.Seq, 10))
	sum := sha256.Sum256(raw)
	return manifestEncoding.EncodeToString(append(raw, sum[:4]...))
}

func decodeManifestToken(s string, dateID int64) (manifestToken, bool) {
	if len(s) > 200 {
		return manifestToken{}, false
	}
	b, err := manifestEncoding.DecodeString(s)
	if err != nil || len(b) < 5 {
		return manifestToken{}, false
	}
	raw, sum := b[:len(b)-4], b[len(b)-4:]
	if want := sha256.Sum256(raw); !bytes.Equal(sum, want[:4]) {
		return manifestToken{}, false
	}
	f := strings.Split(string(raw), "|")
	if len(f) != 6 || f[0] != manifestTokenKind || f[1] != strconv.FormatInt(dateID, 10) {
		return manifestToken{}, false
	}
	var t manifestToken
	for i, c := range []*store.ManifestCursor{&t.safe, &t.read} {
		tx, err1 := strconv.ParseUint(f[2+2*i], 10, 64)
		seq, err2 := strconv.ParseInt(f[3+2*i], 10, 64)
		if err1 != nil || err2 != nil || seq < 0 {
			return manifestToken{}, false
		}
		*c = store.ManifestCursor{Tx: tx, Seq: seq}
	}
	return t, true
}
