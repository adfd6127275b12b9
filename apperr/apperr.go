// Package apperr carries the spec's error codes, their HTTP statuses and
// validation details. It is the one error vocabulary every layer speaks:
// services return *Error, REST and GraphQL render it, and anything that is not
// an *Error reads as internal_error so internals never reach a client.
package apperr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
)

// Code is one of the error codes of the spec's section 7.
type Code string

// The spec's error codes.
const (
	MissingIdempotencyKey     Code = "missing_idempotency_key"
	InvalidIdempotencyKey     Code = "invalid_idempotency_key"
	MissingAPIKey             Code = "missing_api_key"
	InvalidAPIKey             Code = "invalid_api_key"
	Unauthorized              Code = "unauthorized"
	AppSuspended              Code = "app_suspended"
	AccountDisabled           Code = "account_disabled"
	AccountPendingApproval    Code = "account_pending_approval"
	EnvironmentMismatch       Code = "environment_mismatch"
	ScannerKeyNotAllowed      Code = "scanner_key_not_allowed"
	ScannerKeyRequired        Code = "scanner_key_required"
	EventNotAvailable         Code = "event_not_available"
	EventNotFound             Code = "event_not_found"
	EventDateNotFound         Code = "event_date_not_found"
	NotFound                  Code = "not_found"
	OrderNotFound             Code = "order_not_found"
	MethodNotAllowed          Code = "method_not_allowed"
	IdempotencyConflict       Code = "idempotency_conflict"
	IdempotencyInProgress     Code = "idempotency_in_progress"
	SoldOut                   Code = "sold_out"
	OrderNotPending           Code = "order_not_pending"
	ValidationFailed          Code = "validation_failed"
	EventDateNotAvailable     Code = "event_date_not_available"
	EventDateCancelled        Code = "event_date_cancelled"
	TicketNotFound            Code = "ticket_not_found"
	TicketNotOnSale           Code = "ticket_not_on_sale"
	TicketQuantityExceeded    Code = "ticket_quantity_exceeded"
	InvalidRedirectURL        Code = "invalid_redirect_url"
	RedirectAllowlistRequired Code = "redirect_allowlist_required"
	RedirectDomainNotAllowed  Code = "redirect_domain_not_allowed"
	MetadataTooLarge          Code = "metadata_too_large"
	QuantityExceedsLimit      Code = "quantity_exceeds_limit"
	RateLimitExceeded         Code = "rate_limit_exceeded"
	FreeOrderLimitReached     Code = "free_order_limit_reached"
	CheckoutUnavailable       Code = "checkout_unavailable"
	FreeCheckoutUnavailable   Code = "free_checkout_unavailable"
	PaymentGatewayUnavailable Code = "payment_gateway_unavailable"
	Internal                  Code = "internal_error"
	OrderNotRefundable        Code = "order_not_refundable"
	TicketAlreadyVoid         Code = "ticket_already_void"
	TicketCheckedIn           Code = "ticket_checked_in"
	RefundExceedsBalance      Code = "refund_exceeds_balance"
	RefundNotFound            Code = "refund_not_found"
	WebhookEndpointNotFound   Code = "webhook_endpoint_not_found"
	WebhookEventNotFound      Code = "webhook_event_not_found"
)

// statuses is the only code → HTTP status table of the service.
var statuses = map[Code]int{
	MissingIdempotencyKey:     http.StatusBadRequest,
	InvalidIdempotencyKey:     http.StatusBadRequest,
	MissingAPIKey:             http.StatusUnauthorized,
	InvalidAPIKey:             http.StatusUnauthorized,
	Unauthorized:              http.StatusUnauthorized,
	AppSuspended:              http.StatusForbidden,
	AccountDisabled:           http.StatusForbidden,
	AccountPendingApproval:    http.StatusForbidden,
	EnvironmentMismatch:       http.StatusForbidden,
	ScannerKeyNotAllowed:      http.StatusForbidden,
	ScannerKeyRequired:        http.StatusForbidden,
	EventNotAvailable:         http.StatusForbidden,
	EventNotFound:             http.StatusNotFound,
	EventDateNotFound:         http.StatusNotFound,
	NotFound:                  http.StatusNotFound,
	OrderNotFound:             http.StatusNotFound,
	MethodNotAllowed:          http.StatusMethodNotAllowed,
	IdempotencyConflict:       http.StatusConflict,
	IdempotencyInProgress:     http.StatusConflict,
	SoldOut:                   http.StatusConflict,
	OrderNotPending:           http.StatusConflict,
	ValidationFailed:          http.StatusUnprocessableEntity,
	EventDateNotAvailable:     http.StatusUnprocessableEntity,
	EventDateCancelled:        http.StatusConflict,
	TicketNotFound:            http.StatusUnprocessableEntity,
	TicketNotOnSale:           http.StatusUnprocessableEntity,
	TicketQuantityExceeded:    http.StatusUnprocessableEntity,
	InvalidRedirectURL:        http.StatusUnprocessableEntity,
	RedirectAllowlistRequired: http.StatusUnprocessableEntity,
	RedirectDomainNotAllowed:  http.StatusUnprocessableEntity,
	MetadataTooLarge:          http.StatusUnprocessableEntity,
	QuantityExceedsLimit:      http.StatusUnprocessableEntity,
	RateLimitExceeded:         http.StatusTooManyRequests,
	FreeOrderLimitReached:     http.StatusTooManyRequests,
	CheckoutUnavailable:       http.StatusServiceUnavailable,
	FreeCheckoutUnavailable:   http.StatusServiceUnavailable,
	PaymentGatewayUnavailable: http.StatusServiceUnavailable,
	Internal:                  http.StatusInternalServerError,
	ClientClosedRequest:       StatusClientClosedRequest,
	DocumentTooLarge:          http.StatusUnprocessableEntity,
	UnsupportedMediaType:      http.StatusUnsupportedMediaType,
	SubscriptionLimitReached:  http.StatusTooManyRequests,
	OrderNotRefundable:        http.StatusConflict,
	TicketAlreadyVoid:         http.StatusConflict,
	TicketCheckedIn:           http.StatusConflict,
	RefundExceedsBalance:      http.StatusConflict,
	RefundNotFound:            http.StatusNotFound,
	WebhookEndpointNotFound:   http.StatusNotFound,
	WebhookEventNotFound:      http.StatusNotFound,
}

// refundStatuses are the codes whose status differs for a refund: a ticket
// a refund names that is not the order's is not found (404), where a
// cart's unknown ticket is a field of an unprocessable body (422).
var refundStatuses = map[Code]int{
	TicketNotFound: http.StatusNotFound,
}

// Codes returns every code, sorted: the values a label naming a code can
// take.
func Codes() []Code {
	out := make([]Code, 0, len(statuses))
	for c := range statuses {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Status returns the HTTP status of a code; unknown codes are 500.
func (c Code) Status() int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Transient reports whether a refusal says "not now" rather than "not
// this": a limit (429) or a failure of the service (5xx), after which the
// same request may succeed unchanged.
func (c Code) Transient() bool {
	s := c.Status()
	return s == http.StatusTooManyRequests || s >= http.StatusInternalServerError
}

// Details maps a field path such as "items.0.quantity" to its messages.
type Details map[string][]string

// Add appends a message for a field path.
func (d Details) Add(field, msg string) { d[field] = append(d[field], msg) }

// Fields returns the field paths in sorted order, for stable messages.
func (d Details) Fields() []string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Error is an error a client may see: a spec code, a human message and, for
// validation errors, per-field details.
type Error struct {
	Code    Code
	Message string
	Details Details
	// RetryAfter, in seconds, tells the client when to try again (429 and
	// idempotency_in_progress); zero means no Retry-After header.
	RetryAfter int
	// Cause is the internal error behind a 5xx answer: logged, never sent.
	Cause error
	// Refund marks an error of a refund request, whose codes take the
	// refund's statuses (ForRefund).
	Refund bool
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return string(e.Code) + ": " + e.Message + ": " + e.Cause.Error()
	}
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Unavailable wraps an infrastructure failure as a 503 of code, keeping the
// cause for the logs.
func Unavailable(code Code, cause error, format string, args ...any) *Error {
	e := New(code, format, args...)
	e.Cause = cause
	return e
}

// Status returns the HTTP status of the error's code, as a refund's
// error when it is one.
func (e *Error) Status() int {
	if s, ok := refundStatuses[e.Code]; ok && e.Refund {
		return s
	}
	return e.Code.Status()
}

// ForRefund marks e as an error of a refund request and returns it.
func ForRefund(e *Error) *Error {
	e.Refund = true
	return e
}

// New returns an *Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Validation returns a validation_failed error carrying details, or nil when
// details is empty.
func Validation(d Details) error {
	if len(d) == 0 {
		return nil
	}
	return &Error{Code: ValidationFailed, Message: "The request payload failed validation.", Details: d}
}

// Invalid returns a validation_failed error about one input of an operator
// or portal action: Details carry the message under the input's name for a
// form, and Message spells the input as the CLI's flag ("--email …").
func Invalid(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: ValidationFailed, Message: "--" + field + " " + msg, Details: Details{field: {msg}}}
}

// From returns err as an *Error; an error that is not one becomes
// internal_error with a message that reveals nothing, except a cancelled
// context, which is the client leaving: client_closed_request.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Code: ClientClosedRequest, Message: "The client closed the request."}
	}
	return &Error{Code: Internal, Message: "Internal error."}
}

// CodeOf returns the code of err, or internal_error.
func CodeOf(err error) Code { return From(err).Code }
