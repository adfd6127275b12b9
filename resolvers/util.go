package resolvers

// deref returns *p, or the zero value for nil (an omitted GraphQL argument).
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
