package main

// nanoGPT's prepared datasets: --dataset=NAME reads data/NAME/train.bin and
// val.bin (uint16 token ids, memory-mapped) as nanoGPT's train.py does, with
// the character vocabulary of meta.pkl (shakespeare_char) or, without one,
// GPT-2's ids (shakespeare, openwebtext). And nanoGPT's own checkpoint,
// out_dir/ckpt.pt, which train does not read, is named when it is all an
// out_dir holds.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/wickml/wick/internal/data"
	"github.com/wickml/wick/tokenizer"
)

// preparedTokenizer returns the tokenizer of p's ids and sets --tokenizer
// to its kind: the char tokenizer of meta.pkl's vocabulary, or nil for
// GPT-2's (which the caller loads as for --tokenizer=gpt2). On a resumed
// run (meta) it checks that the checkpoint's tokenizer is that one and
// returns the checkpoint's.
func preparedTokenizer(o *options, p *data.Prepared, meta *ckptMeta, pre *pretrainedModel) (tokenizer.Tokenizer, error) {
	kind := "gpt2"
	var char tokenizer.Tokenizer
	if p.Vocab != nil {
		kind = "char"
		var err error
		if char, err = charTokenizer(p); err != nil {
			return nil, err
		}
	}
	from := fmt.Sprintf("--dataset=%s (%s)", o.Dataset, p.Dir)
	what := "GPT-2's token ids (no meta.pkl)"
	if char != nil {
		what = fmt.Sprintf("ids of meta.pkl's %d characters", char.VocabSize())
	}
	switch {
	case meta != nil:
		if meta.tok.Kind() != kind {
			return nil, fmt.Errorf("tokenizer mismatch: %s holds %s, but the checkpoint %s has a %s tokenizer", from, what, ckptPath(o.OutDir), meta.tok.Kind())
		}
		if char != nil {
			a, _ := char.MarshalJSON()
			b, _ := meta.tok.MarshalJSON()
			if string(a) != string(b) {
				return nil, fmt.Errorf("tokenizer mismatch: the vocabulary of %s is not the checkpoint's (%s)", filepath.Join(p.Dir, "meta.pkl"), ckptPath(o.OutDir))
			}
		}
		return meta.tok, nil
	case pre != nil && char != nil:
		return nil, fmt.Errorf("--init_from=%s reads GPT-2's token ids, but %s holds %s", o.InitFrom, from, what)
	case o.explicitFlags["tokenizer"] && o.Tokenizer != kind:
		return nil, fmt.Errorf("--tokenizer=%s does not fit %s: it holds %s (leave --tokenizer out)", o.Tokenizer, from, what)
	}
	o.Tokenizer = kind
	return char, nil
}

// charTokenizer returns the char tokenizer of p's meta.pkl. Its ids are
// those of meta.pkl only when the characters come in code point order, as
// nanoGPT's prepare.py sorts them.
func charTokenizer(p *data.Prepared) (tokenizer.Tokenizer, error) {
	meta := filepath.Join(p.Dir, "meta.pkl")
	var chars strings.Builder
	for id, s := range p.Vocab.Itos {
		if utf8.RuneCountInString(s) != 1 {
			return nil, fmt.Errorf("%s: token %d is %q, not one character: train reads the character vocabularies of nanoGPT's prepare.py", meta, id, s)
		}
		chars.WriteString(s)
	}
	js, err := json.Marshal(map[string]string{"kind": "char", "chars": chars.String()})
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.Unmarshal(js)
	if err != nil {
		return nil, fmt.Errorf("%s: the characters are not in code point order, as nanoGPT's prepare.py sorts them (sorted(set(data)))", meta)
	}
	return tok, nil
}

// checkPrepared checks that every id of p is one of tok's, when the files
// are small enough to scan (up to 1 GiB; larger ones, such as openwebtext's
// 17 GB, are trusted: an id out of range then stops the run at its batch),
// and that each split holds a block and its target.
func checkPrepared(o *options, p *data.Prepared, tok tokenizer.Tokenizer) error {
	for _, s := range []struct {
		name string
		ids  *data.Tokens
	}{{"train.bin", p.Train}, {"val.bin", p.Val}} {
		path := filepath.Join(p.Dir, s.name)
		if s.ids.Len() < o.BlockSize+1 {
			return fmt.Errorf("%s holds %d tokens, but a batch needs block_size+1 = %d; use a smaller --block_size", path, s.ids.Len(), o.BlockSize+1)
		}
		if p.Bytes <= 1<<30 {
			if m := s.ids.Max(); m >= tok.VocabSize() {
				return fmt.Errorf("%s holds id %d, outside the %s tokenizer's %d tokens", path, m, tok.Kind(), tok.VocabSize())
			}
		}
	}
	return nil
}

// nanoGPTCkpt is the name of nanoGPT's checkpoint in its out_dir.
const nanoGPTCkpt = "ckpt.pt"

// nanoGPTCheckpointError returns the error for an out_dir that holds
// nanoGPT's ckpt.pt but no checkpoint of train's, or nil when it holds no
// ckpt.pt.
func nanoGPTCheckpointError(outDir string) error {
	pt := filepath.Join(outDir, nanoGPTCkpt)
	if _, err := os.Stat(pt); err != nil {
		return nil
	}
	return fmt.Errorf("%s is nanoGPT's PyTorch checkpoint, which train does not read: train resumes and samples its own %s (train without --resume writes one into this out_dir and leaves ckpt.pt alone; train sample --init_from=DIR samples a Hugging Face GPT-2 directory)", pt, ckptName)
}
