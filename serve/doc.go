// Package serve runs a causal language model for many clients at once:
// an engine that batches the running requests' decode steps together
// (continuous batching) over a paged key/value cache, and the HTTP
// handlers of OpenAI's API in front of it. cmd/serve is the command that
// starts it; a Go program can mount the same handler in its own server.
//
// The engine's contract, which the HTTP layer relies on, is in this file
// and request.go: a Request goes in through Submit, and its tokens come
// back one Event at a time on a channel that the engine closes after the
// request's final event.
package serve
