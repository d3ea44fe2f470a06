// Package tokenizer turns text into token ids and back.
//
// Every tokenizer implements Tokenizer: Encode, Decode and VocabSize, plus
// Kind and MarshalJSON so that it can be saved (in a checkpoint, say) and
// read back with Unmarshal. The saved form is a JSON object whose "kind"
// field names the tokenizer: "char", "bpe" or "gpt2". Char and BPE save
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
// # Concurrency
//
// A Tokenizer's methods may be called from many goroutines at once. Char
// and BPE change nothing after they are made; GPT2 keeps a cache of the words it has merged, guarded by locks, so that words
// that repeat are merged once.
package tokenizer
