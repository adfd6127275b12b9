package apperr

// Codes that are logged and counted but never sent: the REST contract and
// its OpenAPI document never list them.
const (
	// ClientClosedRequest is a request whose client left before the answer:
	// nobody reads it, and it is no failure of the server's (nginx's 499).
	ClientClosedRequest Code = "client_closed_request"
)

// StatusClientClosedRequest is the status logged and counted for a request
// whose client left before it was answered; it is never sent.
const StatusClientClosedRequest = 499
