package tensor

import (
	"errors"
	"testing"
)

// TestDTypeTable checks the dtype table: each dtype's name and size, and a
// panic naming the value for anything that is not a dtype (no default size).
func TestDTypeTable(t *testing.T) {
	for _, c := range []struct {
		dt   DType
		name string
		size int
	}{{Float32, "float32", 4}, {Int64, "int64", 8}, {BFloat16, "bfloat16", 2}, {Float16, "float16", 2}} {
		if got := c.dt.String(); got != c.name {
			t.Errorf("%d.String() = %q, want %q", int(c.dt), got, c.name)
		}
		if got := c.dt.ItemSize(); got != c.size {
			t.Errorf("%s.ItemSize() = %d, want %d", c.dt, got, c.size)
		}
		if got := empty("test", cpu, c.dt, []int{3}).DType(); got != c.dt {
			t.Errorf("storage of %s reports %s", c.dt, got)
		}
	}
	for _, bad := range []DType{-1, DType(len(dtypes)), 99} {
		err := Catch(func() { bad.ItemSize() })
		var e *Error
		if !errors.As(err, &e) || e.Op != "DType.ItemSize" {
			t.Errorf("%s.ItemSize(): error %v, want a *tensor.Error of DType.ItemSize", bad, err)
		}
	}
}
