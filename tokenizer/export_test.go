package tokenizer

// NewGPT2Cold returns a copy of g with an empty word cache, for benchmarks
// of encoding text for the first time.
func NewGPT2Cold(g *GPT2) *GPT2 {
	c := *g
	c.cache = newWordCache()
	return &c
}

// MergeBoth returns the ids of piece merged by the linear scan and by the
// heap.
func MergeBoth(g *GPT2, piece string) (linear, heap []int) {
	if len(piece) <= linearMax {
		linear = g.appendMerged(nil, piece)
	}
	return linear, g.appendMergedHeap(nil, piece)
}

// PieceLen is pieceLen.
var PieceLen = pieceLen

// NFC is nfc, Hugging Face tokenizers' NFC normalizer.
var NFC = nfc

// ByteChar returns the character that stands for byte b in byte-level
// vocabulary files.
func ByteChar(b byte) string { return string(byteRune[b]) }

// NewHFCold returns a copy of t with an empty word cache.
func NewHFCold(t *HF) *HF {
	c := *t
	c.cache = newWordCache()
	return &c
}

// Cl100kPieceLen is cl100kPieceLen, the matcher of Llama 3's (maxDigits 3)
// and Qwen's (1) split patterns.
var Cl100kPieceLen = cl100kPieceLen
