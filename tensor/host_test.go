package tensor

import "testing"

func TestHostFloat32sSharesStorage(t *testing.T) {
	x := Arange(0, 12, 1).Reshape(3, 4)
	row := x.Select(0, 1)
	h := row.HostFloat32s()
	if len(h) != 4 || h[0] != 4 || h[3] != 7 {
		t.Fatalf("HostFloat32s of row 1 = %v, want [4 5 6 7]", h)
	}
	h[2] = 100
	if got := x.At(1, 2); got != 100 {
		t.Fatalf("a write through HostFloat32s did not reach the tensor: x[1,2] = %v", got)
	}
	if err := Catch(func() { x.T().HostFloat32s() }); err == nil {
		t.Fatal("HostFloat32s of a transposed view did not panic")
	}
	if err := Catch(func() { FromInts([]int{1, 2}).HostFloat32s() }); err == nil {
		t.Fatal("HostFloat32s of an Int64 tensor did not panic")
	}
}
