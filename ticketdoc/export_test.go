package ticketdoc

// The helpers that ticketdoc_test checks directly, beside what they print.
var (
	When   = when
	CP1252 = cp1252
)
