package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

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
}

// newServer returns a server for model, which it switches to eval mode.
func newServer(model *nn.GPT, tok tokenizer.Tokenizer, maxTokens int) *server {
	model.Eval()
	return &server{model: model, tok: tok, maxToken: maxTokens}
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

// ServeHTTP serves /generate (GET with query parameters or POST with a
// form): prompt, seed, max_new_tokens, temperature and top_k, with
// nanoGPT's sample.py defaults for the last two; temperature 0 is greedy
// decoding (the most likely token each time, as top_k=1 gives).
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/generate" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		httpError(w, http.StatusMethodNotAllowed, "use GET or POST")
		return
	}
	req, err := s.parse(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	resp, err := s.generate(r.Context(), req)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// parse reads and checks a request's parameters.
func (s *server) parse(r *http.Request) (request, error) {
	req := request{Prompt: "\n", MaxTokens: min(100, s.maxToken), Temperature: 0.8, TopK: 200}
	if err := r.ParseForm(); err != nil {
		return req, err
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
	switch {
	case err != nil:
	case req.MaxTokens < 0 || req.MaxTokens > s.maxToken:
		err = fmt.Errorf("max_new_tokens=%d: want 0 to %d", req.MaxTokens, s.maxToken)
	case !(req.Temperature >= 0) || req.Temperature > 100:
		err = fmt.Errorf("temperature=%v: want 0 (greedy) to 100", req.Temperature)
	case req.TopK < 0:
		err = fmt.Errorf("top_k=%d: want 0 (no limit) or more", req.TopK)
	case req.Prompt == "":
		err = fmt.Errorf("prompt is empty")
	}
	return req, err
}

// generate continues req.Prompt with the shared model and the request's own
// generator.
func (s *server) generate(ctx context.Context, req request) (*response, error) {
	start, err := tokenizer.EncodeStrict(s.tok, req.Prompt)
	if err != nil {
		return nil, fmt.Errorf("prompt: %v", err)
	}
	if len(start) == 0 {
		return nil, fmt.Errorf("prompt encodes to no tokens")
	}
	gen := tensor.NewGenerator(req.Seed)
	// a client that goes away stops the generation between two tokens
	out, err := s.model.GenerateContext(ctx, tensor.FromInts(start, 1, len(start)), req.MaxTokens, float32(req.Temperature), req.TopK, gen)
	if err != nil {
		return nil, err
	}
	tokens := out.Ints()[len(start):]
	return &response{request: req, Completion: s.tok.Decode(tokens), Tokens: tokens}, nil
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
