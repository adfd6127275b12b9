package model

import (
	"fmt"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// GraphQL's DateTime and enums are bound to plain Go strings through these
// marshal functions (gqlgen.yml), so the resource structs, and REST's JSON
// of them, keep the contract's strings: "2026-12-24T18:00:00Z", "pending".

// MarshalDateTime writes an RFC 3339 instant, already formatted by the
// catalog or checkout, as the DateTime scalar.
func MarshalDateTime(s string) graphql.Marshaler { return graphql.MarshalString(s) }

// UnmarshalDateTime reads a DateTime argument; it must be RFC 3339.
func UnmarshalDateTime(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("DateTime must be an RFC 3339 string, not %T", v)
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return "", fmt.Errorf("DateTime must be an RFC 3339 date-time such as 2026-12-24T18:00:00Z")
	}
	return s, nil
}

// enum maps the contract's lower-case values to GraphQL's UPPER_CASE enum
// values and back.
type enum struct {
	name   string
	values []string // lower case, as REST sends them
}

func (e enum) marshal(s string) graphql.Marshaler {
	return graphql.MarshalString(strings.ToUpper(s))
}

func (e enum) unmarshal(v any) (string, error) {
	s, ok := v.(string)
	if ok {
		for _, x := range e.values {
			if strings.ToUpper(x) == s {
				return x, nil
			}
		}
	}
	return "", fmt.Errorf("%v is not a valid %s", v, e.name)
}

var (
	orderStatus           = enum{"OrderStatus", []string{"pending", "paid", "completed", "failed", "expired", "unknown"}}
	checkoutSessionStatus = enum{"CheckoutSessionStatus", []string{"pending", "paid", "completed"}}
	environment           = enum{"Environment", []string{"test", "live"}}
	issuedTicketStatus    = enum{"IssuedTicketStatus", []string{"valid", "checked_in", "void"}}
	ticketsEmailStatus    = enum{"TicketsEmailStatus", []string{"not_sent", "queued", "sent", "failed"}}
	checkInDirection      = enum{"CheckInDirection", []string{"entry", "exit"}}
	checkInResult         = enum{"CheckInResult", []string{"admitted", "rejected"}}
	refundReason          = enum{"RefundReason", []string{"requested_by_customer", "event_cancelled", "duplicate", "fraudulent", "other"}}
	refundStatus          = enum{"RefundStatus", []string{"pending", "succeeded", "failed"}}
	orderRefundStatus     = enum{"OrderRefundStatus", []string{"none", "partial", "full"}}
	webhookEndpointStatus = enum{"WebhookEndpointStatus", []string{"enabled", "disabled"}}
	webhookDisabledReason = enum{"WebhookEndpointDisabledReason", []string{"failing", "manual"}}
	webhookEventStatus    = enum{"WebhookEventStatus", []string{"pending", "delivered", "failed"}}
	webhookDeliveryStatus = enum{"WebhookDeliveryStatus", []string{"pending", "delivered", "failed", "not_sent"}}
	checkInReason         = enum{"CheckInReason", []string{"unknown_code", "test_ticket", "wrong_event", "wrong_date",
		"void", "already_checked_in", "not_inside"}}
)

// MarshalCheckInDirection writes "entry" or "exit" as the
// CheckInDirection enum.
func MarshalCheckInDirection(s string) graphql.Marshaler { return checkInDirection.marshal(s) }

// UnmarshalCheckInDirection reads a CheckInDirection enum value.
func UnmarshalCheckInDirection(v any) (string, error) { return checkInDirection.unmarshal(v) }

// MarshalCheckInResult writes "admitted" or "rejected" as the
// CheckInResult enum.
func MarshalCheckInResult(s string) graphql.Marshaler { return checkInResult.marshal(s) }

// UnmarshalCheckInResult reads a CheckInResult enum value.
func UnmarshalCheckInResult(v any) (string, error) { return checkInResult.unmarshal(v) }

// MarshalCheckInReason writes a rejection's reason ("already_checked_in")
// as the CheckInReason enum (ALREADY_CHECKED_IN).
func MarshalCheckInReason(s string) graphql.Marshaler { return checkInReason.marshal(s) }

// UnmarshalCheckInReason reads a CheckInReason enum value.
func UnmarshalCheckInReason(v any) (string, error) { return checkInReason.unmarshal(v) }

// MarshalIssuedTicketStatus writes a ticket status ("checked_in") as the
// IssuedTicketStatus enum (CHECKED_IN).
func MarshalIssuedTicketStatus(s string) graphql.Marshaler { return issuedTicketStatus.marshal(s) }

// UnmarshalIssuedTicketStatus reads an IssuedTicketStatus enum value.
func UnmarshalIssuedTicketStatus(v any) (string, error) { return issuedTicketStatus.unmarshal(v) }

// MarshalTicketsEmailStatus writes a ticket email status as the
// TicketsEmailStatus enum.
func MarshalTicketsEmailStatus(s string) graphql.Marshaler { return ticketsEmailStatus.marshal(s) }

// UnmarshalTicketsEmailStatus reads a TicketsEmailStatus enum value.
func UnmarshalTicketsEmailStatus(v any) (string, error) { return ticketsEmailStatus.unmarshal(v) }

// MarshalOrderStatus writes an order status ("pending") as the OrderStatus
// enum (PENDING).
func MarshalOrderStatus(s string) graphql.Marshaler { return orderStatus.marshal(s) }

// UnmarshalOrderStatus reads an OrderStatus enum value as the contract's
// string.
func UnmarshalOrderStatus(v any) (string, error) { return orderStatus.unmarshal(v) }

// MarshalCheckoutSessionStatus writes a session status as the
// CheckoutSessionStatus enum.
func MarshalCheckoutSessionStatus(s string) graphql.Marshaler {
	return checkoutSessionStatus.marshal(s)
}

// UnmarshalCheckoutSessionStatus reads a CheckoutSessionStatus enum value.
func UnmarshalCheckoutSessionStatus(v any) (string, error) { return checkoutSessionStatus.unmarshal(v) }

// MarshalEnvironment writes "test" or "live" as the Environment enum.
func MarshalEnvironment(s string) graphql.Marshaler { return environment.marshal(s) }

// UnmarshalEnvironment reads an Environment enum value.
func UnmarshalEnvironment(v any) (string, error) { return environment.unmarshal(v) }

// MarshalRefundReason writes a refund's reason ("event_cancelled") as the
// RefundReason enum (EVENT_CANCELLED).
func MarshalRefundReason(s string) graphql.Marshaler { return refundReason.marshal(s) }

// UnmarshalRefundReason reads a RefundReason enum value.
func UnmarshalRefundReason(v any) (string, error) { return refundReason.unmarshal(v) }

// MarshalRefundStatus writes a refund's status as the RefundStatus enum.
func MarshalRefundStatus(s string) graphql.Marshaler { return refundStatus.marshal(s) }

// UnmarshalRefundStatus reads a RefundStatus enum value.
func UnmarshalRefundStatus(v any) (string, error) { return refundStatus.unmarshal(v) }

// MarshalOrderRefundStatus writes an order's refund_status as the
// OrderRefundStatus enum.
func MarshalOrderRefundStatus(s string) graphql.Marshaler { return orderRefundStatus.marshal(s) }

// UnmarshalOrderRefundStatus reads an OrderRefundStatus enum value.
func UnmarshalOrderRefundStatus(v any) (string, error) { return orderRefundStatus.unmarshal(v) }

// MarshalWebhookEndpointStatus writes an endpoint's status as the
// WebhookEndpointStatus enum.
func MarshalWebhookEndpointStatus(s string) graphql.Marshaler {
	return webhookEndpointStatus.marshal(s)
}

// UnmarshalWebhookEndpointStatus reads a WebhookEndpointStatus enum value.
func UnmarshalWebhookEndpointStatus(v any) (string, error) { return webhookEndpointStatus.unmarshal(v) }

// MarshalWebhookEndpointDisabledReason writes why an endpoint is disabled
// as the WebhookEndpointDisabledReason enum.
func MarshalWebhookEndpointDisabledReason(s string) graphql.Marshaler {
	return webhookDisabledReason.marshal(s)
}

// UnmarshalWebhookEndpointDisabledReason reads a
// WebhookEndpointDisabledReason enum value.
func UnmarshalWebhookEndpointDisabledReason(v any) (string, error) {
	return webhookDisabledReason.unmarshal(v)
}

// MarshalWebhookEventStatus writes an event's status as the
// WebhookEventStatus enum.
func MarshalWebhookEventStatus(s string) graphql.Marshaler { return webhookEventStatus.marshal(s) }

// UnmarshalWebhookEventStatus reads a WebhookEventStatus enum value.
func UnmarshalWebhookEventStatus(v any) (string, error) { return webhookEventStatus.unmarshal(v) }

// MarshalWebhookDeliveryStatus writes a delivery's status as the
// WebhookDeliveryStatus enum.
func MarshalWebhookDeliveryStatus(s string) graphql.Marshaler {
	return webhookDeliveryStatus.marshal(s)
}

// UnmarshalWebhookDeliveryStatus reads a WebhookDeliveryStatus enum value.
func UnmarshalWebhookDeliveryStatus(v any) (string, error) { return webhookDeliveryStatus.unmarshal(v) }
