package serve

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wickml/wick/chat"
	"github.com/wickml/wick/tokenizer"
)

// HandlerOptions describe the model a Handler serves and the bounds it
// keeps. Tokenizer and ContextSize are required; a zero value elsewhere
// takes the default its field names.
type HandlerOptions struct {
	// ModelName is the model's id in /v1/models; a request naming another
	// model is answered 404, one naming none is served. Default "wick".
	ModelName string
	// Tokenizer encodes prompts and decodes the generated tokens. A
	// *tokenizer.HF encodes a completion's prompt with its special tokens
	// (EncodeSpecial, as Hugging Face's tokenizer(prompt) does) and a
	// rendered chat prompt without them (the template writes them).
	Tokenizer tokenizer.Tokenizer
	// ContextSize is the model's context: a prompt and its max_tokens
	// must fit in it.
	ContextSize int
	// EOSTokenIDs end every generation (the model's end of sequence).
	EOSTokenIDs []int

	// ChatTemplate renders /v1/chat/completions' messages (with
	// add_generation_prompt); nil answers that endpoint 400 saying the
	// model has no chat template. ChatStop are the strings and
	// ChatStopTokenIDs the tokens that end an assistant's turn (a
	// chat.Config's Stop and StopTokenIDs); neither is sent.
	ChatTemplate     *chat.Template
	ChatStop         []string
	ChatStopTokenIDs []int
	// ChatVars are further template variables (chat.Options.Vars).
	ChatVars map[string]any

	// MaxTokens caps a request's max_tokens (default ContextSize).
	MaxTokens int
	// MaxBodyBytes bounds a request's body (default 1 MiB; 413 past it).
	MaxBodyBytes int64
	// MaxInFlight bounds the generation requests handled at once, those
	// generating and those waiting in the engine's queue together
	// (default 256; 429 past it).
	MaxInFlight int
	// MaxChoices bounds the choices of one request, its n times its
	// prompts (default 16).
	MaxChoices int
	// WriteTimeout bounds each write of an answer (each streamed chunk
	// on its own), so that a client that stops reading is cut off while
	// a long stream that is read goes on (default 30 s; negative: none).
	WriteTimeout time.Duration
	// APIKey, when set, must come with every /v1/ request as
	// "Authorization: Bearer KEY" (401 otherwise). /health and /metrics
	// need none.
	APIKey string
	// Logger logs panics and failed writes, one line each (default
	// log.Default()).
	Logger *log.Logger
	// Created is the model's creation time in /v1/models (default the
	// time NewHandler was called).
	Created time.Time
}

// Handler serves OpenAI's API in front of a Generator:
//
//	GET  /v1/models, /v1/models/{id}
//	POST /v1/completions
//	POST /v1/chat/completions
//	GET  /health
//	GET  /metrics   (Prometheus' text format)
//
// Errors are OpenAI's error objects, {"error": {"message", "type",
// "param", "code"}}, with status 400 for a request that cannot be served
// as written (bad JSON, an unknown field, a value out of range, a prompt
// longer than the context), 401 for a missing or wrong API key, 404 for
// an unknown model or path, 405 for a wrong method, 413 for a body over
// MaxBodyBytes, 429 when the server is full (MaxInFlight or the engine's
// queue), 500 when generation fails (non-finite logits: a model with NaN
// weights) and 503 once Drain was called. A panic in a handler is
// answered 500 and logged on one line. A Handler is safe for concurrent
// use.
type Handler struct {
	g        Generator
	o        HandlerOptions
	draining atomic.Bool
	inFlight atomic.Int64
	metrics  *metrics
	mux      *http.ServeMux
}

// NewHandler returns a Handler serving g with opts. It panics when g or
// opts.Tokenizer is nil or opts.ContextSize is below 2 (programmer
// errors).
func NewHandler(g Generator, opts HandlerOptions) *Handler {
	switch {
	case g == nil:
		panic("serve: NewHandler: nil Generator")
	case opts.Tokenizer == nil:
		panic("serve: NewHandler: HandlerOptions.Tokenizer is nil")
	case opts.ContextSize < 2:
		panic(fmt.Sprintf("serve: NewHandler: HandlerOptions.ContextSize is %d, want at least 2", opts.ContextSize))
	}
	if opts.ModelName == "" {
		opts.ModelName = "wick"
	}
	if opts.MaxTokens <= 0 || opts.MaxTokens > opts.ContextSize {
		opts.MaxTokens = opts.ContextSize
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 256
	}
	if opts.MaxChoices <= 0 {
		opts.MaxChoices = 16
	}
	if opts.WriteTimeout == 0 {
		opts.WriteTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = log.Default()
	}
	if opts.Created.IsZero() {
		opts.Created = time.Now()
	}
	h := &Handler{g: g, o: opts, metrics: newMetrics()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", h.models)
	mux.HandleFunc("GET /v1/models/{id...}", h.model)
	mux.HandleFunc("POST /v1/completions", h.completions)
	mux.HandleFunc("POST /v1/chat/completions", h.chatCompletions)
	mux.HandleFunc("GET /health", h.health)
	mux.HandleFunc("GET /metrics", h.serveMetrics)
	h.mux = mux
	return h
}

// Drain makes the Handler refuse new generation requests with 503 and
// answer /health 503, while the requests it is handling go on: call it
// when the server begins to shut down.
func (h *Handler) Drain() { h.draining.Store(true) }

// endpoints are the paths /metrics counts requests of; others count as
// "other".
var endpoints = map[string]bool{
	"/v1/models": true, "/v1/completions": true, "/v1/chat/completions": true,
	"/health": true, "/metrics": true,
}

// ServeHTTP routes r to its endpoint.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	endpoint := r.URL.Path
	if strings.HasPrefix(endpoint, "/v1/models/") {
		endpoint = "/v1/models"
	}
	if !endpoints[endpoint] {
		endpoint = "other"
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			msg := oneLine(fmt.Sprint(p))
			h.o.Logger.Printf("serve: panic serving %s %s: %s", r.Method, r.URL.Path, msg)
			if !sw.wrote {
				writeError(sw, http.StatusInternalServerError, "internal error: "+msg, "server_error", "", "")
			}
		}
		h.metrics.request(endpoint, sw.status())
	}()
	r.Body = http.MaxBytesReader(sw, r.Body, h.o.MaxBodyBytes)
	if strings.HasPrefix(r.URL.Path, "/v1/") && h.o.APIKey != "" && !h.authorized(r) {
		sw.Header().Set("WWW-Authenticate", `Bearer realm="wick"`)
		writeError(sw, http.StatusUnauthorized, "incorrect or missing API key: send the header Authorization: Bearer KEY", "invalid_request_error", "", "invalid_api_key")
		return
	}
	// unknown paths and methods as OpenAI errors, not the mux's text
	if _, pattern := h.mux.Handler(r); pattern == "" {
		switch r.URL.Path {
		case "/v1/completions", "/v1/chat/completions":
			sw.Header().Set("Allow", "POST")
			writeError(sw, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+": use POST", "invalid_request_error", "", "method_not_allowed")
		case "/v1/models", "/health", "/metrics":
			sw.Header().Set("Allow", "GET")
			writeError(sw, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+": use GET", "invalid_request_error", "", "method_not_allowed")
		default:
			writeError(sw, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path, "invalid_request_error", "", "unknown_url")
		}
		return
	}
	h.mux.ServeHTTP(sw, r)
}

// authorized reports whether r carries the API key.
func (h *Handler) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	key, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(key)), []byte(h.o.APIKey)) == 1
}

func (h *Handler) health(w http.ResponseWriter, r *http.Request) {
	if h.draining.Load() {
		writeError(w, http.StatusServiceUnavailable, ErrClosed.Error(), "service_unavailable", "", "shutting_down")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// modelObject is an entry of /v1/models.
type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	// MaxModelLen is the model's context (vLLM's extension).
	MaxModelLen int `json:"max_model_len"`
}

func (h *Handler) modelObject() modelObject {
	return modelObject{ID: h.o.ModelName, Object: "model", Created: h.o.Created.Unix(), OwnedBy: "wick", MaxModelLen: h.o.ContextSize}
}

func (h *Handler) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []modelObject{h.modelObject()}})
}

func (h *Handler) model(w http.ResponseWriter, r *http.Request) {
	if id := r.PathValue("id"); id != h.o.ModelName {
		writeHTTPError(w, h.modelError(id))
		return
	}
	writeJSON(w, http.StatusOK, h.modelObject())
}

// apiError is OpenAI's error object, the body of every error answer.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func newAPIError(msg, typ, param, code string) apiError {
	e := apiError{Message: msg, Type: typ}
	if param != "" {
		e.Param = &param
	}
	if code != "" {
		e.Code = &code
	}
	return e
}

// writeError answers status with OpenAI's error object.
func writeError(w http.ResponseWriter, status int, msg, typ, param, code string) {
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, map[string]apiError{"error": newAPIError(msg, typ, param, code)})
}

// httpError is an error with the status and error object it is
// answered with.
type httpError struct {
	status            int
	typ, param, code  string
	msg               string
	retryable, closed bool
}

func (e *httpError) Error() string { return e.msg }

// badRequest is a 400 naming param.
func badRequest(param, format string, args ...any) *httpError {
	return &httpError{status: http.StatusBadRequest, typ: "invalid_request_error", param: param, msg: fmt.Sprintf(format, args...)}
}

// writeHTTPError answers err: an *httpError as it says, a Submit error
// as its kind, anything else 500.
func writeHTTPError(w http.ResponseWriter, err error) {
	var he *httpError
	var re *RequestError
	switch {
	case errors.As(err, &he):
		writeError(w, he.status, he.msg, he.typ, he.param, he.code)
	case errors.Is(err, ErrFull):
		writeError(w, http.StatusTooManyRequests, err.Error(), "rate_limit_error", "", "server_full")
	case errors.Is(err, ErrClosed):
		writeError(w, http.StatusServiceUnavailable, err.Error(), "service_unavailable", "", "shutting_down")
	case errors.As(err, &re):
		writeError(w, http.StatusBadRequest, re.Field+": "+re.Msg, "invalid_request_error", re.Field, "")
	default:
		writeError(w, http.StatusInternalServerError, err.Error(), "server_error", "", "")
	}
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own types: a bug
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// statusWriter notes the status of an answer for /metrics and whether one
// was started.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.code, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if !s.wrote {
		s.code, s.wrote = http.StatusOK, true
	}
	return s.ResponseWriter.Write(b)
}

// Flush passes a stream's flushes on.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		if !s.wrote {
			s.code, s.wrote = http.StatusOK, true
		}
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) status() int {
	if !s.wrote {
		return http.StatusOK
	}
	return s.code
}

// oneLine joins the lines of s with " ; ".
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", " ; ")), " ")
}
