package data

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestReadMetaPkl reads the meta.pkl nanoGPT's shakespeare_char/prepare.py
// wrote with Python 3's pickle.dump (protocol 4, with frames and the memo)
// for cmd/train's fixtures.
func TestReadMetaPkl(t *testing.T) {
	v, err := ReadMetaPkl("../../cmd/train/testdata/nanogpt/data/shakespeare_char/meta.pkl")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile("../../cmd/train/testdata/nanogpt/data/shakespeare_char/input.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range string(text) {
		if !slices.Contains(want, string(c)) {
			want = append(want, string(c))
		}
	}
	slices.Sort(want)
	if !slices.Equal(v.Itos, want) {
		t.Errorf("itos = %q, want %q", v.Itos, want)
	}
}

// meta returns a protocol-2 pickle (no frames, BINPUT memo) of
// {'vocab_size': n, 'itos': {0: 'a', 1: 'b'}, 'stoi': stoi} with the given
// pieces.
func meta(vocab string, stoi string) []byte {
	return []byte("\x80\x02}q\x00(X\x0a\x00\x00\x00vocab_sizeq\x01" + vocab +
		"X\x04\x00\x00\x00itosq\x02}q\x03(K\x00X\x01\x00\x00\x00aq\x04K\x01X\x01\x00\x00\x00bq\x05u" +
		"X\x04\x00\x00\x00stoiq\x06}q\x07(" + stoi + "uu.")
}

func TestUnpickle(t *testing.T) {
	dir := t.TempDir()
	read := func(b []byte) (*CharVocab, error) {
		p := dir + "/meta.pkl"
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return ReadMetaPkl(p)
	}
	good := meta("K\x02", "h\x04K\x00h\x05K\x01")
	if v, err := read(good); err != nil || !slices.Equal(v.Itos, []string{"a", "b"}) {
		t.Fatalf("protocol 2 with BINGET: %v, %v", v, err)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", good[:40], "not a pickle"},
		{"no stop", good[:len(good)-1], "no STOP"},
		{"code", []byte("\x80\x04cos\nsystem\n."), "GLOBAL"},
		{"protocol 9", []byte("\x80\x09N."), "protocol 9"},
		{"not a dict", []byte("\x80\x04]."), "holds a list, not a dict"},
		{"vocab_size mismatch", meta("K\x03", "h\x04K\x00h\x05K\x01"), "vocab_size is 3, but itos has 2 entries"},
		{"vocab_size str", meta("X\x01\x00\x00\x002", "h\x04K\x00h\x05K\x01"), "vocab_size is '2'"},
		{"stoi not the inverse", meta("K\x02", "h\x04K\x01h\x05K\x00"), "not the inverse of itos"},
		{"undefined memo", meta("K\x02", "h\x30K\x00h\x05K\x01"), "memo entry 48"},
		{"missing field", []byte("\x80\x04}."), `has no "vocab_size"`},
	} {
		_, err := read(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "meta.pkl") {
			t.Errorf("%s: error %v, want one naming meta.pkl and %q", c.name, err, c.want)
		}
	}
	// the other value types a pickle of plain data holds
	v, err := unpickle([]byte("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00(\x88\x89NG?\xf8\x00\x00\x00\x00\x00\x00J\xff\xff\xff\xff\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01M\x00\x01)]K\x07at\x85."))
	if err != nil {
		t.Fatal(err)
	}
	tup := v.([]any)[0].([]any)
	if len(tup) != 9 || tup[0] != true || tup[1] != false || tup[2] != (pyNone{}) || tup[3] != 1.5 || tup[4] != int64(-1) ||
		tup[5].(interface{ String() string }).String() != "18446744073709551616" || tup[6] != int64(256) || len(tup[7].([]any)) != 0 || tup[8].(*pyList).items[0] != int64(7) {
		t.Errorf("unpickled %#v", tup)
	}
}
