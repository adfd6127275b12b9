package resolvers

import (
	"context"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/checkout"
)

// caller is the authenticated app of the request.
// Errors: unauthorized when the request was not authenticated.
func caller(ctx context.Context) (checkout.Caller, error) {
	p, err := auth.FromContext(ctx)
	if err != nil {
		return checkout.Caller{}, err
	}
	return checkout.Caller{AppID: p.AppID, Environment: p.Environment}, nil
}
