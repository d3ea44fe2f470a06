// Package tokenizer turns text into token ids and back.
//
// Every tokenizer implements Tokenizer: Encode, Decode and VocabSize, plus
// Kind and MarshalJSON so that it can be saved (in a checkpoint, say) and
// read back with Unmarshal. The saved form is a JSON object whose "kind"
// field names the tokenizer: "char", "bpe", "gpt2" or "hf". Char and BPE save
// exactly what cmd/train has always written into its checkpoints, so every
// checkpoint of train loads.
//
// Char has one id per character of the text it is made from (NewChar),
// in code point order, like nanoGPT's shakespeare_char. A character
// outside that vocabulary has no id: Encode leaves it out, and
// EncodeStrict (the method, or the function of the same name for any
// Tokenizer) returns an error naming it, which is what a program wants for
// a user's prompt.
//
// BPE is byte-level byte-pair encoding trained on a corpus (TrainBPE,
// TrainBPEContext; or Train by kind): ids 0-255 are the bytes, and each
// later id merges two earlier ones, so any text encodes. Training takes
// O(n log n) time in the n bytes of distinct words of its (at most
// BPETrainBytes) sample and stops when its context is cancelled.
//
// Char and BPE also implement EachEncoder, which encodes a large corpus a
// block of ids at a time and stops when a context is cancelled.
//
//	tok, err := tokenizer.TrainBPE(text, 1024)
//	ids := tok.Encode("To be, or not to be")
//	fmt.Println(tok.Decode(ids)) // To be, or not to be
//
// GPT2 is GPT-2's byte-level BPE: NewGPT2 returns it from the vocabulary
// Wick embeds (OpenAI's, under its Modified MIT License), and LoadGPT2
// reads it from the vocabulary files of OpenAI's release (encoder.json and
// vocab.bpe) or of Hugging Face's (vocab.json and merges.txt). Its Encode
// gives the same ids as tiktoken's "gpt2" encoding with "<|endoftext|>"
// allowed as a special token (nanoGPT's encode(...,
// allowed_special={"<|endoftext|>"})): the same pre-tokenization pattern,
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// scanned by hand (Go's regexp has no lookahead), the same byte-to-unicode
// mapping of the vocabulary files and the same merge order.
//
// HF is a tokenizer defined by a Hugging Face tokenizer.json file, what
// the Llama, Mistral, SmolLM and Qwen families ship: LoadPretrained reads a
// model directory's tokenizer.json (or, lacking one, GPT-2's vocab.json and
// merges.txt), LoadTokenizerJSON and ParseTokenizerJSON a file or its
// contents. Its Encode gives the ids of Hugging Face tokenizers'
// encode(text, add_special_tokens=False) and its Decode the text of its
// decode(ids, skip_special_tokens=False), token for token; EncodeSpecial
// (the method, or the function of the same name for any Tokenizer) adds
// what the post-processor adds to a prompt, such as Llama 2's and
// Mistral's "<s>". It reads
//
//   - BPE models (with ignore_merges, byte_fallback, unk_token and
//     fuse_unk);
//   - the normalizers NFC, Prepend, Replace (string patterns) and Sequence;
//   - the pre-tokenizers ByteLevel (last), Split with GPT-2's, Llama 3's or
//     Qwen's pattern (matched by hand, as GPT2 does: Go's regexp has no
//     lookahead), Digits, Metaspace and Sequence;
//   - added tokens with their single_word, lstrip, rstrip and normalized
//     flags, found in the text as tokenizers finds them;
//   - the post-processors TemplateProcessing, BertProcessing,
//     RobertaProcessing, ByteLevel and Sequence;
//   - the decoders ByteLevel, ByteFallback, Fuse, Strip, Replace,
//     Metaspace and Sequence.
//
// Anything else (Unigram and WordPiece models, other normalizers and
// pre-tokenizers, other split patterns) fails at load with an error that
// names it. The character classes of the split patterns and the tables of
// NFC are probed from tokenizers itself (hf_classes.go, nfc_tables.go),
// whose Unicode tables are older than Go's. A file's size, its number of
// tokens and merges and each token's length are bounded, and a merge whose
// parts or result the vocabulary lacks is an error naming it.
//
// # Concurrency
//
// A Tokenizer's methods may be called from many goroutines at once. Char
// and BPE change nothing after they are made; GPT2 and HF keep a cache of
// the words they have merged, guarded by locks, so that words that repeat
// are merged once.
package tokenizer
