package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// job is one API request ready to run: one choice per prompt and n.
type job struct {
	chat    bool
	id      string
	created int64
	start   time.Time
	prompts [][]int  // the prompts' tokens
	echo    []string // per prompt, the text sent before its completion (echo)
	max     []int    // per prompt, its max_tokens
	p       params
	stopIDs []int
	stops   []string // the request's stop strings and the chat template's
}

// choice is one generation of a job as it runs.
type choice struct {
	index  int
	prompt int // index into job.prompts
	events <-chan Event
	cancel context.CancelFunc
	detok  *detokenizer
	stop   *stopper
	tokens int
}

// piece is the next text of a choice, or its end (done).
type piece struct {
	index  int
	text   string
	done   bool
	finish string
	err    error
}

// usage is OpenAI's usage object.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// response is the body of an answer or of one streamed chunk.
type response struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Created           int64  `json:"created"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint,omitempty"`
	Choices           any    `json:"choices"`
	Usage             *usage `json:"usage,omitempty"`
}

type completionChoice struct {
	Text         string    `json:"text"`
	Index        int       `json:"index"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type chatChoice struct {
	Index        int       `json:"index"`
	Message      *chatOut  `json:"message,omitempty"`
	Delta        *chatOut  `json:"delta,omitempty"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type chatOut struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// errCancelled ends a choice that the engine cancelled while its client
// still waited.
var errCancelled = errors.New("serve: the request was cancelled by the server")

// newID returns an answer's id: prefix and 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// admit counts a generation request in flight and returns its release,
// or the error it is answered with: 503 while draining, 429 past
// MaxInFlight.
func (h *Handler) admit() (func(), error) {
	if h.draining.Load() {
		return nil, ErrClosed
	}
	if h.inFlight.Add(1) > int64(h.o.MaxInFlight) {
		h.inFlight.Add(-1)
		return nil, &httpError{status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "server_full",
			msg: fmt.Sprintf("too many requests in flight (%d): retry later", h.o.MaxInFlight)}
	}
	return func() { h.inFlight.Add(-1) }, nil
}

// run submits j's choices and answers them, whole or streamed.
func (h *Handler) run(w http.ResponseWriter, r *http.Request, j *job) {
	ctx, cancelAll := context.WithCancel(r.Context())
	defer cancelAll()
	var choices []*choice
	seed := j.p.seed
	if !j.p.seeded {
		var b [8]byte
		rand.Read(b[:])
		for _, x := range b {
			seed = seed<<8 | uint64(x)
		}
	}
	for pi, prompt := range j.prompts {
		for k := range j.p.n {
			idx := pi*j.p.n + k
			cctx, cancel := context.WithCancel(ctx)
			req := Request{
				Prompt: prompt, MaxTokens: j.max[pi], Temperature: j.p.temperature, TopK: j.p.topK,
				TopP: j.p.topP, Seed: seed + uint64(idx), StopIDs: j.stopIDs,
			}
			events, err := h.g.Submit(cctx, req)
			if err != nil {
				cancel()
				cancelAll()
				for _, c := range choices {
					for range c.events { // the engine closes them once cancelled
					}
				}
				writeHTTPError(w, err)
				return
			}
			stops := &stopper{stops: j.stops}
			choices = append(choices, &choice{index: idx, prompt: pi, events: events, cancel: cancel,
				detok: newDetokenizer(h.o.Tokenizer, prompt), stop: stops})
		}
	}
	for _, p := range j.prompts { // once per prompt, as usage counts them
		h.metrics.promptTokens.Add(uint64(len(p)))
	}
	out := make(chan piece, len(choices))
	var once sync.Once
	firstToken := func() { once.Do(func() { h.metrics.observeTTFT(time.Since(j.start)) }) }
	for _, c := range choices {
		go h.follow(c, out, firstToken)
	}
	defer func() {
		total := 0
		for _, c := range choices {
			total += c.tokens
		}
		h.metrics.completionTokens.Add(uint64(total))
	}()
	if j.p.stream {
		h.stream(w, j, choices, out, cancelAll)
	} else {
		h.whole(w, j, choices, out)
	}
}

// follow turns c's events into pieces on out, and sends its last piece
// (done) when the engine closes its channel.
func (h *Handler) follow(c *choice, out chan<- piece, firstToken func()) {
	last := piece{index: c.index, done: true}
	ended := false
	defer func() {
		// a panic here would end the process, not the request: answer
		// it as the choice's error, and let the engine end the request
		if p := recover(); p != nil {
			h.o.Logger.Printf("serve: panic following a request: %s", oneLine(fmt.Sprint(p)))
			c.cancel()
			for range c.events {
			}
			out <- piece{index: c.index, done: true, err: fmt.Errorf("internal error: %s", oneLine(fmt.Sprint(p)))}
		}
	}()
	for ev := range c.events {
		if ev.Token >= 0 {
			if c.stop.stopped {
				continue // generated before the cancellation took effect
			}
			c.tokens++
			if c.tokens == 1 {
				firstToken()
			}
			text, stopped := c.stop.push(c.detok.add(ev.Token))
			if stopped {
				c.cancel()
			}
			if text != "" {
				out <- piece{index: c.index, text: text}
			}
			continue
		}
		ended = true
		switch {
		case c.stop.stopped:
			last.finish = "stop"
		case ev.Finish == FinishError:
			last.err = ev.Err
			if last.err == nil {
				last.err = errors.New("serve: generation failed")
			}
		case ev.Finish == FinishCancelled:
			last.err = errCancelled
		default:
			text, stopped := c.stop.push(c.detok.flush())
			if !stopped {
				text += c.stop.flush()
			}
			last.text = text
			last.finish = string(ev.Finish)
			if stopped {
				last.finish = "stop"
			}
		}
	}
	c.cancel()
	if !ended {
		last.err = errors.New("serve: the engine ended the request without a final event")
	}
	out <- last
}

// generationError is the answer to a choice that failed.
func generationError(err error) *httpError {
	if errors.Is(err, errCancelled) {
		return &httpError{status: http.StatusServiceUnavailable, typ: "service_unavailable", code: "cancelled", msg: err.Error()}
	}
	return &httpError{status: http.StatusInternalServerError, typ: "server_error", code: "generation_failed",
		msg: "generation failed: " + strings.TrimPrefix(err.Error(), "serve: ")}
}

// whole waits for every choice and answers them in one JSON object.
func (h *Handler) whole(w http.ResponseWriter, j *job, choices []*choice, out <-chan piece) {
	texts := make([]string, len(choices))
	finish := make([]string, len(choices))
	var failed error
	for pos := range choices {
		texts[pos] = j.echo[choices[pos].prompt]
	}
	for left := len(choices); left > 0; {
		p := <-out
		texts[p.index] += p.text
		if p.done {
			left--
			finish[p.index] = p.finish
			if p.err != nil && failed == nil {
				failed = p.err
				for _, c := range choices {
					c.cancel()
				}
			}
		}
	}
	if failed != nil {
		h.setWriteDeadline(w)
		writeHTTPError(w, generationError(failed))
		return
	}
	resp := j.response(h.o.ModelName, j.usage(choices))
	if j.chat {
		cs := make([]chatChoice, len(choices))
		for i := range cs {
			cs[i] = chatChoice{Index: i, Message: &chatOut{Role: "assistant", Content: &texts[i]}, FinishReason: &finish[i]}
		}
		resp.Choices = cs
	} else {
		cs := make([]completionChoice, len(choices))
		for i := range cs {
			cs[i] = completionChoice{Text: texts[i], Index: i, FinishReason: &finish[i]}
		}
		resp.Choices = cs
	}
	h.setWriteDeadline(w)
	writeJSON(w, http.StatusOK, resp)
}

func (j *job) response(model string, u *usage) response {
	obj := "text_completion"
	if j.chat {
		obj = "chat.completion"
	}
	return response{ID: j.id, Object: obj, Created: j.created, Model: model, Usage: u}
}

func (j *job) usage(choices []*choice) *usage {
	u := &usage{}
	for _, p := range j.prompts {
		u.PromptTokens += len(p)
	}
	for _, c := range choices {
		u.CompletionTokens += c.tokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// setWriteDeadline gives the next write WriteTimeout.
func (h *Handler) setWriteDeadline(w http.ResponseWriter) {
	if h.o.WriteTimeout > 0 {
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(h.o.WriteTimeout))
	}
}

// stream answers the choices as server-sent events: a chunk per piece of
// text, one with each choice's finish_reason, the usage when asked, and
// "data: [DONE]". The status is sent with the first piece, so that a
// request that fails before its first token (a model whose logits are
// not finite) is answered with an error status; a failure after it is
// sent as a chunk holding an error object.
func (h *Handler) stream(w http.ResponseWriter, j *job, choices []*choice, out <-chan piece, cancelAll context.CancelFunc) {
	rc := http.NewResponseController(w)
	started, broken := false, false
	var failed error
	send := func(v any) {
		if broken {
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		h.setWriteDeadline(w)
		if _, err = fmt.Fprintf(w, "data: %s\n\n", b); err == nil {
			err = rc.Flush()
		}
		if err != nil {
			broken = true
			cancelAll()
		}
	}
	chunk := func(index int, text *string, finish *string, role bool) response {
		resp := j.response(h.o.ModelName, nil)
		if j.chat {
			resp.Object = "chat.completion.chunk"
			d := &chatOut{Content: text}
			if role {
				d.Role = "assistant"
			}
			resp.Choices = []chatChoice{{Index: index, Delta: d, FinishReason: finish}}
		} else {
			t := ""
			if text != nil {
				t = *text
			}
			resp.Choices = []completionChoice{{Text: t, Index: index, FinishReason: finish}}
		}
		return resp
	}
	begin := func() {
		started = true
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		for _, c := range choices {
			switch {
			case j.chat:
				empty := ""
				send(chunk(c.index, &empty, nil, true))
			case j.echo[c.prompt] != "":
				send(chunk(c.index, &j.echo[c.prompt], nil, false))
			}
		}
	}
	for left := len(choices); left > 0; {
		p := <-out
		if p.done {
			left--
		}
		if p.err != nil {
			if failed == nil {
				failed = p.err
				cancelAll()
			}
			continue
		}
		if failed != nil {
			continue
		}
		if !started {
			begin()
		}
		if p.text != "" {
			text := p.text
			send(chunk(p.index, &text, nil, false))
		}
		if p.done {
			finish := p.finish
			send(chunk(p.index, nil, &finish, false))
		}
	}
	switch {
	case failed != nil && !started:
		h.setWriteDeadline(w)
		writeHTTPError(w, generationError(failed))
		return
	case failed != nil:
		he := generationError(failed)
		send(map[string]apiError{"error": newAPIError(he.msg, he.typ, he.param, he.code)})
	case j.p.includeUsage:
		resp := j.response(h.o.ModelName, j.usage(choices))
		resp.Object = "text_completion"
		if j.chat {
			resp.Object = "chat.completion.chunk"
		}
		resp.Choices = []struct{}{}
		send(resp)
	}
	if !broken {
		h.setWriteDeadline(w)
		if _, err := fmt.Fprint(w, "data: [DONE]\n\n"); err == nil {
			rc.Flush()
		}
	}
}
