package data

// A reader of the subset of Python's pickle format that nanoGPT's
// data/*/prepare.py writes into meta.pkl: pickle.dump of a dict
// {'vocab_size': int, 'itos': {int: str}, 'stoi': {str: int}} with Python 3's
// default protocol (4; 2, 3 and 5 use the same opcodes for these types).
// The reader is a small stack machine over the opcodes of dicts, lists,
// tuples, str, int, float, bool and None and the memo (the strings of itos
// come back in stoi as references); it runs no code: any other opcode, such
// as GLOBAL or REDUCE, which would build an arbitrary object, is an error.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"strings"
	"unicode/utf8"
)

// pyDict is a Python dict, its items in insertion order.
type pyDict struct {
	keys, vals []any
}

// pyList is a Python list (a pointer, so that the memo shares it).
type pyList struct {
	items []any
}

// pyMark is the MARK opcode's entry on the stack.
type pyMark struct{}

// pyNone is Python's None.
type pyNone struct{}

// Opcodes of the pickle subset (Lib/pickletools.py names them).
const (
	opMark           = '('
	opStop           = '.'
	opBinInt         = 'J'
	opBinInt1        = 'K'
	opBinInt2        = 'M'
	opNone           = 'N'
	opBinFloat       = 'G'
	opBinUnicode     = 'X'
	opAppend         = 'a'
	opAppends        = 'e'
	opBinGet         = 'h'
	opLongBinGet     = 'j'
	opEmptyList      = ']'
	opBinPut         = 'q'
	opLongBinPut     = 'r'
	opSetItem        = 's'
	opTuple          = 't'
	opEmptyTuple     = ')'
	opSetItems       = 'u'
	opEmptyDict      = '}'
	opProto          = 0x80
	opTuple1         = 0x85
	opTuple2         = 0x86
	opTuple3         = 0x87
	opNewTrue        = 0x88
	opNewFalse       = 0x89
	opLong1          = 0x8a
	opShortBinUnicde = 0x8c
	opBinUnicode8    = 0x8d
	opMemoize        = 0x94
	opFrame          = 0x95
)

// unpickle returns the object the pickle b holds: int64 (or *big.Int),
// float64, string, bool, pyNone, *pyList, []any (a tuple) or *pyDict.
func unpickle(b []byte) (any, error) {
	var stack []any
	memo := map[uint64]any{}
	pos := 0
	take := func(n uint64) ([]byte, error) {
		if n > uint64(len(b)-pos) {
			return nil, errors.New("truncated")
		}
		s := b[pos : pos+int(n)]
		pos += int(n)
		return s, nil
	}
	pop := func() (any, error) {
		if len(stack) == 0 {
			return nil, errors.New("stack underflow")
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := v.(pyMark); ok {
			return nil, errors.New("unexpected MARK")
		}
		return v, nil
	}
	// popMark pops the items above the topmost MARK and the MARK.
	popMark := func() ([]any, error) {
		for i := len(stack) - 1; i >= 0; i-- {
			if _, ok := stack[i].(pyMark); ok {
				items := append([]any(nil), stack[i+1:]...)
				stack = stack[:i]
				return items, nil
			}
		}
		return nil, errors.New("no MARK")
	}
	top := func() (any, error) {
		if len(stack) == 0 {
			return nil, errors.New("stack underflow")
		}
		return stack[len(stack)-1], nil
	}
	for {
		at := pos
		op, err := take(1)
		if err != nil {
			return nil, fmt.Errorf("at byte %d: no STOP opcode: %w", at, err)
		}
		fail := func(err error) (any, error) {
			return nil, fmt.Errorf("at byte %d (opcode %#02x): %w", at, op[0], err)
		}
		var arg []byte
		switch op[0] {
		case opProto:
			if arg, err = take(1); err == nil && arg[0] > 5 {
				err = fmt.Errorf("pickle protocol %d is newer than 5", arg[0])
			}
		case opFrame:
			_, err = take(8) // frames only group opcodes
		case opStop:
			v, err := pop()
			if err != nil {
				return fail(err)
			}
			return v, nil
		case opMark:
			stack = append(stack, pyMark{})
		case opNone:
			stack = append(stack, pyNone{})
		case opNewTrue, opNewFalse:
			stack = append(stack, op[0] == opNewTrue)
		case opBinInt1:
			if arg, err = take(1); err == nil {
				stack = append(stack, int64(arg[0]))
			}
		case opBinInt2:
			if arg, err = take(2); err == nil {
				stack = append(stack, int64(binary.LittleEndian.Uint16(arg)))
			}
		case opBinInt:
			if arg, err = take(4); err == nil {
				stack = append(stack, int64(int32(binary.LittleEndian.Uint32(arg))))
			}
		case opLong1:
			var n []byte
			if n, err = take(1); err == nil {
				if arg, err = take(uint64(n[0])); err == nil {
					stack = append(stack, pyLong(arg))
				}
			}
		case opBinFloat:
			if arg, err = take(8); err == nil {
				stack = append(stack, math.Float64frombits(binary.BigEndian.Uint64(arg)))
			}
		case opShortBinUnicde, opBinUnicode, opBinUnicode8:
			width := map[byte]int{opShortBinUnicde: 1, opBinUnicode: 4, opBinUnicode8: 8}[op[0]]
			var nb []byte
			if nb, err = take(uint64(width)); err == nil {
				var n uint64
				for i := width - 1; i >= 0; i-- {
					n = n<<8 | uint64(nb[i])
				}
				if arg, err = take(n); err == nil {
					if !utf8.Valid(arg) {
						err = errors.New("a str that is not UTF-8")
					}
					stack = append(stack, string(arg))
				}
			}
		case opEmptyDict:
			stack = append(stack, &pyDict{})
		case opEmptyList:
			stack = append(stack, &pyList{})
		case opEmptyTuple:
			stack = append(stack, []any{})
		case opTuple1, opTuple2, opTuple3:
			n := int(op[0]-opTuple1) + 1
			if len(stack) < n {
				err = errors.New("stack underflow")
				break
			}
			t := append([]any(nil), stack[len(stack)-n:]...)
			stack = append(stack[:len(stack)-n], t)
		case opTuple:
			var items []any
			if items, err = popMark(); err == nil {
				stack = append(stack, items)
			}
		case opAppend, opAppends:
			var items []any
			if op[0] == opAppends {
				items, err = popMark()
			} else {
				var v any
				v, err = pop()
				items = []any{v}
			}
			if err == nil {
				var l any
				if l, err = top(); err == nil {
					list, ok := l.(*pyList)
					if !ok {
						err = fmt.Errorf("APPEND to a %s, not a list", pyType(l))
						break
					}
					list.items = append(list.items, items...)
				}
			}
		case opSetItem, opSetItems:
			var items []any
			if op[0] == opSetItems {
				items, err = popMark()
			} else {
				var k, v any
				if v, err = pop(); err == nil {
					k, err = pop()
				}
				items = []any{k, v}
			}
			if err == nil && len(items)%2 != 0 {
				err = errors.New("SETITEMS with an odd number of items")
			}
			if err == nil {
				var d any
				if d, err = top(); err == nil {
					dict, ok := d.(*pyDict)
					if !ok {
						err = fmt.Errorf("SETITEM on a %s, not a dict", pyType(d))
						break
					}
					for i := 0; i < len(items); i += 2 {
						dict.keys = append(dict.keys, items[i])
						dict.vals = append(dict.vals, items[i+1])
					}
				}
			}
		case opMemoize:
			var v any
			if v, err = top(); err == nil {
				memo[uint64(len(memo))] = v
			}
		case opBinPut, opLongBinPut:
			var v any
			if arg, err = take(map[byte]uint64{opBinPut: 1, opLongBinPut: 4}[op[0]]); err == nil {
				if v, err = top(); err == nil {
					memo[leUint(arg)] = v
				}
			}
		case opBinGet, opLongBinGet:
			if arg, err = take(map[byte]uint64{opBinGet: 1, opLongBinGet: 4}[op[0]]); err == nil {
				v, ok := memo[leUint(arg)]
				if !ok {
					err = fmt.Errorf("memo entry %d is not defined", leUint(arg))
				}
				stack = append(stack, v)
			}
		default:
			return fail(fmt.Errorf("opcode %s is outside the subset nanoGPT's meta.pkl uses (dicts of str and int)", opName(op[0])))
		}
		if err != nil {
			return fail(err)
		}
	}
}

// opName names a few opcodes a pickle of other objects holds.
func opName(op byte) string {
	names := map[byte]string{'c': "GLOBAL", 0x93: "STACK_GLOBAL", 'R': "REDUCE", 'b': "BUILD", 0x81: "NEWOBJ", 'S': "STRING", 'U': "SHORT_BINSTRING", 'B': "BINBYTES", 'C': "SHORT_BINBYTES", 'P': "PERSID", 'Q': "BINPERSID"}
	if n, ok := names[op]; ok {
		return fmt.Sprintf("%s (%#02x)", n, op)
	}
	return fmt.Sprintf("%#02x", op)
}

func leUint(b []byte) uint64 {
	var n uint64
	for i := len(b) - 1; i >= 0; i-- {
		n = n<<8 | uint64(b[i])
	}
	return n
}

// pyLong decodes LONG1's little-endian two's-complement bytes: an int64
// when it fits, else a *big.Int.
func pyLong(b []byte) any {
	if len(b) == 0 {
		return int64(0)
	}
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	n := new(big.Int).SetBytes(be)
	if b[len(b)-1]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	if n.IsInt64() {
		return n.Int64()
	}
	return n
}

// get returns d's value for the str key k.
func (d *pyDict) get(k string) (any, bool) {
	for i, key := range d.keys {
		if s, ok := key.(string); ok && s == k {
			return d.vals[i], true
		}
	}
	return nil, false
}

// CharVocab is the character vocabulary in a nanoGPT meta.pkl: token i is
// the string Itos[i].
type CharVocab struct {
	Itos []string
}

// ReadMetaPkl reads the meta.pkl that nanoGPT's data/*/prepare.py writes
// beside train.bin and val.bin: vocab_size, itos and stoi, which must
// agree (itos gives every id from 0 to vocab_size-1 a token, stoi is its
// inverse). Errors name the file and the problem.
func ReadMetaPkl(path string) (*CharVocab, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("meta.pkl: %w", err)
	}
	v, err := unpickle(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not a pickle of nanoGPT's vocabulary: %v", path, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s (nanoGPT's prepare.py writes {'vocab_size': n, 'itos': {id: char}, 'stoi': {char: id}})", path, fmt.Sprintf(format, args...))
	}
	d, ok := v.(*pyDict)
	if !ok {
		return nil, bad("holds a %s, not a dict", pyType(v))
	}
	field := func(name string) (any, error) {
		x, ok := d.get(name)
		if !ok {
			return nil, bad("has no %q", name)
		}
		return x, nil
	}
	vs, err := field("vocab_size")
	if err != nil {
		return nil, err
	}
	n, ok := vs.(int64)
	if !ok || n <= 0 || n > 1<<16 {
		return nil, bad("vocab_size is %v, not an int from 1 to 65536 (train.bin holds uint16 ids)", pyRepr(vs))
	}
	itosV, err := field("itos")
	if err != nil {
		return nil, err
	}
	stoiV, err := field("stoi")
	if err != nil {
		return nil, err
	}
	itos, ok1 := itosV.(*pyDict)
	stoi, ok2 := stoiV.(*pyDict)
	if !ok1 || !ok2 {
		return nil, bad("itos is a %s and stoi a %s, want two dicts", pyType(itosV), pyType(stoiV))
	}
	if len(itos.keys) != int(n) || len(stoi.keys) != int(n) {
		return nil, bad("vocab_size is %d, but itos has %d entries and stoi %d", n, len(itos.keys), len(stoi.keys))
	}
	out := &CharVocab{Itos: make([]string, n)}
	seen := make([]bool, n)
	for i, k := range itos.keys {
		id, ok := k.(int64)
		s, okS := itos.vals[i].(string)
		if !ok || !okS || id < 0 || id >= n || seen[id] {
			return nil, bad("itos maps %s to %s: want each id from 0 to %d once, to a str", pyRepr(k), pyRepr(itos.vals[i]), n-1)
		}
		seen[id] = true
		out.Itos[id] = s
	}
	for i, k := range stoi.keys {
		s, okS := k.(string)
		id, ok := stoi.vals[i].(int64)
		if !okS || !ok || id < 0 || id >= n || out.Itos[id] != s {
			return nil, bad("stoi maps %s to %s, which is not the inverse of itos", pyRepr(k), pyRepr(stoi.vals[i]))
		}
	}
	return out, nil
}

func pyType(v any) string {
	switch v.(type) {
	case int64, *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case bool:
		return "bool"
	case pyNone:
		return "None"
	case *pyList:
		return "list"
	case []any:
		return "tuple"
	case *pyDict:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(x, "'", `\'`) + "'"
	case pyNone:
		return "None"
	case *pyDict:
		return "a dict"
	case *pyList:
		return "a list"
	case []any:
		return "a tuple"
	}
	return fmt.Sprint(v)
}
