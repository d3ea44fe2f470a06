package serve

import (
	"context"
	"errors"
)

// Request is one generation request as the engine runs it: token ids in,
// token ids out. Text, chat templates and stop strings belong to the HTTP
// layer, which cancels the request's context once a stop string appears.
type Request struct {
	// Prompt is the request's tokens; at least one.
	Prompt []int
	// MaxTokens bounds the new tokens; at least one.
	MaxTokens int
	// Temperature divides the logits before sampling; 0 is greedy (the
	// most likely token, the first of equal ones, with no draw).
	Temperature float32
	// TopK, when positive, keeps the TopK most likely tokens.
	TopK int
	// TopP, when in (0, 1), keeps the smallest set of most likely tokens
	// whose probabilities sum to at least TopP.
	TopP float32
	// Seed seeds the request's own generator, so that a sampled request's
	// tokens do not depend on the other requests in the batch.
	Seed uint64
	// StopIDs end the request when it produces one of them (the end of
	// sequence and end-of-turn tokens); that token is not sent.
	StopIDs []int
}

// FinishReason says why a request ended, in OpenAI's words.
type FinishReason string

// The reasons a request ends.
const (
	FinishStop      FinishReason = "stop"      // a StopIDs token (not sent)
	FinishLength    FinishReason = "length"    // MaxTokens reached, or the model's context
	FinishCancelled FinishReason = "cancelled" // the request's context was done
	FinishError     FinishReason = "error"     // Event.Err says what failed
)

// Event is one step of a request's answer. A request's channel carries
// one Event per new token (Token ≥ 0, Finish empty), then one final Event
// with Token −1 and Finish set, then it is closed.
type Event struct {
	Token  int
	Finish FinishReason
	Err    error // with FinishError: e.g. non-finite logits
}

// Stats is a snapshot of the engine's state and counters, for /metrics.
type Stats struct {
	Running int // sequences in the running batch
	Waiting int // admitted requests not yet running

	BlocksUsed  int // KV-cache blocks holding positions
	BlocksTotal int // KV-cache blocks in the budget

	PromptTokens    uint64 // prompt tokens prefilled since start
	GeneratedTokens uint64 // tokens generated since start
	Steps           uint64 // engine steps (one batched forward each)
	// BatchSizes[n] counts the steps that ran n sequences.
	BatchSizes []uint64
}

// Generator is what the HTTP layer needs of an engine; *Engine is one.
type Generator interface {
	// Submit queues r and returns the channel of its events. It returns
	// ErrFull when the waiting queue is full, ErrClosed after Shutdown
	// began, and a *RequestError when r can never run (an empty prompt,
	// a prompt and MaxTokens over the model's context or the whole KV
	// cache, bad sampling fields). Cancelling ctx ends the request with
	// FinishCancelled and frees its cache blocks at once.
	Submit(ctx context.Context, r Request) (<-chan Event, error)
	// Stats returns a snapshot of the engine's state.
	Stats() Stats
}

// ErrFull is returned by Submit when the engine's waiting queue is full
// (HTTP 429).
var ErrFull = errors.New("serve: the server is full; try again later")

// ErrClosed is returned by Submit once the engine is shutting down
// (HTTP 503).
var ErrClosed = errors.New("serve: the server is shutting down")

// RequestError is a request that can never run as given (HTTP 400).
type RequestError struct {
	Field string // the request field at fault, as the API names it
	Msg   string
}

func (e *RequestError) Error() string { return "serve: " + e.Field + ": " + e.Msg }
