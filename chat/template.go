package chat

import (
	"fmt"
	"time"

	"github.com/ardanlabs/jinja"
)

// Message is one turn of a conversation, as OpenAI's chat API and
// transformers' apply_chat_template take it.
type Message struct {
	// Role is "system", "user" or "assistant" (a template may accept
	// others).
	Role string
	// Content is the turn's text.
	Content string
	// ReasoningContent is an assistant turn's reasoning (Qwen3's
	// templates write it between <think> tags); templates see
	// message.reasoning_content only when it is not empty.
	ReasoningContent string
}

// Options are the inputs of a rendering besides the messages.
type Options struct {
	// AddGenerationPrompt ends the prompt with the header of an assistant
	// turn, so that the model answers (add_generation_prompt).
	AddGenerationPrompt bool
	// Now is the time strftime_now formats, in its own location; the zero
	// Time means the clock's local time at the call, as in transformers.
	Now time.Time
	// Vars are further template variables, such as Qwen3's
	// enable_thinking or Llama 3.1's date_string, converted from Go values
	// (bool, numbers, string, []any, map[string]any and their typed
	// forms). They are set after the standard ones and may replace them.
	Vars map[string]any
}

// Template is a compiled chat template with its model's BOS and EOS
// tokens. It is safe for concurrent use by any number of goroutines.
type Template struct {
	source   string
	bos, eos string
	tmpl     *jinja.Template
}

// Compile compiles the Jinja source of a chat template; bos and eos are
// the values of the template's bos_token and eos_token. It returns an
// error when the source is not valid Jinja.
func Compile(source, bos, eos string) (*Template, error) {
	t, err := jinja.Compile(source)
	if err != nil {
		return nil, fmt.Errorf("chat: compile template: %w", err)
	}
	return &Template{source: source, bos: bos, eos: eos, tmpl: t}, nil
}

// Source returns the template's Jinja source.
func (t *Template) Source() string { return t.source }

// Render renders the conversation. It returns an error when the template
// fails, among others when it calls raise_exception (the error's text is
// then the template's message, as a client should see it).
func (t *Template) Render(messages []Message, opts Options) (string, error) {
	msgs := make([]jinja.Value, len(messages))
	for i, m := range messages {
		d := jinja.NewDict()
		dict := d.AsDict()
		dict.Set("role", jinja.NewString(m.Role))
		dict.Set("content", jinja.NewString(m.Content))
		if m.ReasoningContent != "" {
			dict.Set("reasoning_content", jinja.NewString(m.ReasoningContent))
		}
		msgs[i] = d
	}
	now := opts.Now
	data := map[string]jinja.Value{
		"messages":              jinja.NewList(msgs),
		"add_generation_prompt": jinja.NewBool(opts.AddGenerationPrompt),
		"bos_token":             jinja.NewString(t.bos),
		"eos_token":             jinja.NewString(t.eos),
		"strftime_now": jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			if len(args) != 1 || !args[0].IsString() {
				return jinja.Undefined(), fmt.Errorf("strftime_now: want one format string")
			}
			at := now
			if at.IsZero() {
				at = time.Now()
			}
			return jinja.NewString(strftime(at, args[0].AsString())), nil
		}),
	}
	for k, v := range opts.Vars {
		data[k] = jinja.FromGoValue(v)
	}
	out, err := t.tmpl.RenderValues(data)
	if err != nil {
		return "", fmt.Errorf("chat: render template: %w", err)
	}
	return out, nil
}
