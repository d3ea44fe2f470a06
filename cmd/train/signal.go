package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// signalError is the cause of a context cancelled by a signal.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string {
	if e.sig == syscall.SIGINT {
		return "interrupted (SIGINT)"
	}
	return "terminated (SIGTERM)"
}

// Is makes errors.Is(err, context.Canceled) true, as for any cancelled
// context.
func (e *signalError) Is(target error) bool { return target == context.Canceled }

// exitStatus returns the status a shell reports for a process killed by
// the signal: 128 + its number (130 for SIGINT, 143 for SIGTERM).
func (e *signalError) exitStatus() int { return 128 + int(e.sig) }

// notifySignals returns a context cancelled, with a *signalError as its
// cause, by the first SIGINT or SIGTERM. From then on the two signals have
// their default effect again, so a second Ctrl-C ends the process at once
// (without saving). stop releases the handler.
func notifySignals(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Reset(syscall.SIGINT, syscall.SIGTERM)
			cancel(&signalError{sig: s.(syscall.Signal)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// caughtSignal returns the signal that cancelled ctx, or nil.
func caughtSignal(ctx context.Context) *signalError {
	var se *signalError
	if errors.As(context.Cause(ctx), &se) {
		return se
	}
	return nil
}

// interrupted returns the error of work cut short by ctx: what was
// stopped and why.
func interrupted(ctx context.Context, what string) error {
	return fmt.Errorf("%s: %w", what, context.Cause(ctx))
}

// stoppable returns what read returns, or, as soon as ctx is cancelled
// (the first SIGINT or SIGTERM), the error of interrupted(ctx, what). read
// runs on a goroutine of its own because it may block in a system call
// that no signal interrupts: opening a FIFO that has no writer, reading a
// pipe such as bash's <(command), a slow file. A read cut short is left
// to end in the background while the process exits. A panic in read is
// raised again on the caller's goroutine, where run recovers it.
func stoppable[T any](ctx context.Context, what string, read func() (T, error)) (T, error) {
	var zero T
	if ctx.Err() != nil {
		return zero, interrupted(ctx, what)
	}
	type result struct {
		v     T
		err   error
		panic any
	}
	ch := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panic = p
			}
			ch <- r
		}()
		r.v, r.err = read()
	}()
	select {
	case r := <-ch:
		if r.panic != nil {
			panic(r.panic)
		}
		return r.v, r.err
	case <-ctx.Done():
		return zero, interrupted(ctx, what)
	}
}

// stoppableErr is stoppable for a read that returns only an error.
func stoppableErr(ctx context.Context, what string, read func() error) error {
	_, err := stoppable(ctx, what, func() (struct{}, error) { return struct{}{}, read() })
	return err
}
