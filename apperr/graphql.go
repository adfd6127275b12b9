package apperr

// GraphQL's own codes: answered only at /graphql, so the REST contract and
// its OpenAPI document never list them.
const (
	// DocumentTooLarge refuses a GraphQL document over the limits read
	// before parsing (bytes, tokens, fields, aliases, fragments, depth).
	DocumentTooLarge Code = "document_too_large"
	// UnsupportedMediaType refuses a GraphQL POST whose body is not
	// application/json.
	UnsupportedMediaType Code = "unsupported_media_type"
	// SubscriptionLimitReached refuses a subscription, or a WebSocket
	// connection, beyond what one app may hold open on an instance.
	SubscriptionLimitReached Code = "subscription_limit_reached"
)
