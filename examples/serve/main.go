// Command serve loads a checkpoint written by `train` and serves generated
// text over HTTP from one model shared by every request.
//
//	go run ./cmd/train --max_iters=200           # writes out/ckpt.safetensors
//	go run ./examples/serve -ckpt out/ckpt.safetensors -addr 127.0.0.1:8080
//	curl '127.0.0.1:8080/generate?prompt=ROMEO:&seed=7&max_new_tokens=50'
//
// Each request names its seed and gets its own random generator, so the
// same request always gets the same answer, however many others are served
// at the same time. SIGINT or SIGTERM stops the server after the requests
// in flight have been answered.
//
// The server is bounded (internal/httplimit): request bodies, requests in
// flight and queued (429 past the queue, 503 past its timeout), and read,
// write and idle timeouts; the prompt must fit the model's context and
// max_new_tokens the -max_new_tokens flag; temperature is 0 (greedy) or
// from 0.001 to 100; a panic is answered 500 and logged on one line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wickml/wick/internal/httplimit"
	"github.com/wickml/wick/nn"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	ckpt := fs.String("ckpt", "out/ckpt.safetensors", "checkpoint written by train")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	maxTokens := fs.Int("max_new_tokens", 1000, "the most tokens one request may ask for")
	lim := httplimit.Default()
	fs.Int64Var(&lim.MaxBodyBytes, "max_body_bytes", lim.MaxBodyBytes, "the largest request body; larger ones are answered 413")
	fs.IntVar(&lim.MaxInFlight, "max_in_flight", lim.MaxInFlight, "requests generated at once")
	fs.IntVar(&lim.MaxQueued, "max_queued", lim.MaxQueued, "requests waiting for a slot; past them, 429")
	fs.DurationVar(&lim.QueueTimeout, "queue_timeout", lim.QueueTimeout, "the longest a request waits for a slot; past it, 503")
	fs.DurationVar(&lim.ReadTimeout, "read_timeout", lim.ReadTimeout, "the longest a client may take to send its request")
	fs.DurationVar(&lim.WriteTimeout, "write_timeout", lim.WriteTimeout, "the longest one answer may take, generation included")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *maxTokens < 0 || lim.MaxBodyBytes <= 0 || lim.MaxInFlight <= 0 || lim.MaxQueued < 0 {
		return errors.New("-max_new_tokens, -max_body_bytes, -max_in_flight and -max_queued must be positive (-max_queued may be 0)")
	}
	// The model, in eval mode, and the tokenizer it was trained with.
	ck, err := nn.LoadCheckpoint(*ckpt)
	if err != nil {
		return err
	}
	model := ck.Model
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("serving %s (%d parameters) on http://%s/generate\n", *ckpt, nn.NumParams(model), ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := newServer(model, ck.Tokenizer, *maxTokens)
	logger := log.New(os.Stderr, "serve: ", log.LstdFlags)
	if s.notFinite != "" {
		logger.Printf("warning: the model's weights are not finite (%s): every request will be answered 500", s.notFinite)
	}
	return serve(ctx, ln, s, lim, logger)
}

// serve answers requests on ln within lim until ctx is done, then lets
// the requests in flight finish (for up to a minute) and returns. Panics
// and connection errors are logged on logger, one line each.
func serve(ctx context.Context, ln net.Listener, h http.Handler, lim httplimit.Limits, logger *log.Logger) error {
	srv := lim.Server(h, logger)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
