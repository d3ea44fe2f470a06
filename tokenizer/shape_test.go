package tokenizer_test

import (
	"reflect"
	"testing"

	"github.com/wickml/wick/internal/plugintest"
	"github.com/wickml/wick/tokenizer"
)

// TestTypesNameNoOtherPackage checks that the exported tokenizer types'
// fields, followed through pointers, slices, maps, arrays and structs, name
// no type from another package: gophernotes loads every package such a
// type comes from and warns about each generic declaration in it
// (hash/maphash and sync among them).
func TestTypesNameNoOtherPackage(t *testing.T) {
	const pkg = "github.com/wickml/wick/tokenizer"
	for name, typ := range map[string]reflect.Type{
		"BPE":  reflect.TypeFor[tokenizer.BPE](),
		"Char": reflect.TypeFor[tokenizer.Char](),
		"GPT2": reflect.TypeFor[tokenizer.GPT2](),
	} {
		for _, e := range plugintest.ForeignTypes(name, typ, pkg) {
			t.Error(e)
		}
	}
}
