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
	tokens int // the choice's tokens so far
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
	var once sync.Once
	firstToken := func() { once.Do(func() { h.metrics.observeTTFT(time.Since(j.start)) }) }
	var src pieces
	if len(choices) == 1 {
		// one choice (n = 1, one prompt): its events are followed on this
		// goroutine, without a goroutine and a channel of its own between
		src = &follower{h: h, c: choices[0], firstToken: firstToken, every: j.p.everyToken}
	} else {
		out := make(chan piece, len(choices))
		for _, c := range choices {
			go h.follow(c, out, firstToken, j.p.everyToken)
		}
		src = fanIn(out)
	}
	defer func() {
		total := 0
		for _, c := range choices {
			total += c.tokens
		}
		h.metrics.completionTokens.Add(uint64(total))
	}()
	if j.p.stream {
		h.stream(w, j, choices, src, cancelAll)
	} else {
		h.whole(w, j, choices, src)
	}
}

// pieces is where a job's answer reads its choices' pieces from.
type pieces interface {
	// next waits for the next piece.
	next() piece
	// ready returns the next piece if one is ready without waiting.
	ready() (piece, bool)
}

// fanIn is pieces from the choices' follow goroutines.
type fanIn chan piece

func (f fanIn) next() piece { return <-f }

func (f fanIn) ready() (piece, bool) {
	select {
	case p := <-f:
		return p, true
	default:
		return piece{}, false
	}
}

// follower turns one choice's events into pieces: on a goroutine of its
// own (follow) or on the goroutine that answers (as pieces).
type follower struct {
	h          *Handler
	c          *choice
	firstToken func()
	every      bool  // a piece per token, its text empty until a character is complete
	last       piece // the final piece, once ended
	ended      bool  // the final event came
	closed     bool  // the channel is closed and the final piece given
}

// next implements pieces: the choice's next piece, its last (done) once
// the engine closed its channel.
func (f *follower) next() piece {
	for {
		ev, ok := <-f.c.events
		if p, emit := f.take(ev, ok); emit {
			return p
		}
	}
}

// ready implements pieces.
func (f *follower) ready() (piece, bool) {
	for !f.closed {
		select {
		case ev, ok := <-f.c.events:
			if p, emit := f.take(ev, ok); emit {
				return p, true
			}
		default:
			return piece{}, false
		}
	}
	return piece{}, false
}

// take handles one receive from the choice's events (ok false: the
// channel is closed) and returns the piece it makes, if any. A panic
// here (the tokenizer's) ends the choice with its error instead of the
// request's handler.
func (f *follower) take(ev Event, ok bool) (p piece, emit bool) {
	c := f.c
	defer func() {
		if r := recover(); r != nil {
			f.h.o.Logger.Printf("serve: panic following a request: %s", oneLine(fmt.Sprint(r)))
			c.cancel()
			for range c.events {
			}
			f.closed = true
			p, emit = piece{index: c.index, done: true, err: fmt.Errorf("internal error: %s", oneLine(fmt.Sprint(r)))}, true
		}
	}()
	if !ok {
		c.cancel()
		f.closed = true
		last := f.last
		last.index, last.done, last.tokens = c.index, true, c.tokens
		if !f.ended {
			last.err = errors.New("serve: the engine ended the request without a final event")
		}
		return last, true
	}
	if ev.Token >= 0 {
		if c.stop.stopped {
			return piece{}, false // generated before the cancellation took effect
		}
		c.tokens++
		if c.tokens == 1 {
			f.firstToken()
		}
		text, stopped := c.stop.push(c.detok.add(ev.Token))
		if stopped {
			c.cancel()
		}
		return piece{index: c.index, text: text, tokens: c.tokens}, text != "" || f.every
	}
	f.ended = true
	last := &f.last
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
	return piece{}, false
}

// follow turns c's events into pieces on out (a piece per token with
// every), and sends its last piece (done) when the engine closes its
// channel.
func (h *Handler) follow(c *choice, out chan<- piece, firstToken func(), every bool) {
	f := &follower{h: h, c: c, firstToken: firstToken, every: every}
	for !f.closed {
		out <- f.next()
	}
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
func (h *Handler) whole(w http.ResponseWriter, j *job, choices []*choice, src pieces) {
	texts := make([]string, len(choices))
	finish := make([]string, len(choices))
	var failed error
	for pos := range choices {
		texts[pos] = j.echo[choices[pos].prompt]
	}
	for left := len(choices); left > 0; {
		p := src.next()
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
// sent as a chunk holding an error object. The chunks of the pieces that
// are ready at once (the handler fell behind the engine, or several
// choices' tokens of one step) go out in one write and one flush.
func (h *Handler) stream(w http.ResponseWriter, j *job, choices []*choice, src pieces, cancelAll context.CancelFunc) {
	rc := http.NewResponseController(w)
	started, broken := false, false
	var failed error
	var buf []byte // the events not yet written
	send := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		buf = append(append(append(buf, "data: "...), b...), "\n\n"...)
	}
	write := func() {
		if broken || len(buf) == 0 {
			buf = buf[:0]
			return
		}
		h.setWriteDeadline(w)
		_, err := w.Write(buf)
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			broken = true
			cancelAll()
		}
		buf = buf[:0]
	}
	sofar := make([]int, len(choices)) // each choice's tokens in the chunks sent
	chunk := func(index int, text *string, finish *string, role bool) response {
		var u *usage
		if j.p.everyToken { // continuous_usage_stats: each chunk with its choice's usage so far
			p := len(j.prompts[choices[index].prompt])
			u = &usage{PromptTokens: p, CompletionTokens: sofar[index], TotalTokens: p + sofar[index]}
		}
		resp := j.response(h.o.ModelName, u)
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
	// the chunk of a piece of text is a template per choice, the text
	// put in its place: what json.Marshal writes, without encoding the
	// whole chunk per token
	templates := make([]textTemplate, len(choices))
	text := func(index int, t string) {
		if j.p.everyToken {
			send(chunk(index, &t, nil, false))
			return
		}
		tp := &templates[index]
		if tp.head == nil {
			empty := ""
			b, err := json.Marshal(chunk(index, &empty, nil, false))
			if err != nil {
				panic(err)
			}
			key := `"text":""`
			if j.chat {
				key = `"content":""`
			}
			at := strings.Index(string(b), key) + len(key) - 1
			tp.head, tp.tail = b[:at], b[at:]
		}
		buf = append(buf, "data: "...)
		buf = append(buf, tp.head...)
		buf = appendJSONText(buf, t)
		buf = append(buf, tp.tail...)
		buf = append(buf, "\n\n"...)
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
	left := len(choices)
	handle := func(p piece) {
		if p.done {
			left--
		}
		if p.err != nil {
			if failed == nil {
				failed = p.err
				cancelAll()
			}
			return
		}
		if failed != nil {
			return
		}
		if !started {
			begin()
		}
		sofar[p.index] = p.tokens
		if p.text != "" || (j.p.everyToken && !p.done) {
			text(p.index, p.text)
		}
		if p.done {
			finish := p.finish
			send(chunk(p.index, nil, &finish, false))
		}
	}
	for left > 0 {
		handle(src.next())
		for left > 0 {
			p, ok := src.ready()
			if !ok {
				break
			}
			handle(p)
		}
		if left > 0 {
			write()
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
	buf = append(buf, "data: [DONE]\n\n"...)
	write()
}

// textTemplate is a streamed text chunk of one choice around its text:
// head ends with the text's opening quote, tail starts with its closing
// one.
type textTemplate struct{ head, tail []byte }

// appendJSONText appends s as json.Marshal writes a string, without its
// quotes: as it is where it has nothing to escape (printable ASCII other
// than ", \, <, > and &), through json.Marshal otherwise.
func appendJSONText(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, err := json.Marshal(s)
			if err != nil {
				panic(err)
			}
			return append(dst, b[1:len(b)-1]...)
		}
	}
	return append(dst, s...)
}
