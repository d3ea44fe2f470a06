package tokenizer_test

import (
	"reflect"
	"testing"

	"github.com/wickml/wick/tokenizer"
)

// TestTypesNameNoOtherPackage checks that the exported tokenizer types'
// fields, followed through pointers, slices, maps, arrays and structs, name
// no type from another package: gophernotes loads every package such a
// type comes from and warns about each generic declaration in it
// (hash/maphash and sync among them).
func TestTypesNameNoOtherPackage(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		if p := typ.PkgPath(); p != "" && p != "github.com/wickml/wick/tokenizer" {
			t.Errorf("%s has type %v from package %s", path, typ, p)
			return
		}
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
			walk(path, typ.Elem())
		case reflect.Map:
			walk(path, typ.Key())
			walk(path, typ.Elem())
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	walk("BPE", reflect.TypeFor[tokenizer.BPE]())
	walk("Char", reflect.TypeFor[tokenizer.Char]())
	walk("GPT2", reflect.TypeFor[tokenizer.GPT2]())
}
