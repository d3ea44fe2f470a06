package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// cutSpace splits "left right" at its only space.
func cutSpace(s string) (string, string, bool) {
	l, r, ok := strings.Cut(s, " ")
	if !ok || l == "" || r == "" || strings.Contains(r, " ") {
		return "", "", false
	}
	return l, r, true
}

// tokenizerFileJSON is the top level of a tokenizer.json.
type tokenizerFileJSON struct {
	AddedTokens   []addedTokenJSON `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	PostProcessor json.RawMessage  `json:"post_processor"`
	Decoder       json.RawMessage  `json:"decoder"`
	Model         json.RawMessage  `json:"model"`
}

type addedTokenJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

// componentJSON holds every field the supported components use.
type componentJSON struct {
	Type          string            `json:"type"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	Pretokenizers []json.RawMessage `json:"pretokenizers"`
	Processors    []json.RawMessage `json:"processors"`
	Decoders      []json.RawMessage `json:"decoders"`
	Prepend       string            `json:"prepend"`
	Pattern       *struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	} `json:"pattern"`
	Content          *string         `json:"content"`
	Behavior         string          `json:"behavior"`
	Invert           bool            `json:"invert"`
	AddPrefixSpace   *bool           `json:"add_prefix_space"`
	UseRegex         *bool           `json:"use_regex"`
	IndividualDigits bool            `json:"individual_digits"`
	Replacement      string          `json:"replacement"`
	PrependScheme    string          `json:"prepend_scheme"`
	Split            *bool           `json:"split"`
	Start            int             `json:"start"`
	Stop             int             `json:"stop"`
	Single           json.RawMessage `json:"single"`
	SpecialTokens    map[string]struct {
		IDs []int `json:"ids"`
	} `json:"special_tokens"`
	Cls []json.RawMessage `json:"cls"`
	Sep []json.RawMessage `json:"sep"`
}

func parseComponent(b json.RawMessage, what string) (*componentJSON, error) {
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	var c componentJSON
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &c, nil
}

func buildHF(raw []byte) (*HF, error) {
	var f tokenizerFileJSON
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	t := &HF{raw: raw, cache: newWordCache()}
	var err error
	if t.normalizer, err = buildNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if err = t.buildPre(f.PreTokenizer); err != nil {
		return nil, err
	}
	if len(f.Model) == 0 || string(f.Model) == "null" {
		return nil, errors.New("no model")
	}
	var mt struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(f.Model, &mt); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if mt.Type == "" {
		// Files written before tokenizers 0.10 leave out the model's type;
		// those with merges are BPE.
		var probe struct {
			Merges json.RawMessage `json:"merges"`
		}
		if json.Unmarshal(f.Model, &probe) == nil && len(probe.Merges) > 0 {
			mt.Type = "BPE"
		}
	}
	if mt.Type != "BPE" {
		return nil, fmt.Errorf("model %s is not supported (this package reads BPE models)", typeName(mt.Type))
	}
	var bj bpeJSON
	if err := json.Unmarshal(f.Model, &bj); err != nil {
		return nil, fmt.Errorf("model BPE: %w", err)
	}
	if t.model, err = newHFBPE(&bj, t.byteLevel != nil); err != nil {
		return nil, err
	}
	t.vocabSize = len(t.model.tokens)
	if err = t.buildAdded(f.AddedTokens); err != nil {
		return nil, err
	}
	if t.post, err = t.buildPost(f.PostProcessor); err != nil {
		return nil, err
	}
	if err = t.buildDecoder(f.Decoder); err != nil {
		return nil, err
	}
	return t, nil
}

func typeName(s string) string {
	if s == "" {
		return "of no type"
	}
	return s
}

func buildNormalizer(b json.RawMessage) (normalizer, error) {
	c, err := parseComponent(b, "normalizer")
	if c == nil || err != nil {
		return nil, err
	}
	switch c.Type {
	case "NFC":
		return nfcNormalizer{}, nil
	case "Prepend":
		return prependNormalizer{c.Prepend}, nil
	case "Replace":
		if c.Pattern == nil || c.Pattern.String == nil || *c.Pattern.String == "" || c.Content == nil {
			return nil, errors.New("normalizer Replace: only a non-empty String pattern is supported")
		}
		return replaceNormalizer{*c.Pattern.String, *c.Content}, nil
	case "Sequence":
		var q sequenceNormalizer
		for _, x := range c.Normalizers {
			n, err := buildNormalizer(x)
			if err != nil {
				return nil, err
			}
			if n != nil {
				q = append(q, n)
			}
		}
		return q, nil
	}
	return nil, fmt.Errorf("normalizer %s is not supported (this package reads NFC, Prepend, Replace and Sequence)", typeName(c.Type))
}

func (t *HF) buildPre(b json.RawMessage) error {
	c, err := parseComponent(b, "pre_tokenizer")
	if c == nil || err != nil {
		return err
	}
	var steps []*componentJSON
	if c.Type == "Sequence" {
		for _, x := range c.Pretokenizers {
			s, err := parseComponent(x, "pre_tokenizer")
			if err != nil {
				return err
			}
			if s != nil && s.Type == "Sequence" {
				return errors.New("pre_tokenizer Sequence within a Sequence is not supported")
			}
			if s != nil {
				steps = append(steps, s)
			}
		}
	} else {
		steps = []*componentJSON{c}
	}
	for i, s := range steps {
		switch s.Type {
		case "ByteLevel":
			if i != len(steps)-1 {
				return errors.New("pre_tokenizer ByteLevel is supported only as the last pre-tokenizer")
			}
			t.byteLevel = &byteLevelPT{addPrefixSpace: s.AddPrefixSpace == nil || *s.AddPrefixSpace, useRegex: s.UseRegex == nil || *s.UseRegex}
		case "Split":
			if s.Pattern == nil || s.Pattern.Regex == nil {
				return errors.New("pre_tokenizer Split: only Regex patterns are supported")
			}
			m, ok := splitMatchers[*s.Pattern.Regex]
			if !ok {
				return fmt.Errorf("pre_tokenizer Split: pattern %q is not supported (this package matches GPT-2's, Llama 3's and Qwen's)", *s.Pattern.Regex)
			}
			if s.Behavior != "Isolated" || s.Invert {
				return fmt.Errorf("pre_tokenizer Split: behavior %q with invert %v is not supported (want Isolated, false)", s.Behavior, s.Invert)
			}
			t.pre = append(t.pre, splitPT{m})
		case "Digits":
			t.pre = append(t.pre, digitsPT{s.IndividualDigits})
		case "Metaspace":
			r := s.Replacement
			if utf8.RuneCountInString(r) != 1 {
				return fmt.Errorf("pre_tokenizer Metaspace: replacement %q is not one character", r)
			}
			p := metaspacePT{replacement: r, split_: s.Split == nil || *s.Split}
			switch s.PrependScheme {
			case "always":
				p.prepend = prependAlways
			case "first":
				p.prepend = prependFirst
			case "never":
				p.prepend = prependNever
			case "":
				p.prepend = prependNever
				if s.AddPrefixSpace == nil || *s.AddPrefixSpace {
					p.prepend = prependAlways
				}
			default:
				return fmt.Errorf("pre_tokenizer Metaspace: prepend_scheme %q is not supported", s.PrependScheme)
			}
			t.pre = append(t.pre, p)
		default:
			return fmt.Errorf("pre_tokenizer %s is not supported (this package reads ByteLevel, Split, Digits, Metaspace and Sequence)", typeName(s.Type))
		}
	}
	return nil
}

func (t *HF) buildAdded(list []addedTokenJSON) error {
	if len(list) > maxAdded {
		return fmt.Errorf("added_tokens: %d tokens, more than the %d this package reads", len(list), maxAdded)
	}
	a := &addedVocab{byContent: map[string]int{}, byID: map[int]*addedToken{}}
	t.added = a
	for _, j := range list {
		if id := j.ID; id < 0 || id >= maxVocab {
			return fmt.Errorf("added_tokens: %q has id %d, outside [0, %d)", j.Content, id, maxVocab)
		}
		if len(j.Content) > maxTokenBytes {
			return fmt.Errorf("added_tokens: token of id %d is %d bytes long (at most %d)", j.ID, len(j.Content), maxTokenBytes)
		}
	}
	maxAddedID := -1
	// Ids as tokenizers gives them, whatever the file says: the id of a
	// token already added or in the model's vocabulary, else the next
	// after the model's vocabulary.
	next := len(t.model.vocab)
	for _, j := range list {
		if j.Content == "" {
			continue
		}
		tok := &addedToken{content: j.Content, singleWord: j.SingleWord, lstrip: j.LStrip, rstrip: j.RStrip,
			normalized: j.Normalized == nil || *j.Normalized, special: j.Special}
		if id, ok := a.byContent[j.Content]; ok {
			tok.id = id
		} else if id, ok := t.model.vocab[j.Content]; ok {
			tok.id = int(id)
		} else {
			// The next id after the model's (the file's own id, in every
			// file tokenizers writes).
			tok.id = next
			next++
		}
		tok.decoded = tok.content
		if tok.normalized && t.normalizer != nil {
			tok.decoded = t.normalizer.normalize(tok.content)
		}
		a.byContent[tok.content] = tok.id
		a.byID[tok.id] = tok
		maxAddedID = max(maxAddedID, tok.id)
	}
	for _, tok := range a.byID {
		if tok.normalized {
			if tok.decoded != "" {
				a.norm.add(tok.decoded, tok)
			}
		} else {
			a.raw.add(tok.content, tok)
		}
	}
	t.vocabSize = max(t.vocabSize, maxAddedID+1)
	return nil
}

// specialIDs returns the ids of a post-processor's special token given as
// [token, id] (Bert and Roberta).
func specialIDs(p []json.RawMessage, what string) ([]int, error) {
	var id int
	if len(p) != 2 || json.Unmarshal(p[1], &id) != nil {
		return nil, fmt.Errorf("post_processor %s: want [token, id]", what)
	}
	return []int{id}, nil
}

func (t *HF) buildPost(b json.RawMessage) ([]postStep, error) {
	c, err := parseComponent(b, "post_processor")
	if c == nil || err != nil {
		return nil, err
	}
	switch c.Type {
	case "ByteLevel":
		return nil, nil
	case "Sequence":
		var out []postStep
		for _, x := range c.Processors {
			p, err := t.buildPost(x)
			if err != nil {
				return nil, err
			}
			out = append(out, p...)
		}
		return out, nil
	case "BertProcessing", "RobertaProcessing":
		cls, err := specialIDs(c.Cls, c.Type)
		if err != nil {
			return nil, err
		}
		sep, err := specialIDs(c.Sep, c.Type)
		if err != nil {
			return nil, err
		}
		return []postStep{templatePost{[][]int{cls, nil, sep}}}, nil
	case "TemplateProcessing":
		var single []struct {
			SpecialToken *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
			Sequence *struct {
				ID string `json:"id"`
			} `json:"Sequence"`
		}
		if err := json.Unmarshal(c.Single, &single); err != nil {
			return nil, fmt.Errorf("post_processor TemplateProcessing: single: %w", err)
		}
		var p templatePost
		for _, s := range single {
			switch {
			case s.Sequence != nil:
				p.parts = append(p.parts, nil)
			case s.SpecialToken != nil:
				st, ok := c.SpecialTokens[s.SpecialToken.ID]
				if !ok {
					return nil, fmt.Errorf("post_processor TemplateProcessing: special token %q is not in special_tokens", s.SpecialToken.ID)
				}
				p.parts = append(p.parts, append([]int{}, st.IDs...))
			default:
				return nil, errors.New("post_processor TemplateProcessing: a piece of the single template is neither SpecialToken nor Sequence")
			}
		}
		return []postStep{p}, nil
	}
	return nil, fmt.Errorf("post_processor %s is not supported (this package reads TemplateProcessing, ByteLevel, BertProcessing, RobertaProcessing and Sequence)", typeName(c.Type))
}

func (t *HF) buildDecoder(b json.RawMessage) error {
	c, err := parseComponent(b, "decoder")
	if c == nil || err != nil {
		return err
	}
	ds, err := buildDecoders(c)
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []decoder{}
	}
	t.decoders = ds
	return nil
}

func buildDecoders(c *componentJSON) ([]decoder, error) {
	switch c.Type {
	case "ByteLevel":
		return []decoder{byteLevelDecoder{}}, nil
	case "ByteFallback":
		return []decoder{byteFallbackDecoder{}}, nil
	case "Fuse":
		return []decoder{fuseDecoder{}}, nil
	case "Strip":
		var r []rune
		if c.Content != nil {
			r = []rune(*c.Content)
		}
		if len(r) != 1 || c.Start < 0 || c.Stop < 0 {
			return nil, errors.New("decoder Strip: want one character of content and non-negative start and stop")
		}
		return []decoder{stripDecoder{r[0], c.Start, c.Stop}}, nil
	case "Replace":
		if c.Pattern == nil || c.Pattern.String == nil || *c.Pattern.String == "" || c.Content == nil {
			return nil, errors.New("decoder Replace: only a non-empty String pattern is supported")
		}
		return []decoder{replaceDecoder{*c.Pattern.String, *c.Content}}, nil
	case "Metaspace":
		if utf8.RuneCountInString(c.Replacement) != 1 {
			return nil, fmt.Errorf("decoder Metaspace: replacement %q is not one character", c.Replacement)
		}
		never := c.PrependScheme == "never" || c.PrependScheme == "" && c.AddPrefixSpace != nil && !*c.AddPrefixSpace
		return []decoder{metaspaceDecoder{c.Replacement, never}}, nil
	case "Sequence":
		var out []decoder
		for _, x := range c.Decoders {
			s, err := parseComponent(x, "decoder")
			if err != nil {
				return nil, err
			}
			if s == nil {
				continue
			}
			d, err := buildDecoders(s)
			if err != nil {
				return nil, err
			}
			out = append(out, d...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("decoder %s is not supported (this package reads ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace and Sequence)", typeName(c.Type))
}
