// Package graph is the GraphQL layer: the executable schema gqlgen
// generates from schema.graphql (generated.go, reproduced by
// `make generate`), and the hand-written HTTP handler with its error
// presenter, query limits and the WebSocket transport subscriptions run
// over (live.go). Resolvers live in package resolvers.
package graph
