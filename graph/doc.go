// Package graph is the GraphQL layer: the executable schema gqlgen
// generates from schema.graphql (generated.go, reproduced by
// `make generate`), and the hand-written HTTP handler: the GraphQL-over-HTTP
// transport that decides every status (transport.go), the WebSocket
// transport subscriptions run over (live.go), the error presenter and the
// query limits. Resolvers live in package resolvers.
package graph
