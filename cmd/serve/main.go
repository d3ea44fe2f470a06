// Command serve serves a causal language model over OpenAI's HTTP API,
// with continuous batching over a paged KV cache (package serve):
//
//	serve --model=PATH [--addr=127.0.0.1:8080] [flags]
//
// PATH is a checkpoint written by train (its file, or the out_dir holding
// ckpt.safetensors), a Hugging Face model directory (config.json, the
// safetensors weights, tokenizer.json or vocab.json + merges.txt, and
// tokenizer_config.json for chat), or a hub name found in the Hugging Face
// cache. The endpoints: GET /v1/models, POST /v1/completions, POST
// /v1/chat/completions (streamed with stream=true), GET /health, GET
// /metrics. It listens on 127.0.0.1 unless --addr says otherwise.
//
// SIGINT or SIGTERM stops admitting requests, answers those in flight,
// and exits with status 0. Errors at start-up are one line on stderr and
// exit status 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wickml/wick/internal/httplimit"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/serve"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", oneLine(err.Error()))
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	model, addr, device, dtype, tokenizerDir, chatTemplate, name, apiKey string

	maxBatch, maxWaiting, kvBlock, prefillChunk int
	kvMemory                                    byteSize

	maxTokens, maxInFlight int
	maxBody                byteSize

	readHeaderTimeout, readTimeout, writeTimeout, idleTimeout, shutdownTimeout time.Duration
}

func newFlags(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is one line, from main; -h prints the usage
	fs.StringVar(&o.model, "model", "", "a train checkpoint (file or out_dir), a Hugging Face model directory or a hub name (required)")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; 127.0.0.1 unless you mean to serve other machines)")
	fs.StringVar(&o.device, "device", "auto", "auto, cpu or cuda[:N]")
	fs.StringVar(&o.dtype, "dtype", "float32", "dtype of the model's weights: float32, bfloat16 or float16 (16-bit weights on the cpu: half the memory and bytes read per token, activations in float32; a BF16/F16 file is kept as it is)")
	fs.StringVar(&o.tokenizerDir, "tokenizer_dir", "", "the directory of a Hugging Face model's tokenizer (tokenizer.json or vocab.json + merges.txt, and tokenizer_config.json), in place of the model's own")
	fs.StringVar(&o.chatTemplate, "chat_template", "", "a Jinja chat template file, replacing the model's (for a train checkpoint, which has none)")
	fs.StringVar(&o.name, "served_model_name", "", "the model's id in the API (default: --model as given)")
	fs.StringVar(&o.apiKey, "api_key", "", "require Authorization: Bearer KEY on /v1/ (default: $WICK_API_KEY; none when both are empty)")
	fs.IntVar(&o.maxBatch, "max_batch", 16, "the most sequences in one batched decode step")
	fs.IntVar(&o.maxWaiting, "max_waiting", 64, "requests that may wait for the running batch; past them, 429")
	fs.Var(&o.kvMemory, "kv_cache_memory", "memory for the paged KV cache, such as 512MiB or 2GiB (auto: room for max_batch sequences of the whole context, at most 1GiB)")
	fs.IntVar(&o.kvBlock, "kv_block_size", 16, "positions per KV-cache block")
	fs.IntVar(&o.prefillChunk, "prefill_chunk", serve.DefaultPrefillChunk, "the most prompt tokens prefilled per step (fewer deep into a long prompt, where each costs more), so that running streams keep their pace")
	fs.IntVar(&o.maxTokens, "max_tokens", 0, "the largest max_tokens a request may ask for (default: the model's context)")
	fs.IntVar(&o.maxInFlight, "max_in_flight", 0, "generation requests handled at once (default: max_batch + max_waiting); past them, 429")
	fs.Var(&o.maxBody, "max_body_bytes", "the largest request body, such as 1MiB; past it, 413")
	fs.DurationVar(&o.readHeaderTimeout, "read_header_timeout", 10*time.Second, "the longest a client may take to send a request's headers")
	fs.DurationVar(&o.readTimeout, "read_timeout", 30*time.Second, "the longest a client may take to send a whole request")
	fs.DurationVar(&o.writeTimeout, "write_timeout", 30*time.Second, "the longest one write of an answer may take (each streamed chunk on its own): a client that stops reading is cut off")
	fs.DurationVar(&o.idleTimeout, "idle_timeout", 2*time.Minute, "how long an idle keep-alive connection stays open")
	fs.DurationVar(&o.shutdownTimeout, "shutdown_timeout", time.Minute, "on SIGINT or SIGTERM, the longest to wait for the requests in flight")
	fs.Usage = func() {}
	return fs
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := &options{maxBody: 1 << 20}
	fs := newFlags(o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: serve --model=PATH [--addr=127.0.0.1:8080] [flags]\n\nServes OpenAI's API: /v1/models, /v1/completions, /v1/chat/completions, /health, /metrics.\n\nFlags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags are --name=value)", fs.Arg(0))
	}
	if o.apiKey == "" {
		o.apiKey = os.Getenv("WICK_API_KEY")
	}
	if err := o.validate(); err != nil {
		return err
	}
	dev, err := resolveDevice(o.device)
	if err != nil {
		return err
	}
	if err := tensor.SetDefaultDevice(dev); err != nil {
		return fmt.Errorf("--device=%s: %v", o.device, err)
	}
	dt := weightDType(o.dtype)
	if dt != tensor.Float32 && dev != tensor.CPU {
		return fmt.Errorf("--dtype=%s runs on the cpu only so far (got --device=%s); use --dtype=float32 or --device=cpu", o.dtype, dev)
	}
	m, err := loadModel(o.model, o.tokenizerDir, o.chatTemplate, dt)
	if err != nil {
		return err
	}
	logger := log.New(stderr, "serve: ", log.LstdFlags)
	if m.notFinite != "" {
		logger.Printf("warning: the model's weights are not finite (%s): requests will be answered 500", m.notFinite)
	}
	eng, err := newEngine(m, o)
	if err != nil {
		return err
	}
	name := o.name
	if name == "" {
		name = o.model
	}
	hopts := serve.HandlerOptions{
		ModelName: name, Tokenizer: m.tok, ContextSize: m.lm.ContextSize(), EOSTokenIDs: m.lm.EOSTokenIDs(),
		ChatTemplate: m.tmpl, MaxTokens: o.maxTokens, MaxBodyBytes: int64(o.maxBody),
		MaxInFlight: o.maxInFlight, WriteTimeout: o.writeTimeout, APIKey: o.apiKey, Logger: logger,
	}
	if m.chat != nil {
		hopts.ChatStop, hopts.ChatStopTokenIDs = m.chat.Stop, m.chat.StopTokenIDs
	} else if g, ok := m.tok.(*tokenizer.GPT2); ok {
		// no tokenizer_config.json: a GPT-2 vocabulary's turns end at
		// <|endoftext|>
		if eot := g.Encode(tokenizer.EndOfText); len(eot) == 1 {
			hopts.ChatStopTokenIDs = eot
		}
	}
	if hopts.MaxInFlight == 0 {
		hopts.MaxInFlight = o.maxBatch + o.maxWaiting
	}
	h := serve.NewHandler(eng, hopts)
	lim := httplimit.Limits{
		MaxHeaderBytes: 64 << 10, ReadHeaderTimeout: o.readHeaderTimeout, ReadTimeout: o.readTimeout,
		WriteTimeout: o.writeTimeout, IdleTimeout: o.idleTimeout,
	}
	srv := lim.TimeoutServer(h, logger)
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		eng.Close()
		return fmt.Errorf("--addr=%s: %v", o.addr, err)
	}
	chatNote := "chat: the model's template"
	switch {
	case o.chatTemplate != "":
		chatNote = "chat: " + o.chatTemplate
	case m.tmpl == nil:
		chatNote = "no chat template: /v1/chat/completions answers 400"
	}
	fmt.Fprintf(stdout, "serving %s (%s, %s, %d parameters in %s, context %d, %s) on http://%s/v1\n",
		name, m.kind, m.lm.ModelType(), nn.NumParams(m.lm), o.dtype, m.lm.ContextSize(), chatNote, ln.Addr())
	return serveUntil(ctx, srv, ln, h, eng, o.shutdownTimeout, stdout)
}

// serveUntil serves on ln until ctx is done, then drains: new requests
// get 503, those in flight are answered (for up to timeout), and the
// engine shuts down.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, h *serve.Handler, eng *serve.Engine, timeout time.Duration, stdout io.Writer) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		eng.Close()
		return err
	case <-ctx.Done():
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	fmt.Fprintln(stdout, "serve: stopping: answering the requests in flight (a second SIGINT or SIGTERM cuts them off)")
	h.Drain()
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-again:
			cancel()
		case <-sctx.Done():
		}
	}()
	err := srv.Shutdown(sctx)
	if e := eng.Shutdown(sctx); err == nil {
		err = e
	}
	eng.Close()
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("requests were still in flight after --shutdown_timeout=%v", timeout)
	case errors.Is(err, context.Canceled):
		return errors.New("a second signal cut off the requests in flight")
	}
	if err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(stdout, "serve: stopped")
	return nil
}

func (o *options) validate() error {
	switch {
	case o.model == "":
		return errors.New("--model is required: a train checkpoint (file or out_dir), a Hugging Face model directory or a hub name")
	case o.dtype != "float32" && o.dtype != "bfloat16" && o.dtype != "float16":
		return fmt.Errorf("--dtype=%s is not supported (want float32, bfloat16 or float16)", o.dtype)
	case o.maxBatch < 1:
		return fmt.Errorf("--max_batch=%d: want at least 1", o.maxBatch)
	case o.maxWaiting < 0:
		return fmt.Errorf("--max_waiting=%d: want 0 or more", o.maxWaiting)
	case o.kvBlock < 1:
		return fmt.Errorf("--kv_block_size=%d: want at least 1", o.kvBlock)
	case o.prefillChunk < 1:
		return fmt.Errorf("--prefill_chunk=%d: want at least 1", o.prefillChunk)
	case o.maxTokens < 0:
		return fmt.Errorf("--max_tokens=%d: want 0 (the model's context) or more", o.maxTokens)
	case o.maxInFlight < 0:
		return fmt.Errorf("--max_in_flight=%d: want 0 (max_batch + max_waiting) or more", o.maxInFlight)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read_header_timeout", o.readHeaderTimeout}, {"read_timeout", o.readTimeout}, {"write_timeout", o.writeTimeout}, {"idle_timeout", o.idleTimeout}, {"shutdown_timeout", o.shutdownTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("--%s=%v: want a positive duration such as 30s", d.name, d.v)
		}
	}
	return nil
}

// resolveDevice turns --device into a device this binary can use.
func resolveDevice(s string) (tensor.Device, error) {
	if s == "auto" {
		if _, err := tensor.BackendFor(tensor.CUDA(0)); err == nil {
			return tensor.CUDA(0), nil
		}
		return tensor.CPU, nil
	}
	dev, err := tensor.ParseDevice(s)
	if err != nil {
		return tensor.Device{}, fmt.Errorf("--device: %v", strings.TrimPrefix(err.Error(), "tensor: "))
	}
	if _, err := tensor.BackendFor(dev); err != nil {
		return tensor.Device{}, fmt.Errorf("--device=%s: %s", s, strings.TrimPrefix(err.Error(), "tensor: "))
	}
	return dev, nil
}

// byteSize is a flag of bytes given with a unit: 512MiB, 2GiB, 1GB or a
// number of bytes.
type byteSize int64

func (b *byteSize) String() string {
	if *b == 0 {
		return "auto"
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *byteSize) Set(s string) error {
	s = strings.TrimSpace(s)
	if s == "auto" {
		*b = 0
		return nil
	}
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	num, mult := s, 1.0
	for _, u := range units {
		if strings.HasSuffix(strings.ToLower(s), strings.ToLower(u.suffix)) {
			num, mult = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || v*mult >= math.MaxInt64 || v*mult < 1 {
		return errors.New("want a positive size such as 512MiB, 2GiB, 1GB or 1048576 (bytes), or auto")
	}
	*b = byteSize(v * mult)
	return nil
}

// oneLine joins the lines of s.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ; ")), " ")
}
