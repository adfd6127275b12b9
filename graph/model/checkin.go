package model

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
	CheckIn    *CheckIn
	Replayed   bool
	UserErrors []*UserError
}

// CheckIn is one scan as decided and recorded (spec/fulfilment.md section
// 4's Check-in); the strings are the contract's ("admitted", "entry").
type CheckIn struct {
	ID        string
	Result    string
	Reason    *string
	Direction string
	Gate      *string
	ScannedAt string
	Ticket    *IssuedTicket
	Previous  *CheckInPrevious
}

// CheckInPrevious is the admission that stands, for already_checked_in.
type CheckInPrevious struct {
	ScannedAt string
	Gate      *string
}

// CheckInStats are a date's door numbers.
type CheckInStats struct {
	EventdateID   int
	Issued        int
	CheckedIn     int
	Inside        int
	RejectedScans int
}
