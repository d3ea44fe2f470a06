// Command serve is the smallest server on package serve: it loads a
// checkpoint written by train and serves OpenAI's API from it, mounted in
// a mux of its own beside a page of its own, to show how a Go program
// embeds the handler. cmd/serve is the full server (Hugging Face models,
// chat templates, limits and timeouts as flags, API keys).
//
//	go run ./cmd/train --max_iters=200           # writes out/ckpt.safetensors
//	go run ./examples/serve -ckpt out/ckpt.safetensors -addr 127.0.0.1:8080
//	curl 127.0.0.1:8080/v1/completions -d '{"prompt": "ROMEO:", "max_tokens": 50, "seed": 7}'
//
// SIGINT or SIGTERM stops it after the requests in flight are answered.
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
	"github.com/wickml/wick/serve"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

func run() error {
	ckpt := flag.String("ckpt", "out/ckpt.safetensors", "checkpoint written by train")
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	ck, err := nn.LoadCheckpoint(*ckpt) // the model in eval mode, and its tokenizer
	if err != nil {
		return err
	}
	eng, err := serve.NewEngine(serve.Config{Model: ck.LM}) // continuous batching, the defaults
	if err != nil {
		return err
	}
	defer eng.Close()
	api := serve.NewHandler(eng, serve.HandlerOptions{
		ModelName: "ckpt", Tokenizer: ck.Tokenizer, ContextSize: ck.LM.ContextSize(),
	})
	mux := http.NewServeMux()
	mux.Handle("/v1/", api)
	mux.Handle("/metrics", api)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s: POST /v1/completions\n", *ckpt)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("serving %s on http://%s/v1\n", *ckpt, ln.Addr())
	srv := httplimit.Default().TimeoutServer(mux, log.Default())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		api.Drain() // new requests get 503; those in flight go on
		shutdown, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
