package plugintest

import (
	"reflect"
	"slices"
	"sync"
	"testing"
)

type inner struct{ mu sync.Mutex }

type outer struct {
	ok   []map[string]*outer
	in   [2]inner
	hide any
}

// TestForeignTypes checks that ForeignTypes follows arrays, maps, slices,
// pointers and structs to a field of another package's type, and stops
// at fields of the package's own types and interfaces.
func TestForeignTypes(t *testing.T) {
	got := ForeignTypes("outer", reflect.TypeFor[outer](), "github.com/wickml/wick/internal/plugintest")
	want := []string{"outer.in.mu has type sync.Mutex from package sync"}
	if !slices.Equal(got, want) {
		t.Errorf("ForeignTypes = %q, want %q", got, want)
	}
}
