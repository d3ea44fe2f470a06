package tokenizer

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// nfc returns s in Unicode normalization form C, as Hugging Face
// tokenizers' NFC normalizer computes it (its tables, in nfc_tables.go,
// are of an older Unicode version than Go's or Python's): canonical
// decomposition, canonical ordering of combining marks, then canonical
// composition. Text with no character that could change (all ASCII, say)
// is returned as it is.
func nfc(s string) string {
	t := nfcData()
	i := 0
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			break
		}
	}
	if i == len(s) {
		return s
	}
	quick := true
	for _, r := range s[i:] {
		if r >= 0xc0 && (t.unstable[r] || isHangulV(r) || isHangulT(r)) {
			quick = false
			break
		}
	}
	if quick {
		return s
	}
	// Decompose, then order each run of combining marks by class.
	d := make([]rune, 0, len(s))
	for _, r := range s {
		d = t.appendDecomposed(d, r)
	}
	for i := 0; i < len(d); {
		if t.ccc[d[i]] == 0 {
			i++
			continue
		}
		j := i
		for j < len(d) && t.ccc[d[j]] != 0 {
			j++
		}
		run := d[i:j]
		sort.SliceStable(run, func(a, b int) bool { return t.ccc[run[a]] < t.ccc[run[b]] })
		i = j
	}
	// Compose: each character joins the last starter when nothing between
	// them blocks it (a character of class zero, or of a class at least
	// its own).
	out := d[:0]
	starter := -1
	for _, c := range d {
		cc := t.ccc[c]
		if starter >= 0 {
			last := len(out) - 1
			if last == starter || t.ccc[out[last]] != 0 && t.ccc[out[last]] < cc {
				if comp, ok := t.compose(out[starter], c); ok {
					out[starter] = comp
					continue
				}
			}
		}
		if cc == 0 {
			starter = len(out)
		}
		out = append(out, c)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range out {
		b.WriteRune(r)
	}
	return b.String()
}

// Hangul syllables decompose and compose by arithmetic.
const (
	hangulS      = 0xac00
	hangulL      = 0x1100
	hangulV      = 0x1161
	hangulT      = 0x11a7
	hangulLCount = 19
	hangulVCount = 21
	hangulTCount = 28
	hangulN      = hangulVCount * hangulTCount
	hangulSCount = hangulLCount * hangulN
)

func isHangulV(r rune) bool { return r >= hangulV && r < hangulV+hangulVCount }
func isHangulT(r rune) bool { return r > hangulT && r < hangulT+hangulTCount }

// nfcTables holds nfc_tables.go as maps.
type nfcTables struct {
	ccc      map[rune]uint8
	decomp   map[rune][]rune
	pairs    map[uint64]rune
	unstable map[rune]bool // characters that can change text under NFC
}

var (
	nfcOnce sync.Once
	nfcTab  *nfcTables
)

// nfcData returns the tables, built on first use (they are read-only
// afterwards).
func nfcData() *nfcTables {
	nfcOnce.Do(func() {
		t := &nfcTables{
			ccc:      make(map[rune]uint8, len(nfcCCC)),
			decomp:   map[rune][]rune{},
			pairs:    make(map[uint64]rune, len(nfcPairs)),
			unstable: map[rune]bool{},
		}
		for _, e := range nfcCCC {
			t.ccc[e[0]] = uint8(e[1])
			t.unstable[e[0]] = true
		}
		for i := 0; i < len(nfcDecomp); {
			j := i + 1
			for nfcDecomp[j] != 0 {
				j++
			}
			d := make([]rune, j-i-1)
			for k := range d {
				d[k] = nfcDecomp[i+1+k]
			}
			t.decomp[nfcDecomp[i]] = d
			i = j + 1
		}
		for _, p := range nfcPairs {
			t.pairs[uint64(p[0])<<32|uint64(p[1])] = p[2]
			t.unstable[p[1]] = true
		}
		// A decomposable character is stable when it composes back to
		// itself (a primary composite); singletons and exclusions are not.
		for r, d := range t.decomp {
			if len(d) < 2 {
				t.unstable[r] = true
				continue
			}
			c, ok := d[0], true
			for _, x := range d[1:] {
				if c, ok = t.pairs[uint64(c)<<32|uint64(x)]; !ok {
					break
				}
			}
			if !ok || c != r {
				t.unstable[r] = true
			}
		}
		nfcTab = t
	})
	return nfcTab
}

func (t *nfcTables) appendDecomposed(d []rune, r rune) []rune {
	if r >= hangulS && r < hangulS+hangulSCount {
		s := r - hangulS
		d = append(d, hangulL+s/hangulN, hangulV+(s%hangulN)/hangulTCount)
		if ti := s % hangulTCount; ti != 0 {
			d = append(d, hangulT+ti)
		}
		return d
	}
	if x, ok := t.decomp[r]; ok {
		return append(d, x...)
	}
	return append(d, r)
}

func (t *nfcTables) compose(a, b rune) (rune, bool) {
	if a >= hangulL && a < hangulL+hangulLCount && isHangulV(b) {
		return hangulS + ((a-hangulL)*hangulVCount+b-hangulV)*hangulTCount, true
	}
	if a >= hangulS && a < hangulS+hangulSCount && (a-hangulS)%hangulTCount == 0 && isHangulT(b) {
		return a + b - hangulT, true
	}
	c, ok := t.pairs[uint64(a)<<32|uint64(b)]
	return c, ok
}
