package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"

	"github.com/wickml/wick/internal/httplimit"
	"github.com/wickml/wick/internal/sampling"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

// server answers /generate requests from one model shared by every request.
// The model is in eval mode and nobody trains it, so any number of handlers
// may run its Generate at once (the tensor package's concurrency contract);
// each request draws from its own generator, seeded from the request, so a
// request's answer does not depend on what else is being served.
type server struct {
	model    *nn.GPT
	tok      tokenizer.Tokenizer
	maxToken int // the largest max_new_tokens a request may ask for
	// notFinite names a parameter holding NaN or Inf, found when the
	// server started; every request is then answered 500 saying so.
	notFinite string
}

// newServer returns a server for model, which it switches to eval mode.
func newServer(model *nn.GPT, tok tokenizer.Tokenizer, maxTokens int) *server {
	model.Eval()
	return &server{model: model, tok: tok, maxToken: maxTokens, notFinite: nonFiniteParam(model)}
}

// nonFiniteParam returns "NaN in NAME" (or Inf) for the first parameter
// of m with a non-finite value, or "".
func nonFiniteParam(m nn.Module) string {
	for _, p := range m.NamedParameters() {
		for _, v := range p.Param.Float32s() {
			if v != v {
				return "NaN in " + p.Name
			}
			if math.IsInf(float64(v), 0) {
				return "Inf in " + p.Name
			}
		}
	}
	return ""
}

// request is a parsed /generate request.
type request struct {
	Prompt      string  `json:"prompt"`
	Seed        uint64  `json:"seed"`
	MaxTokens   int     `json:"max_new_tokens"`
	Temperature float64 `json:"temperature"`
	TopK        int     `json:"top_k"`
}

// response is the JSON body of a successful /generate.
type response struct {
	request
	Completion string `json:"completion"` // the generated text after the prompt
	Tokens     []int  `json:"tokens"`     // the generated token ids
}

// errNotFinite is the error of a generation whose logits were NaN or Inf.
var errNotFinite = errors.New("the model's logits are not finite (NaN or Inf), so no token can be drawn")

// ServeHTTP serves /generate: GET with query parameters, or POST with a
// form or a JSON object (Content-Type application/json) holding prompt,
// seed, max_new_tokens, temperature and top_k, with nanoGPT's sample.py
// defaults for the last two. Bad parameters are answered 400, a prompt
// longer than the model's context 400, a body past the limit 413, and a
// model whose weights or logits are not finite 500, each with a JSON
// error naming the problem.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/generate" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		httplimit.Error(w, http.StatusMethodNotAllowed, "use GET or POST")
		return
	}
	req, code, err := s.parse(r)
	if err != nil {
		httplimit.Error(w, code, err.Error())
		return
	}
	httplimit.DoneReading(w) // ReadTimeout does not stop the generation
	if s.notFinite != "" {
		httplimit.Error(w, http.StatusInternalServerError, fmt.Sprintf("%v: the model's weights are not finite (%s)", errNotFinite, s.notFinite))
		return
	}
	resp, err := s.generate(r.Context(), req)
	switch {
	case errors.Is(err, errNotFinite):
		httplimit.Error(w, http.StatusInternalServerError, err.Error())
		return
	case errors.Is(err, context.DeadlineExceeded):
		httplimit.Error(w, http.StatusServiceUnavailable, "generation took longer than the server's write timeout; ask for fewer tokens")
		return
	case err != nil:
		httplimit.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// jsonRequest is the JSON form of a request; absent fields keep their
// defaults.
type jsonRequest struct {
	Prompt      *string  `json:"prompt"`
	Seed        *uint64  `json:"seed"`
	MaxTokens   *int     `json:"max_new_tokens"`
	Temperature *float64 `json:"temperature"`
	TopK        *int     `json:"top_k"`
}

// parse reads and checks a request's parameters: the query, then a form
// or JSON body. It returns the status of an error.
func (s *server) parse(r *http.Request) (request, int, error) {
	req := request{Prompt: "\n", MaxTokens: min(100, s.maxToken), Temperature: 0.8, TopK: 200}
	ctype := ""
	if v := r.Header.Get("Content-Type"); v != "" {
		ctype, _, _ = mime.ParseMediaType(v)
	}
	switch {
	case r.Method == http.MethodPost && ctype == "application/json":
		if err := r.ParseForm(); err != nil { // the query only
			return req, http.StatusBadRequest, err
		}
	case r.Method == http.MethodPost && ctype != "application/x-www-form-urlencoded" && ctype != "" && ctype != "multipart/form-data":
		return req, http.StatusUnsupportedMediaType, fmt.Errorf("Content-Type %s: want application/json or a form", ctype)
	default:
		if err := r.ParseForm(); err != nil {
			code, msg := httplimit.BodyError(err)
			return req, code, errors.New(msg)
		}
	}
	if v, ok := r.Form["prompt"]; ok {
		req.Prompt = v[0]
	}
	var err error
	field := func(name string, parse func(string) error) {
		if v := r.Form.Get(name); v != "" && err == nil {
			if perr := parse(v); perr != nil {
				err = fmt.Errorf("%s=%q: %v", name, v, perr)
			}
		}
	}
	field("seed", func(v string) (e error) { req.Seed, e = strconv.ParseUint(v, 10, 64); return })
	field("max_new_tokens", func(v string) (e error) { req.MaxTokens, e = strconv.Atoi(v); return })
	field("temperature", func(v string) (e error) { req.Temperature, e = strconv.ParseFloat(v, 64); return })
	field("top_k", func(v string) (e error) { req.TopK, e = strconv.Atoi(v); return })
	if err != nil {
		return req, http.StatusBadRequest, err
	}
	if r.Method == http.MethodPost && ctype == "application/json" {
		if code, err := readJSON(r.Body, &req); err != nil {
			return req, code, err
		}
	}
	switch {
	case req.MaxTokens < 0 || req.MaxTokens > s.maxToken:
		err = fmt.Errorf("max_new_tokens=%d: want 0 to %d", req.MaxTokens, s.maxToken)
	case sampling.CheckTemperature(req.Temperature) != nil:
		err = fmt.Errorf("temperature%v", sampling.CheckTemperature(req.Temperature))
	case req.TopK < 0:
		err = fmt.Errorf("top_k=%d: want 0 (no limit) or more", req.TopK)
	case req.Prompt == "":
		err = fmt.Errorf("prompt is empty")
	}
	if err != nil {
		return req, http.StatusBadRequest, err
	}
	return req, 0, nil
}

// readJSON reads one JSON object from body into req: its fields override
// the query's; unknown fields and trailing data are errors.
func readJSON(body io.Reader, req *request) (int, error) {
	var j jsonRequest
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(&j)
	if err == nil {
		if _, e := dec.Token(); e != io.EOF {
			err = errors.New("data after the JSON object")
		}
	}
	if err != nil {
		if code, msg := httplimit.BodyError(err); code != http.StatusBadRequest {
			return code, errors.New(msg) // too large, too slow
		}
		if errors.Is(err, io.EOF) {
			err = errors.New("the body is empty")
		}
		return http.StatusBadRequest, fmt.Errorf("JSON body: %v", err)
	}
	if j.Prompt != nil {
		req.Prompt = *j.Prompt
	}
	if j.Seed != nil {
		req.Seed = *j.Seed
	}
	if j.MaxTokens != nil {
		req.MaxTokens = *j.MaxTokens
	}
	if j.Temperature != nil {
		req.Temperature = *j.Temperature
	}
	if j.TopK != nil {
		req.TopK = *j.TopK
	}
	return 0, nil
}

// generate continues req.Prompt with the shared model and the request's own
// generator. A prompt longer than the model's context is an error, and
// logits that are not finite give errNotFinite.
func (s *server) generate(ctx context.Context, req request) (resp *response, err error) {
	start, err := tokenizer.EncodeStrict(s.tok, req.Prompt)
	if err != nil {
		return nil, fmt.Errorf("prompt: %v", err)
	}
	if len(start) == 0 {
		return nil, fmt.Errorf("prompt encodes to no tokens")
	}
	if n := s.model.Config.BlockSize; len(start) > n {
		return nil, fmt.Errorf("prompt is %d tokens, more than the model's context of %d", len(start), n)
	}
	gen := tensor.NewGenerator(req.Seed)
	temp, topK := sampling.Greedy(req.Temperature, req.TopK)
	defer func() {
		// tensor.Multinomial refuses NaN probabilities, which NaN or
		// Inf logits give; any other panic is the handler's to report
		if p := recover(); p != nil {
			if te, ok := p.(*tensor.Error); ok && te.Op == "Multinomial" {
				resp, err = nil, errNotFinite
				return
			}
			panic(p)
		}
	}()
	// a client that goes away stops the generation between two tokens
	out, err := s.model.GenerateContext(ctx, tensor.FromInts(start, 1, len(start)), req.MaxTokens, temp, topK, gen)
	if err != nil {
		return nil, err
	}
	tokens := out.Ints()[len(start):]
	return &response{request: req, Completion: s.tok.Decode(tokens), Tokens: tokens}, nil
}
