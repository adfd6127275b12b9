package resolvers

import (
	"context"

	"github.com/boxoffice/boxoffice/auth"
	"github.com/boxoffice/boxoffice/catalog"
	"github.com/boxoffice/boxoffice/checkout"
	"github.com/boxoffice/boxoffice/graph/model"
	"github.com/boxoffice/boxoffice/store"
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

// toOrder converts a stored order into the API's Order.
func toOrder(o *store.Order) *model.Order {
	created, updated := catalog.FormatStamp(o.CreatedAt), catalog.FormatStamp(o.UpdatedAt)
	currency := o.Currency
	return &model.Order{
		Reference: o.Reference, Status: o.Status, StatusCode: checkout.StatusCode(o.Status),
		Currency: &currency, CreatedAt: &created, UpdatedAt: &updated,
		PaymentReference: o.PaymentReference, Environment: o.Environment,
	}
}
