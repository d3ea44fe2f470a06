package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A BPE model's vocabulary and merges are most of a tokenizer.json (a few
// hundred thousand strings); they are read by this small scanner, several
// times faster than encoding/json's reflection, which reads the rest. The
// whole file has been checked to be valid JSON before.

// jsonScanner reads JSON values from b.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) expect(c byte) error {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != c {
		return fmt.Errorf("expected %q at byte %d", c, s.i)
	}
	s.i++
	return nil
}

// peek returns the next non-space byte, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// str reads a string.
func (s *jsonScanner) str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			v := string(s.b[start:s.i])
			s.i++
			return v, nil
		}
		if c == '\\' {
			return s.strEscaped(start)
		}
		s.i++
	}
	return "", errors.New("unterminated string")
}

// strEscaped reads the rest of a string with escapes that starts at start.
func (s *jsonScanner) strEscaped(start int) (string, error) {
	out := append([]byte(nil), s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return string(out), nil
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			break
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", errors.New("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					save := s.i
					s.i += 2
					if r2, ok = s.hex4(); !ok {
						s.i = save
						r2 = -1
					}
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
				} else {
					r = utf8.RuneError
					if r2 >= 0 {
						s.i -= 6 // the second escape is a character of its own
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", fmt.Errorf("bad escape \\%c", e)
		}
	}
	return "", errors.New("unterminated string")
}

func (s *jsonScanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.b[s.i:s.i+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	s.i += 4
	return rune(v), true
}

// integer reads a non-negative integer that fits an int.
func (s *jsonScanner) integer() (int, error) {
	s.space()
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E' || s.b[s.i] == '-') || start == s.i {
		return 0, fmt.Errorf("expected a token id at byte %d", start)
	}
	return strconv.Atoi(string(s.b[start:s.i]))
}

// scanVocab reads a vocabulary object {"token": id, ...}; limit bounds the
// number of tokens.
func scanVocab(b json.RawMessage, limit int) (map[string]int, error) {
	s := &jsonScanner{b: b}
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	v := make(map[string]int, len(b)/16)
	if s.peek() == '}' {
		return v, nil
	}
	for {
		k, err := s.str()
		if err != nil {
			return nil, err
		}
		if err := s.expect(':'); err != nil {
			return nil, err
		}
		id, err := s.integer()
		if err != nil {
			return nil, err
		}
		if _, dup := v[k]; dup {
			return nil, fmt.Errorf("token %q is listed twice", k)
		}
		v[k] = id
		if len(v) > limit {
			return nil, fmt.Errorf("more than the %d tokens this package reads", limit)
		}
		if s.peek() == '}' {
			return v, nil
		}
		if err := s.expect(','); err != nil {
			return nil, err
		}
	}
}

// scanMerges reads a list of merges, each "left right" (older files) or
// ["left", "right"]; limit bounds their number.
func scanMerges(b json.RawMessage, limit int) ([][2]string, error) {
	s := &jsonScanner{b: b}
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	if err := s.expect('['); err != nil {
		return nil, err
	}
	var out [][2]string
	if s.peek() == ']' {
		return out, nil
	}
	for {
		if len(out) >= limit {
			return nil, fmt.Errorf("more than the %d merges this package reads", limit)
		}
		if s.peek() == '[' {
			s.i++
			l, err := s.str()
			if err != nil {
				return nil, err
			}
			if err := s.expect(','); err != nil {
				return nil, err
			}
			r, err := s.str()
			if err != nil {
				return nil, err
			}
			if err := s.expect(']'); err != nil {
				return nil, fmt.Errorf("merge %d is not a pair of tokens", len(out))
			}
			out = append(out, [2]string{l, r})
		} else {
			m, err := s.str()
			if err != nil {
				return nil, err
			}
			l, r, ok := cutSpace(m)
			if !ok {
				return nil, fmt.Errorf("merge %d (%q) is not two tokens separated by a space", len(out), m)
			}
			out = append(out, [2]string{l, r})
		}
		if s.peek() == ']' {
			return out, nil
		}
		if err := s.expect(','); err != nil {
			return nil, err
		}
	}
}
