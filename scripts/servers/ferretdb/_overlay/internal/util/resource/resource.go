// REPLACED (backoffice): FerretDB v1.24.2's internal/util/resource/resource.go, laid over a copy
// of the module at build time (scripts/stack/servers.ts).
//
// Upstream tracks the lifetime of every iterator, cursor and connection for leak detection: each
// Track adds the object to a runtime/pprof profile, which records a stack trace, and sets a
// finalizer that panics if Untrack was never called. That is a development aid; profiled under
// load it took 13% of FerretDB's CPU (stack unwinding in pprof.(*Profile).Add), on every command.
// This version keeps the API and does nothing.

// Package resource provides utilities for tracking resource lifetimes (here: none).
package resource

// Token should be a field of a tracked object.
//
// The underlying type is not struct{} because (from the Go spec)
// "Two distinct zero-size variables may have the same address in memory",
// and they do.
type Token byte

// NewToken returns a new Token.
func NewToken() *Token {
	return new(Token)
}

// Track would track the lifetime of an object until Untrack is called on it.
func Track(obj any, token *Token) {}

// Untrack would stop tracking the lifetime of an object.
func Untrack(obj any, token *Token) {}
