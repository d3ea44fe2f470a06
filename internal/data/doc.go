// Package data loads text corpora for cmd/train, turns them into token ids
// with a character-level or a byte-level BPE tokenizer, splits them into
// train and validation parts and draws random (input, target) batches from a
// seeded generator.
//
// Token ids are kept in one flat []uint16 (or []uint32 for vocabularies
// larger than 65536), never as one Go object per token, so a 100 MB corpus
// costs about 200 MB of memory. On Linux the corpus file itself is
// memory-mapped while it is being tokenized; a pipe or FIFO is read as a
// stream.
//
// Training the BPE tokenizer takes O(n log n) time in the n bytes of
// distinct chunks of its (at most BPETrainBytes) sample, and stops when its
// context is cancelled.
//
// The package is internal: it is a helper of the train command, not part of
// Wick's library API.
package data
