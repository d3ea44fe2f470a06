package serve

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/wickml/wick/chat"
	"github.com/wickml/wick/internal/httplimit"
	"github.com/wickml/wick/tokenizer"
)

// completions serves POST /v1/completions.
func (h *Handler) completions(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	release, err := h.admit()
	if err != nil {
		writeHTTPError(w, err)
		return
	}
	defer release()
	var req completionRequest
	if err := readBody(r, &req); err != nil {
		writeHTTPError(w, err)
		return
	}
	httplimit.DoneReading(w) // the read timeout is for sending the request, not for generating
	j, err := h.completionJob(&req)
	if err != nil {
		writeHTTPError(w, err)
		return
	}
	j.start = start
	h.run(w, r, j)
}

func (h *Handler) completionJob(req *completionRequest) (*job, error) {
	if req.Model != "" && req.Model != h.o.ModelName {
		return nil, h.modelError(req.Model)
	}
	p, err := req.check(req.MaxTokens, "max_tokens", h.o.MaxTokens, h.o.MaxChoices)
	if err != nil {
		return nil, err
	}
	switch {
	case req.Logprobs != nil:
		return nil, badRequest("logprobs", "logprobs: not supported")
	case req.BestOf != nil && *req.BestOf != p.n:
		return nil, badRequest("best_of", "best_of=%d: not supported (only equal to n)", *req.BestOf)
	case req.Suffix != nil && *req.Suffix != "":
		return nil, badRequest("suffix", "suffix: not supported")
	}
	texts, ids, err := parsePrompt(req.Prompt, h.o.Tokenizer.VocabSize())
	if err != nil {
		return nil, err
	}
	if len(texts)*p.n > h.o.MaxChoices {
		return nil, badRequest("prompt", "%d prompts with n=%d are more than the %d choices one request may have", len(texts), p.n, h.o.MaxChoices)
	}
	j := &job{id: newID("cmpl-"), created: time.Now().Unix(), p: p, stopIDs: h.o.EOSTokenIDs, stops: p.stop}
	for i, text := range texts {
		prompt := ids[i]
		if prompt == nil {
			param := "prompt"
			if len(texts) > 1 {
				param = fmt.Sprintf("prompt[%d]", i)
			}
			if prompt, err = h.encode(text, true); err != nil {
				return nil, badRequest(param, "%s: %v", param, err)
			}
			if len(prompt) == 0 {
				return nil, badRequest(param, "%s encodes to no tokens", param)
			}
		}
		max, err := h.fit(len(prompt), p.maxTokens, min(defaultMaxTok, h.o.MaxTokens), "prompt", "max_tokens")
		if err != nil {
			return nil, err
		}
		echo := ""
		if req.Echo {
			echo = text
			if ids[i] != nil {
				echo = h.o.Tokenizer.Decode(prompt)
			}
		}
		j.prompts, j.max, j.echo = append(j.prompts, prompt), append(j.max, max), append(j.echo, echo)
	}
	return j, nil
}

// chatCompletions serves POST /v1/chat/completions.
func (h *Handler) chatCompletions(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	release, err := h.admit()
	if err != nil {
		writeHTTPError(w, err)
		return
	}
	defer release()
	var req chatRequest
	if err := readBody(r, &req); err != nil {
		writeHTTPError(w, err)
		return
	}
	httplimit.DoneReading(w)
	j, err := h.chatJob(&req)
	if err != nil {
		writeHTTPError(w, err)
		return
	}
	j.start = start
	h.run(w, r, j)
}

func (h *Handler) chatJob(req *chatRequest) (*job, error) {
	if req.Model != "" && req.Model != h.o.ModelName {
		return nil, h.modelError(req.Model)
	}
	maxTok, name := req.MaxTokens, "max_tokens"
	if req.MaxCompletionTokens != nil {
		maxTok, name = req.MaxCompletionTokens, "max_completion_tokens"
	}
	p, err := req.check(maxTok, name, h.o.MaxTokens, h.o.MaxChoices)
	if err != nil {
		return nil, err
	}
	switch {
	case req.Logprobs != nil && *req.Logprobs:
		return nil, badRequest("logprobs", "logprobs: not supported")
	case req.TopLogprobs != nil && *req.TopLogprobs != 0:
		return nil, badRequest("top_logprobs", "top_logprobs: not supported")
	case req.ResponseFormat != nil && req.ResponseFormat.Type != "text":
		return nil, badRequest("response_format", "response_format %q: not supported (only text)", req.ResponseFormat.Type)
	case len(req.Tools) > 0 && string(req.Tools) != "null" && string(req.Tools) != "[]":
		return nil, badRequest("tools", "tools: tool calling is not supported")
	case len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" && string(req.ToolChoice) != `"none"`:
		return nil, badRequest("tool_choice", "tool_choice: tool calling is not supported")
	case h.o.ChatTemplate == nil:
		return nil, badRequest("messages", "the model %q has no chat template: use /v1/completions", h.o.ModelName)
	case len(req.Messages) == 0:
		return nil, badRequest("messages", "messages is empty")
	}
	msgs := make([]chat.Message, len(req.Messages))
	for i, m := range req.Messages {
		role := m.Role
		switch role {
		case "system", "user", "assistant":
		case "developer": // OpenAI's newer name for system
			role = "system"
		default:
			return nil, badRequest(fmt.Sprintf("messages[%d].role", i), "messages[%d].role %q: want system, developer, user or assistant", i, m.Role)
		}
		text, err := messageText(i, m.Content)
		if err != nil {
			return nil, err
		}
		msgs[i] = chat.Message{Role: role, Content: text, ReasoningContent: m.ReasoningContent}
	}
	vars := h.o.ChatVars
	if len(req.ChatTemplateKwargs) > 0 {
		vars = make(map[string]any, len(h.o.ChatVars)+len(req.ChatTemplateKwargs))
		for k, v := range h.o.ChatVars {
			vars[k] = v
		}
		for k, v := range req.ChatTemplateKwargs {
			switch k {
			case "messages", "add_generation_prompt", "bos_token", "eos_token", "raise_exception", "strftime_now":
				return nil, badRequest("chat_template_kwargs", "chat_template_kwargs: %q is set by the server", k)
			}
			vars[k] = v
		}
	}
	rendered, err := h.o.ChatTemplate.Render(msgs, chat.Options{AddGenerationPrompt: true, Vars: vars})
	if err != nil {
		return nil, badRequest("messages", "the chat template refused the messages: %v", err)
	}
	prompt, err := h.encode(rendered, false)
	if err != nil {
		return nil, badRequest("messages", "messages: %v", err)
	}
	if len(prompt) == 0 {
		return nil, badRequest("messages", "the messages render to no tokens")
	}
	max, err := h.fit(len(prompt), p.maxTokens, h.o.MaxTokens, "messages", name)
	if err != nil {
		return nil, err
	}
	stopIDs := slices.Concat(h.o.EOSTokenIDs, h.o.ChatStopTokenIDs)
	slices.Sort(stopIDs)
	stopIDs = slices.Compact(stopIDs)
	return &job{chat: true, id: newID("chatcmpl-"), created: time.Now().Unix(), p: p,
		prompts: [][]int{prompt}, max: []int{max}, echo: []string{""},
		stopIDs: stopIDs, stops: slices.Concat(p.stop, h.o.ChatStop)}, nil
}

func (h *Handler) modelError(name string) error {
	return &httpError{status: http.StatusNotFound, typ: "invalid_request_error", param: "model", code: "model_not_found",
		msg: fmt.Sprintf("the model %q does not exist: this server serves %q", name, h.o.ModelName)}
}

// encode returns the tokens of text: with the tokenizer's special tokens
// added (a completion's prompt, as Hugging Face's tokenizer(prompt)
// encodes it) or as it is (a rendered chat, whose template writes them).
// A character tokenizer refuses characters outside its vocabulary.
func (h *Handler) encode(text string, special bool) ([]int, error) {
	if hf, ok := h.o.Tokenizer.(*tokenizer.HF); ok {
		if special {
			return hf.EncodeSpecial(text), nil
		}
		return hf.Encode(text), nil
	}
	return tokenizer.EncodeStrict(h.o.Tokenizer, text)
}

// fit returns the max_tokens of a prompt of n tokens: given (when
// positive), or deflt cut to the context. A prompt and max_tokens that do
// not fit in the model's context are a 400.
func (h *Handler) fit(n, given, deflt int, promptParam, maxParam string) (int, error) {
	ctx := h.o.ContextSize
	if n >= ctx {
		return 0, badRequest(promptParam, "the prompt is %d tokens: the model's context of %d tokens must hold it and at least one new token", n, ctx)
	}
	if given > 0 {
		if n+given > ctx {
			return 0, badRequest(maxParam, "the prompt's %d tokens and %s=%d are more than the model's context of %d tokens", n, maxParam, given, ctx)
		}
		return given, nil
	}
	return min(deflt, ctx-n), nil
}
