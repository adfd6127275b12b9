// Package resolvers is the application layer both APIs call: the GraphQL
// resolvers gqlgen generated stubs for, and the very methods REST handlers
// adapt onto. Rules live in the capability packages; this package loads
// through the per-request dataloaders and converts to the API's types.
package resolvers

import (
	"time"

	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkin"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/live"
	"github.com/boxoffice/boxoffice/refunds"
	"github.com/boxoffice/boxoffice/webhook"
)

// Resolver is the dependency-injection root of the resolvers.
type Resolver struct {
	Catalog  *catalog.Service
	Checkout *checkout.Service
	// CheckIns decides and counts the door's scans.
	CheckIns *checkin.Service
	// Live fans changes out to subscriptions.
	Live *live.Hub
	// Refunds makes and reads refunds.
	Refunds *refunds.Service
	// Webhooks manages endpoints and reads and replays the event log.
	Webhooks *webhook.Service
	Now      func() time.Time
}
