// Command sequential rewrites gqlgen's generated executor so that a
// GraphQL operation runs in one goroutine: list elements are marshalled
// by graph.marshalSlice instead of graphql.MarshalSliceConcurrently, and
// the resolver fields of object types run inline instead of through
// FieldSet.Concurrently. `make generate` runs it after gqlgen; it fails
// when gqlgen's output no longer has the shapes it rewrites, so a gqlgen
// upgrade cannot silently bring the goroutines back.
//
// Usage: go run ./graph/sequential graph/generated.go
package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
)

var (
	sliceCall = []byte("graphql.MarshalSliceConcurrently(")
	// An object type's resolver field; root fields (rrm) keep their own
	// concurrency, deferred fields theirs.
	fieldCall = regexp.MustCompile(`(?m)^(\t+)out\.Concurrently\(i, func\(ctx context\.Context\) graphql\.Marshaler \{ return innerFunc\(ctx, out\) \}\)$`)
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
	slices := bytes.Count(src, sliceCall)
	fields := len(fieldCall.FindAll(src, -1))
	if slices == 0 || fields == 0 {
		fmt.Fprintf(os.Stderr, "sequential: %s has %d list marshallers and %d resolver fields to rewrite; gqlgen's output changed shape\n", path, slices, fields)
		os.Exit(1)
	}
	src = bytes.ReplaceAll(src, sliceCall, []byte("marshalSlice("))
	src = fieldCall.ReplaceAll(src, []byte("${1}out.Values[i] = innerFunc(ctx, out)"))
	if err := os.WriteFile(path, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("sequential: %d list marshallers and %d resolver fields run in the operation's goroutine\n", slices, fields)
}
