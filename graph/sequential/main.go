// Command sequential rewrites gqlgen's generated executor so that a
// GraphQL operation runs in one goroutine: list elements are marshalled
// by graph.marshalSlice instead of graphql.MarshalSliceConcurrently, and
// the resolver fields of object types run inline instead of through
// FieldSet.Concurrently; scalar struct fields are marshalled without a
// field context of their own, objects are written without
// FieldSet's per-field allocations, and a query's answer is written into a
// buffer the transport lends. `make generate` runs it after gqlgen.
//
// gqlgen v0.17.95 has no supported way to do this: its only switch,
// Object.DisableConcurrency, is set for the Mutation root alone; the
// @concurrent directive of #3203 was reverted (#3287); exec.worker_limit
// bounds a list's goroutines with a semaphore but still starts one per
// element and leaves field goroutines alone.
//
// Each rewrite counts the places it must change by a looser mark than the
// pattern it rewrites them with, and the rewriter exits non-zero naming the
// rewrite when the two differ: a gqlgen upgrade that changes the shape of
// its output fails `make generate` instead of silently bringing the
// goroutines back. testdata/ holds gqlgen's output for a small schema and
// its rewrite (the golden test).
//
// Usage: go run ./graph/sequential graph/generated.go
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sequential graph/generated.go")
		os.Exit(2)
	}
	path := os.Args[1]
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, summary, err := rewrite(src)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sequential: %s: %v\n", path, err)
		os.Exit(1)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("sequential:", summary)
}
