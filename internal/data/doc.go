// Package data loads text corpora for cmd/train, turns them into token ids
// with a tokenizer of package tokenizer (Encode), splits them into train and
// validation parts and draws random (input, target) batches from a seeded
// generator.
//
// Token ids are kept in one flat []uint16 (or []uint32 for vocabularies
// larger than 65536), never as one Go object per token, so a 100 MB corpus
// costs about 200 MB of memory. On Linux the corpus file itself is
// memory-mapped while it is being tokenized; a pipe or FIFO is read as a
// stream.
//
// OpenPrepared reads instead the dataset layout nanoGPT's prepare.py
// scripts write, train.bin and val.bin (uint16 ids, memory-mapped) with
// meta.pkl (ReadMetaPkl: the char vocabulary, read from the subset of
// Python's pickle format nanoGPT writes) when the ids are characters.
//
// The package is internal: it is a helper of the train command, not part of
// Wick's library API.
package data
