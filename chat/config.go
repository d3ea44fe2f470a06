package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// DefaultTemplate is the name under which a config's single chat template
// (chat_template given as a string) is kept, and the one Config.Template
// returns for the name "".
const DefaultTemplate = "default"

// Config is what a model's files say about chatting with it: its chat
// templates by name, its BOS and EOS tokens, and where an answer stops.
type Config struct {
	// Templates maps a template's name to its Jinja source: "default" for
	// a chat_template given as a string, the names of a list of named
	// templates ([{"name": ..., "template": ...}]) otherwise.
	Templates map[string]string
	// BOSToken and EOSToken are tokenizer_config.json's bos_token and
	// eos_token (given as strings or as AddedToken objects); empty when
	// absent or null.
	BOSToken, EOSToken string
	// Stop lists the strings that end an assistant's turn, in this order
	// and without repeats: EOSToken, the tokens of generation_config.json's
	// eos_token_id (a number or a list) that the tokenizer config names in
	// added_tokens_decoder, and the well-known end-of-turn markers
	// (EndOfTurnMarkers) that the default template writes and that the
	// tokenizer config has as added tokens (Llama 3's base config says
	// <|end_of_text|>, while its template ends each turn with <|eot_id|>).
	Stop []string
	// StopTokenIDs holds the token ids of Stop that added_tokens_decoder
	// names, and generation_config.json's eos_token_id, sorted, without
	// repeats.
	StopTokenIDs []int
	// AddedTokens maps the id of each of tokenizer_config.json's
	// added_tokens_decoder entries to its text.
	AddedTokens map[int]string
}

// EndOfTurnMarkers are the end-of-turn tokens of the common chat formats
// (Llama 3's <|eot_id|> and <|eom_id|>, ChatML's <|im_end|>, Phi's <|end|>,
// Gemma's <end_of_turn>), which Config.Stop includes when the template
// writes them and the tokenizer has them as added tokens.
var EndOfTurnMarkers = []string{"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>"}

// LoadConfig reads the chat configuration of the model directory dir: its
// tokenizer_config.json (required), chat_template.jinja (optional; where
// present it is the default template, as in transformers) and
// generation_config.json (optional). Errors name the file.
func LoadConfig(dir string) (*Config, error) {
	tc, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	var jinjaFile []byte
	jinjaPath := filepath.Join(dir, "chat_template.jinja")
	if b, err := os.ReadFile(jinjaPath); err == nil {
		jinjaFile = b
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("chat: %w", err)
	}
	gc, err := os.ReadFile(filepath.Join(dir, "generation_config.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("chat: %w", err)
	}
	cfg, err := parse(tc, gc, jinjaFile)
	if err != nil {
		return nil, fmt.Errorf("chat: %s: %w", dir, err)
	}
	return cfg, nil
}

// ParseConfig builds a Config from the contents of tokenizer_config.json
// and of generation_config.json (nil when the model has none).
func ParseConfig(tokenizerConfig, generationConfig []byte) (*Config, error) {
	cfg, err := parse(tokenizerConfig, generationConfig, nil)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	return cfg, nil
}

type tokenizerConfig struct {
	ChatTemplate json.RawMessage            `json:"chat_template"`
	BOSToken     json.RawMessage            `json:"bos_token"`
	EOSToken     json.RawMessage            `json:"eos_token"`
	AddedTokens  map[string]json.RawMessage `json:"added_tokens_decoder"`
}

func parse(tc, gc, jinjaFile []byte) (*Config, error) {
	var raw tokenizerConfig
	if err := json.Unmarshal(tc, &raw); err != nil {
		return nil, fmt.Errorf("tokenizer_config.json: %w", err)
	}
	cfg := &Config{Templates: map[string]string{}, AddedTokens: map[int]string{}}
	if err := parseTemplates(raw.ChatTemplate, cfg.Templates); err != nil {
		return nil, fmt.Errorf("tokenizer_config.json: chat_template: %w", err)
	}
	if jinjaFile != nil {
		cfg.Templates[DefaultTemplate] = string(jinjaFile)
	}
	var err error
	if cfg.BOSToken, err = tokenText(raw.BOSToken); err != nil {
		return nil, fmt.Errorf("tokenizer_config.json: bos_token: %w", err)
	}
	if cfg.EOSToken, err = tokenText(raw.EOSToken); err != nil {
		return nil, fmt.Errorf("tokenizer_config.json: eos_token: %w", err)
	}
	ids := map[string]int{}
	for k, v := range raw.AddedTokens {
		id, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("tokenizer_config.json: added_tokens_decoder: key %q is not a token id", k)
		}
		text, err := tokenText(v)
		if err != nil {
			return nil, fmt.Errorf("tokenizer_config.json: added_tokens_decoder[%s]: %w", k, err)
		}
		cfg.AddedTokens[id] = text
		if old, ok := ids[text]; !ok || id < old {
			ids[text] = id
		}
	}
	var genIDs []int
	if gc != nil {
		if genIDs, err = generationEOS(gc); err != nil {
			return nil, fmt.Errorf("generation_config.json: %w", err)
		}
	}

	addStop := func(s string) {
		if s != "" && !slices.Contains(cfg.Stop, s) {
			cfg.Stop = append(cfg.Stop, s)
		}
	}
	addStop(cfg.EOSToken)
	for _, id := range genIDs {
		addStop(cfg.AddedTokens[id])
	}
	src := cfg.Templates[DefaultTemplate]
	for _, m := range EndOfTurnMarkers {
		if _, ok := ids[m]; ok && strings.Contains(src, m) {
			addStop(m)
		}
	}
	idSet := map[int]bool{}
	for _, id := range genIDs {
		idSet[id] = true
	}
	for _, s := range cfg.Stop {
		if id, ok := ids[s]; ok {
			idSet[id] = true
		}
	}
	for id := range idSet {
		cfg.StopTokenIDs = append(cfg.StopTokenIDs, id)
	}
	sort.Ints(cfg.StopTokenIDs)
	return cfg, nil
}

// parseTemplates reads chat_template: absent or null, a string, or a list
// of {"name", "template"} objects.
func parseTemplates(raw json.RawMessage, out map[string]string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		out[DefaultTemplate] = s
		return nil
	}
	var list []struct {
		Name     *string `json:"name"`
		Template *string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return errors.New("want a string or a list of {\"name\", \"template\"} objects")
	}
	for i, t := range list {
		if t.Name == nil || t.Template == nil {
			return fmt.Errorf("entry %d: want both \"name\" and \"template\"", i)
		}
		if _, dup := out[*t.Name]; dup {
			return fmt.Errorf("entry %d: template %q named twice", i, *t.Name)
		}
		out[*t.Name] = *t.Template
	}
	return nil
}

// tokenText reads a special token given as a string, null, or an
// AddedToken object ({"content": ..., "__type": "AddedToken", ...}).
func tokenText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Content == nil {
		return "", errors.New("want a string, null or an object with \"content\"")
	}
	return *obj.Content, nil
}

// generationEOS reads generation_config.json's eos_token_id: absent, null,
// a number or a list of numbers.
func generationEOS(gc []byte) ([]int, error) {
	var raw struct {
		EOS json.RawMessage `json:"eos_token_id"`
	}
	if err := json.Unmarshal(gc, &raw); err != nil {
		return nil, err
	}
	if len(raw.EOS) == 0 || string(raw.EOS) == "null" {
		return nil, nil
	}
	var one int
	if err := json.Unmarshal(raw.EOS, &one); err == nil {
		return []int{one}, nil
	}
	var many []int
	if err := json.Unmarshal(raw.EOS, &many); err != nil {
		return nil, errors.New("eos_token_id: want a token id or a list of token ids")
	}
	return many, nil
}

// Template compiles the chat template of the given name, with the config's
// BOS and EOS tokens; the name "" means DefaultTemplate. It returns an
// error when the config has no template of that name or the source does
// not compile.
func (c *Config) Template(name string) (*Template, error) {
	if name == "" {
		name = DefaultTemplate
	}
	src, ok := c.Templates[name]
	if !ok {
		if len(c.Templates) == 0 {
			return nil, errors.New("chat: the model has no chat template")
		}
		names := make([]string, 0, len(c.Templates))
		for n := range c.Templates {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("chat: no chat template named %q (the model has %s)", name, strings.Join(names, ", "))
	}
	t, err := Compile(src, c.BOSToken, c.EOSToken)
	if err != nil {
		return nil, fmt.Errorf("%w (template %q)", err, name)
	}
	return t, nil
}
