package tokenizer

import (
	"encoding/binary"
	"hash/fnv"
	"testing"
)

// TestHFClassRanges checks the classes the tokenizer.json pre-tokenizers
// use against the sum of the ranges that scripts/gen_tokenizer_json_golden.sh
// probed from Hugging Face tokenizers, so that a table regenerated from
// another source (hfClassRanges may be tiktoken's classRanges) cannot change
// them unseen.
func TestHFClassRanges(t *testing.T) {
	h := fnv.New64a()
	var b [9]byte
	for _, r := range hfClassRanges {
		binary.LittleEndian.PutUint32(b[0:], uint32(r.lo))
		binary.LittleEndian.PutUint32(b[4:], uint32(r.hi))
		b[8] = r.class
		h.Write(b[:])
	}
	if got := h.Sum64(); got != hfClassRangesSum {
		t.Fatalf("hfClassRanges sums to %#016x, the ranges probed from tokenizers to %#016x: regenerate tokenizer/hf_classes.go (scripts/gen_tokenizer_json_golden.sh)", got, uint64(hfClassRangesSum))
	}
}
