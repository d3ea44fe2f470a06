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
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

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
	if err := fs.Parse(args); err != nil {
		return err
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
	return serve(ctx, ln, newServer(model, ck.Tokenizer, *maxTokens))
}

// serve answers requests on ln until ctx is done, then lets the requests in
// flight finish (for up to a minute) and returns.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
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
