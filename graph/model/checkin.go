package model

import "github.com/boxoffice/boxoffice/checkin"

// CheckInInput is the checkIn mutation's input: the scan REST takes as
// the body of POST /api/v1/check-ins, and the key REST takes as the
// optional Idempotency-Key header. Every field is optional here so that a
// missing one is reported by validation, with its field path.
type CheckInInput struct {
	IdempotencyKey *string
	Code           *string
	EventdateID    *int
	// Direction is "entry" or "exit" (the CheckInDirection enum).
	Direction *string
	Gate      *string
	// ScannedAt is an RFC 3339 instant (DateTime).
	ScannedAt *string
}

// CheckInPayload is what checkIn answers when it ran: the scan, or why
// the request is not one.
type CheckInPayload struct {
	CheckIn    *checkin.View
	Replayed   bool
	UserErrors []*UserError
}
