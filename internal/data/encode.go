package data

import (
	"context"

	"github.com/wickml/wick/tokenizer"
)

// Encode returns the ids of text under tok, stored compactly (see Tokens).
// A tokenizer.EachEncoder (the char and bpe tokenizers) encodes text
// block by block, returning ctx's error soon after ctx is cancelled and an
// error naming the first character a char vocabulary lacks; any other
// tokenizer encodes the whole text with Encode.
func Encode(ctx context.Context, tok tokenizer.Tokenizer, text []byte) (*Tokens, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, ok := tok.(tokenizer.EachEncoder)
	if !ok {
		return TokensFromInts(tok.Encode(string(text)), tok.VocabSize()), nil
	}
	out := newTokens(tok.VocabSize(), len(text)/3+16)
	err := e.EncodeEach(ctx, text, func(ids []int) {
		for _, id := range ids {
			out.append(id)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
