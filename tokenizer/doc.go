// Package tokenizer turns text into token ids and back.
//
// Every tokenizer implements Tokenizer: Encode, Decode and VocabSize, plus
// Kind and MarshalJSON so that it can be saved (in a checkpoint, say) and
// read back with Unmarshal. The saved form is a JSON object whose "kind"
// field names the tokenizer; it is the format cmd/train's character ("char")
// and trained byte-level BPE ("bpe") tokenizers already write, so those can
// move into this package behind the same interface with their checkpoints
// still loading. (They live in internal/data for now; their Kind, VocabSize,
// Decode and MarshalJSON methods already have this interface's signatures,
// and their Encode, which takes bytes and reports characters outside a
// character vocabulary as an error, is the one method the move changes.)
//
// GPT2 is GPT-2's byte-level BPE, loaded from the vocabulary files of
// OpenAI's release (encoder.json and vocab.bpe) or of Hugging Face's
// (vocab.json and merges.txt) with LoadGPT2. Its Encode gives the same ids
// as tiktoken's "gpt2" encoding with "<|endoftext|>" allowed as a special
// token (nanoGPT's encode(..., allowed_special={"<|endoftext|>"})): the
// same pre-tokenization pattern,
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// scanned by hand (Go's regexp has no lookahead), the same byte-to-unicode
// mapping of the vocabulary files and the same merge order.
//
// # Concurrency
//
// A Tokenizer's methods may be called from many goroutines at once. GPT2
// keeps a cache of the words it has merged, guarded by locks, so that words
// that repeat are merged once.
package tokenizer
