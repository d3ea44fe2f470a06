package gpt2vocab

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestFiles checks that the embedded files decompress to OpenAI's
// encoder.json and vocab.bpe (their SHA-256 as published with them).
func TestFiles(t *testing.T) {
	for _, f := range []struct {
		name string
		get  func() ([]byte, error)
		sha  string
	}{
		{"encoder.json", EncoderJSON, "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"},
		{"vocab.bpe", VocabBPE, "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"},
	} {
		b, err := f.get()
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		if got := hex.EncodeToString(s[:]); got != f.sha {
			t.Errorf("%s: %d bytes with SHA-256 %s, want %s", f.name, len(b), got, f.sha)
		}
	}
	if b, _ := VocabBPE(); !bytes.HasPrefix(b, []byte("#version: 0.2\n")) {
		t.Errorf("vocab.bpe starts %q", b[:20])
	}
}

func TestCorrupt(t *testing.T) {
	if _, err := gunzip("x", "not gzip"); err == nil {
		t.Error("gunzip of text that is not gzip: no error")
	}
	if _, err := gunzip("x", encoderGz[:1000]); err == nil {
		t.Error("gunzip of a truncated stream: no error")
	}
}
