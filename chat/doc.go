// Package chat turns a conversation into the prompt a chat model was
// trained on: it reads a model's chat template (the Jinja source in its
// tokenizer_config.json, or chat_template.jinja beside it), renders a list
// of messages with it the way Hugging Face transformers does, and says
// where an answer ends (the template's end-of-turn strings and token ids).
//
//	cfg, err := chat.LoadConfig("path/to/model")        // tokenizer_config.json, generation_config.json
//	tmpl, err := cfg.Template("")                       // the default template
//	prompt, err := tmpl.Render([]chat.Message{
//		{Role: "system", Content: "You are a helpful assistant."},
//		{Role: "user", Content: "Hello!"},
//	}, chat.Options{AddGenerationPrompt: true})
//	// generate from prompt; stop at cfg.Stop strings or cfg.StopTokenIDs
//
// Templates are rendered by github.com/ardanlabs/jinja, a pure-Go Jinja
// engine written for chat templates; the tests hold it to
// @huggingface/jinja (the renderer of transformers.js) byte for byte on the
// templates of Llama 3, 3.1, 3.2 and Qwen3 (testdata/chat, written by
// scripts/gen_chat_golden.sh). Besides Jinja's own globals a template sees
// messages, add_generation_prompt, bos_token, eos_token, raise_exception
// (which makes Render return the template's message as an error) and
// strftime_now (the time of Options.Now, or of the clock). Tool calling is
// not supported: templates see no tools.
//
// Package chat is not one of Wick's light library packages (it imports the
// Jinja engine); a server or a command imports it. A Template is safe for
// concurrent use by any number of goroutines; a Config is read-only after
// LoadConfig or ParseConfig returns.
package chat
