package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/wickml/wick/internal/sampling"
)

// The sampling fields that /v1/completions and /v1/chat/completions
// share. Fields of OpenAI's API that Wick does not implement are accepted
// at their neutral values (a frequency_penalty of 0, n of 1, no
// logit_bias) and refused otherwise, so that no request is answered as if
// they had been applied.
type samplingFields struct {
	Model            string          `json:"model"`
	MaxTokens        *int            `json:"max_tokens"`
	Temperature      *float64        `json:"temperature"`
	TopP             *float64        `json:"top_p"`
	TopK             *int            `json:"top_k"`
	Seed             *int64          `json:"seed"`
	Stop             json.RawMessage `json:"stop"`
	Stream           bool            `json:"stream"`
	StreamOptions    *streamOptions  `json:"stream_options"`
	N                *int            `json:"n"`
	FrequencyPenalty *float64        `json:"frequency_penalty"`
	PresencePenalty  *float64        `json:"presence_penalty"`
	LogitBias        map[string]any  `json:"logit_bias"`
	User             string          `json:"user"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
	// ContinuousUsageStats is vLLM's extension: with IncludeUsage, every
	// chunk carries the usage so far, and every token gets a chunk.
	ContinuousUsageStats bool `json:"continuous_usage_stats"`
}

// completionRequest is the body of POST /v1/completions.
type completionRequest struct {
	samplingFields
	Prompt   json.RawMessage `json:"prompt"`
	Echo     bool            `json:"echo"`
	Logprobs *int            `json:"logprobs"`
	BestOf   *int            `json:"best_of"`
	Suffix   *string         `json:"suffix"`
}

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	samplingFields
	Messages            []chatMessage   `json:"messages"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Logprobs            *bool           `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`
	ResponseFormat      *responseFormat `json:"response_format"`
	Tools               json.RawMessage `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	// ChatTemplateKwargs are further variables of the chat template, such
	// as Qwen3's enable_thinking (vLLM's extension).
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs"`
}

type responseFormat struct {
	Type string `json:"type"`
}

// chatMessage is one message of a chat request: content is a string or a
// list of {"type": "text", "text": ...} parts.
type chatMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Name             string          `json:"name"`
	ReasoningContent string          `json:"reasoning_content"`
}

// params are a request's validated sampling fields.
type params struct {
	maxTokens    int // 0: not given
	temperature  float32
	topP         float32
	topK         int
	seed         uint64
	seeded       bool
	stop         []string
	stream       bool
	includeUsage bool
	everyToken   bool // continuous_usage_stats (with include_usage): a chunk per token, each with the usage so far
	n            int
}

// Bounds of the fields.
const (
	maxStopStrings = 4    // OpenAI's bound
	maxStopBytes   = 1000 // a stop string's length
	defaultMaxTok  = 16   // /v1/completions' default max_tokens, OpenAI's
)

// readBody decodes r's JSON body into v: unknown fields, a body that is
// not one JSON object, and values of the wrong type are 400 naming the
// field; a body past the limit 413; one sent too slowly 408.
func readBody(r *http.Request, v any) error {
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r.Body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &httpError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error", code: "request_too_large",
				msg: fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit)}
		}
		var t interface{ Timeout() bool }
		if errors.As(err, &t) && t.Timeout() {
			return &httpError{status: http.StatusRequestTimeout, typ: "invalid_request_error", msg: "the request body came too slowly"}
		}
		return badRequest("", "reading the request body: %v", err)
	}
	if buf.Len() == 0 {
		return badRequest("", "the request body is empty: want a JSON object")
	}
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			f := strings.TrimPrefix(te.Field, "samplingFields.")
			return badRequest(f, "%s: want %s, not a JSON %s", fieldName(f), jsonKind(te.Type.String()), te.Value)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return badRequest("", "the body is not valid JSON: it ends inside its object")
		case errors.As(err, &se):
			return badRequest("", "the body is not valid JSON: %v (at byte %d)", se, se.Offset)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return badRequest(f, "unknown field %q: this server does not implement it", f)
		}
		return badRequest("", "the body is not a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("", "the body holds data after its JSON object")
	}
	return nil
}

func fieldName(f string) string {
	if f == "" {
		return "the body"
	}
	return f
}

// jsonKind names a Go type of the request structs as JSON does.
func jsonKind(t string) string {
	t = strings.TrimPrefix(t, "*")
	switch {
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	}
	return "an object"
}

// check validates the shared fields. maxTokens is the field's value
// (max_tokens or chat's max_completion_tokens), cap the server's bound.
func (f *samplingFields) check(maxTokens *int, maxTokensName string, cap, maxChoices int) (params, error) {
	p := params{temperature: 1, topP: 1, n: 1, stream: f.Stream}
	if maxTokens != nil {
		if *maxTokens < 1 || *maxTokens > cap {
			return p, badRequest(maxTokensName, "%s=%d: want 1 to %d (the server's bound)", maxTokensName, *maxTokens, cap)
		}
		p.maxTokens = *maxTokens
	}
	if f.Temperature != nil {
		t := *f.Temperature
		if err := sampling.CheckTemperature(t); err != nil {
			return p, badRequest("temperature", "temperature%v", err)
		}
		p.temperature = float32(t)
	}
	if f.TopP != nil {
		t := *f.TopP
		if !(t > 0 && t <= 1) {
			return p, badRequest("top_p", "top_p=%v: want a number above 0 and at most 1", t)
		}
		p.topP = float32(t)
	}
	if f.TopK != nil {
		if *f.TopK < -1 {
			return p, badRequest("top_k", "top_k=%d: want 0 or -1 (no limit) or a positive number", *f.TopK)
		}
		p.topK = max(*f.TopK, 0)
	}
	if f.Seed != nil {
		p.seed, p.seeded = uint64(*f.Seed), true
	}
	stops, err := parseStop(f.Stop)
	if err != nil {
		return p, err
	}
	p.stop = stops
	if f.StreamOptions != nil {
		if !f.Stream {
			return p, badRequest("stream_options", "stream_options: only with stream=true")
		}
		p.includeUsage = f.StreamOptions.IncludeUsage
		p.everyToken = p.includeUsage && f.StreamOptions.ContinuousUsageStats
	}
	if f.N != nil {
		if *f.N < 1 || *f.N > maxChoices {
			return p, badRequest("n", "n=%d: want 1 to %d", *f.N, maxChoices)
		}
		p.n = *f.N
	}
	for _, c := range []struct {
		name string
		v    *float64
	}{{"frequency_penalty", f.FrequencyPenalty}, {"presence_penalty", f.PresencePenalty}} {
		if c.v != nil && *c.v != 0 {
			return p, badRequest(c.name, "%s=%v: not supported (only 0)", c.name, *c.v)
		}
	}
	if len(f.LogitBias) > 0 {
		return p, badRequest("logit_bias", "logit_bias: not supported (only an empty object)")
	}
	return p, nil
}

// parseStop reads stop: absent, null, a string or a list of strings.
func parseStop(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	var list []string
	if err := json.Unmarshal(raw, &one); err == nil {
		list = []string{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, badRequest("stop", "stop: want a string or a list of strings")
	}
	if len(list) > maxStopStrings {
		return nil, badRequest("stop", "stop: %d strings, want at most %d", len(list), maxStopStrings)
	}
	for _, s := range list {
		if s == "" || len(s) > maxStopBytes {
			return nil, badRequest("stop", "stop: a stop string must have 1 to %d bytes", maxStopBytes)
		}
	}
	return list, nil
}

// prompts reads a completion's prompt: a string, a list of strings, a
// list of token ids or a list of lists of token ids. Each element is a
// prompt of its own (a choice of the answer). Strings are returned in
// texts, token lists in ids, at the same index.
func parsePrompt(raw json.RawMessage, vocab int) (texts []string, ids [][]int, err error) {
	bad := func(format string, args ...any) error { return badRequest("prompt", format, args...) }
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, bad("prompt is missing")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}, [][]int{nil}, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, nil, bad("prompt: want a string, a list of strings, a list of token ids or a list of lists of token ids")
	}
	if len(list) == 0 {
		return nil, nil, bad("prompt is an empty list")
	}
	checkIDs := func(v []int) error {
		if len(v) == 0 {
			return bad("prompt: an empty list of token ids")
		}
		for _, id := range v {
			if id < 0 || id >= vocab {
				return bad("prompt: token id %d is out of the vocabulary (0 to %d)", id, vocab-1)
			}
		}
		return nil
	}
	var one []int
	if json.Unmarshal(raw, &one) == nil {
		if err := checkIDs(one); err != nil {
			return nil, nil, err
		}
		return []string{""}, [][]int{one}, nil
	}
	for i, e := range list {
		var s string
		var v []int
		switch {
		case json.Unmarshal(e, &s) == nil:
			texts, ids = append(texts, s), append(ids, nil)
		case json.Unmarshal(e, &v) == nil:
			if err := checkIDs(v); err != nil {
				return nil, nil, err
			}
			texts, ids = append(texts, ""), append(ids, v)
		default:
			return nil, nil, bad("prompt[%d]: want a string or a list of token ids", i)
		}
	}
	return texts, ids, nil
}

// messageText returns a message's content: a string, or the text parts
// of a list of parts joined.
func messageText(i int, raw json.RawMessage) (string, error) {
	param := fmt.Sprintf("messages[%d].content", i)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", badRequest(param, "%s: want a string or a list of {\"type\": \"text\", \"text\": ...} parts", param)
	}
	var b strings.Builder
	for j, p := range parts {
		if p.Type != "text" {
			return "", badRequest(param, "%s[%d]: type %q is not supported (only text)", param, j, p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}
