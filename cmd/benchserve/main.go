// Command benchserve is a load generator for an OpenAI-compatible
// /v1/completions endpoint (cmd/serve, or any server that streams
// server-sent events the way OpenAI's API does):
//
//	benchserve -url=http://127.0.0.1:8080 -clients=16 -duration=15s -max_tokens=64
//
// Each of -clients concurrent clients sends streamed requests
// (stream=true, with stream_options.include_usage) one after another, for
// -duration or -requests requests each. The prompt is -prompt (text) or,
// when -prompt_tokens is set, a list of that many token ids (the same
// prompt length on every server, whatever its tokenizer). Every request
// carries its own seed (-seed plus a counter) at -temperature.
//
// It prints one line: requests/s, output tokens/s (the servers' usage
// counts, or the streamed chunks where a server sends none), the time to
// first token and the inter-token latency (the gap between streamed
// chunks) at the 50th and 99th percentiles, and the count of errors.
// -json prints the same as a JSON object.
//
// -stream=false asks for the answers whole (stream false) instead: the
// time to first token is then the whole answer's, as for -api=generate,
// and there is no inter-token latency.
//
// -api=generate drives the examples/serve of before cmd/serve instead
// (POST /generate with prompt, seed, max_new_tokens and temperature,
// answered whole): its time to first token is the whole answer's, and it
// has no inter-token latency.
//
// -disconnect=F makes that fraction of the requests hang up after their
// first few chunks (a client that goes away mid-stream), to check that a
// server frees what they held; their chunks count towards the latencies
// but their requests not towards requests/s.
//
// -probe_prompt_tokens=N runs the prefill probe instead: -clients
// streams run (each asking for -max_tokens), and once they have streamed
// for a while one more request with an N-token prompt starts. It asks for
// a chunk per token (-every_token) and prints the running streams'
// inter-token gaps before it (p50, max) and their
// gaps while it is prefilled (from its start to its first token: p50, p90, max),
// and that request's time to first token.
//
// benchserve model -kind=gpt2|qwen3|recipe -out=DIR writes a model with
// random weights for the benchmarks (see model.go).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	var err error
	if len(os.Args) > 1 && os.Args[1] == "model" {
		err = writeModelCmd(os.Args[2:])
	} else {
		err = run(os.Args[1:], os.Stdout)
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchserve:", err)
		os.Exit(1)
	}
}

// config is the command's flags.
type config struct {
	url, prompt, model, api string
	clients, requests       int
	duration                time.Duration
	promptTokens, maxTok    int
	temperature             float64
	seed                    int64
	disconnect              float64
	probePromptTokens       int
	jsonOut, stream         bool
	everyToken              bool
	timeout                 time.Duration
}

func run(args []string, stdout io.Writer) error {
	var c config
	fs := flag.NewFlagSet("benchserve", flag.ContinueOnError)
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8080", "the server's base URL (POST URL/v1/completions)")
	fs.StringVar(&c.api, "api", "completions", "completions (OpenAI's, streamed) or generate (the old examples/serve's /generate)")
	fs.StringVar(&c.model, "model", "", "the request's model field (empty: not sent)")
	fs.IntVar(&c.clients, "clients", 1, "concurrent clients")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long the clients send requests (when -requests is 0)")
	fs.IntVar(&c.requests, "requests", 0, "requests per client (instead of -duration)")
	fs.StringVar(&c.prompt, "prompt", "ROMEO:", "the prompt text")
	fs.IntVar(&c.promptTokens, "prompt_tokens", 0, "send a prompt of this many token ids (1 to 50) instead of -prompt")
	fs.IntVar(&c.maxTok, "max_tokens", 64, "max_tokens of every request")
	fs.Float64Var(&c.temperature, "temperature", 1, "temperature of every request (0: greedy)")
	fs.Int64Var(&c.seed, "seed", 1, "the first request's seed; each request adds one")
	fs.Float64Var(&c.disconnect, "disconnect", 0, "fraction (0 to 1) of requests that hang up mid-stream")
	fs.IntVar(&c.probePromptTokens, "probe_prompt_tokens", 0, "run the prefill probe with a prompt of this many tokens")
	fs.BoolVar(&c.jsonOut, "json", false, "print the results as JSON")
	fs.BoolVar(&c.stream, "stream", true, "stream the answers (false: ask for them whole, as the old /generate answers)")
	fs.BoolVar(&c.everyToken, "every_token", false, "ask for a chunk per token (stream_options.continuous_usage_stats) and time tokens, not chunks with text; the prefill probe always does")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "the longest one request may take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.clients < 1 || c.maxTok < 1 || c.disconnect < 0 || c.disconnect > 1 || c.requests < 0 || c.promptTokens < 0 {
		return fmt.Errorf("-clients and -max_tokens must be positive, -requests and -prompt_tokens non-negative, -disconnect within 0 to 1")
	}
	if c.api != "completions" && c.api != "generate" {
		return fmt.Errorf("-api=%s: want completions or generate", c.api)
	}
	if c.probePromptTokens > 0 {
		return probe(c, stdout)
	}
	res := load(c)
	if c.jsonOut {
		return json.NewEncoder(stdout).Encode(res)
	}
	fmt.Fprintln(stdout, res)
	return nil
}

// promptJSON is the request's prompt: a token-id list of n ids or text.
func promptJSON(text string, n int) any {
	if n <= 0 {
		return text
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = 1 + (i*7)%50 // within any vocabulary of 51 or more
	}
	return ids
}

// stream is what one request saw.
type stream struct {
	start  time.Time
	chunks []time.Time // arrival of each chunk with text (with every token: of each chunk with new tokens)
	tokens int         // usage.completion_tokens, or len(chunks)
	err    error
	hungUp bool
}

// doStream sends one streamed completion and reads its events. When
// hangUpAfter > 0 it closes the connection after that many chunks.
func doStream(ctx context.Context, client *http.Client, c config, prompt any, maxTokens int, seed int64, hangUpAfter int, onChunk func(time.Time)) stream {
	if c.api == "generate" {
		return doGenerate(ctx, client, c, prompt, maxTokens, seed)
	}
	if !c.stream {
		return doWhole(ctx, client, c, prompt, maxTokens, seed)
	}
	body := map[string]any{
		"prompt": prompt, "max_tokens": maxTokens, "temperature": c.temperature, "seed": seed,
		"stream": true, "stream_options": map[string]any{"include_usage": true},
	}
	if c.everyToken {
		body["stream_options"] = map[string]any{"include_usage": true, "continuous_usage_stats": true}
	}
	if c.model != "" {
		body["model"] = c.model
	}
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	s := stream{start: time.Now()}
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimSuffix(c.url, "/")+"/v1/completions", bytes.NewReader(b))
	if err != nil {
		s.err = err
		return s
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		s.err = err
		return s
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		s.err = fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
		return s
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	usage, done := -1, false
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data: ")) {
			continue
		}
		data := line[6:]
		if string(data) == "[DONE]" {
			done = true
			break
		}
		var ev struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			s.err = fmt.Errorf("bad event %q: %v", data, err)
			return s
		}
		if ev.Error != nil {
			s.err = fmt.Errorf("error event: %s", ev.Error.Message)
			return s
		}
		arrived := len(ev.Choices) > 0 && ev.Choices[0].Text != ""
		if ev.Usage != nil {
			// with every token, a chunk whose count grew brings tokens,
			// whether or not they complete a character yet
			arrived = c.everyToken && len(ev.Choices) > 0 && ev.Usage.CompletionTokens > max(usage, 0)
			usage = ev.Usage.CompletionTokens
		}
		if arrived {
			t := time.Now()
			s.chunks = append(s.chunks, t)
			if onChunk != nil {
				onChunk(t)
			}
			if hangUpAfter > 0 && len(s.chunks) >= hangUpAfter {
				s.hungUp = true
				return s // the deferred Close hangs up
			}
		}
	}
	if err := sc.Err(); err != nil {
		s.err = err
		return s
	}
	if !done {
		s.err = errors.New("the stream ended without data: [DONE]")
		return s
	}
	s.tokens = len(s.chunks)
	if usage >= 0 {
		s.tokens = usage
	}
	return s
}

// result is what a load run measured.
type result struct {
	Clients          int     `json:"clients"`
	Seconds          float64 `json:"seconds"`
	Requests         int     `json:"requests"`
	HungUp           int     `json:"hung_up"`
	Errors           int     `json:"errors"`
	FirstError       string  `json:"first_error,omitempty"`
	RequestsPerSec   float64 `json:"requests_per_s"`
	TokensPerSec     float64 `json:"output_tokens_per_s"`
	TTFTp50, TTFTp99 float64 // milliseconds
	ITLp50, ITLp99   float64 // milliseconds
}

func (r result) String() string {
	s := fmt.Sprintf("clients %d  %.1f s  requests %d  %.1f req/s  %.0f tok/s  TTFT p50 %.1f ms p99 %.1f ms  ITL p50 %.2f ms p99 %.2f ms  errors %d",
		r.Clients, r.Seconds, r.Requests, r.RequestsPerSec, r.TokensPerSec, r.TTFTp50, r.TTFTp99, r.ITLp50, r.ITLp99, r.Errors)
	if r.HungUp > 0 {
		s += fmt.Sprintf("  hung up %d", r.HungUp)
	}
	if r.FirstError != "" {
		s += "  first error: " + r.FirstError
	}
	return s
}

func newClient(n int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0, DisableCompression: true}}
}

// load runs the clients and summarizes what they saw.
func load(c config) result {
	client := newClient(c.clients)
	prompt := promptJSON(c.prompt, c.promptTokens)
	var seq atomic.Int64
	var mu sync.Mutex
	var all []stream
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(c.duration)
	for i := 0; i < c.clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; c.requests > 0 && n < c.requests || c.requests == 0 && time.Now().Before(deadline); n++ {
				k := seq.Add(1)
				hang := 0
				// every 1/disconnect-th request hangs up, after 1 to 4 chunks
				if c.disconnect > 0 && float64(k)*c.disconnect-float64(int64(float64(k-1)*c.disconnect)) >= 1 {
					hang = 1 + int(k%4)
				}
				s := doStream(context.Background(), client, c, prompt, c.maxTok, c.seed+k-1, hang, nil)
				mu.Lock()
				all = append(all, s)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return summarize(all, c.clients, time.Since(start))
}

func summarize(all []stream, clients int, elapsed time.Duration) result {
	r := result{Clients: clients, Seconds: elapsed.Seconds()}
	var ttft, itl []float64
	tokens := 0
	for _, s := range all {
		if s.err != nil {
			r.Errors++
			if r.FirstError == "" {
				r.FirstError = s.err.Error()
			}
			continue
		}
		if len(s.chunks) > 0 {
			ttft = append(ttft, ms(s.chunks[0].Sub(s.start)))
		}
		itl = append(itl, gaps(s.chunks)...)
		if s.hungUp {
			r.HungUp++
			continue
		}
		r.Requests++
		tokens += s.tokens
	}
	r.RequestsPerSec = float64(r.Requests) / r.Seconds
	r.TokensPerSec = float64(tokens) / r.Seconds
	r.TTFTp50, r.TTFTp99 = percentile(ttft, 50), percentile(ttft, 99)
	r.ITLp50, r.ITLp99 = percentile(itl, 50), percentile(itl, 99)
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// gaps returns the milliseconds between consecutive times.
func gaps(ts []time.Time) []float64 {
	var g []float64
	for i := 1; i < len(ts); i++ {
		g = append(g, ms(ts[i].Sub(ts[i-1])))
	}
	return g
}

// doWhole sends one completion with stream false and reads its whole
// answer: its time to first token is the answer's.
func doWhole(ctx context.Context, client *http.Client, c config, prompt any, maxTokens int, seed int64) stream {
	body := map[string]any{"prompt": prompt, "max_tokens": maxTokens, "temperature": c.temperature, "seed": seed}
	if c.model != "" {
		body["model"] = c.model
	}
	var v struct {
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	s := postJSON(ctx, client, c, "/v1/completions", body, &v)
	s.tokens = v.Usage.CompletionTokens
	return s
}

// doGenerate sends one POST /generate (the old examples/serve) and reads
// its whole answer.
func doGenerate(ctx context.Context, client *http.Client, c config, prompt any, maxTokens int, seed int64) stream {
	body := map[string]any{"prompt": prompt, "max_new_tokens": maxTokens, "temperature": c.temperature, "seed": seed}
	var v struct {
		Tokens []int `json:"tokens"`
	}
	s := postJSON(ctx, client, c, "/generate", body, &v)
	s.tokens = len(v.Tokens)
	return s
}

// postJSON POSTs body as JSON to the server's path, reads the whole
// answer and decodes it into ans; the stream's one chunk is the answer's
// arrival. A failed request, a status other than 200 or an answer that
// does not decode is the stream's error.
func postJSON(ctx context.Context, client *http.Client, c config, path string, body, ans any) stream {
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	s := stream{start: time.Now()}
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimSuffix(c.url, "/")+path, bytes.NewReader(b))
	if err != nil {
		s.err = err
		return s
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		s.err = err
		return s
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		s.err = err
		return s
	}
	if resp.StatusCode != http.StatusOK {
		s.err = fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(got))
		return s
	}
	if err := json.Unmarshal(got, ans); err != nil {
		s.err = fmt.Errorf("bad answer %q: %v", got, err)
		return s
	}
	s.chunks = []time.Time{time.Now()}
	return s
}
