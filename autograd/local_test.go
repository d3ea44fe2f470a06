package autograd

import "testing"

func TestWithLocal(t *testing.T) {
	type k1 struct{}
	type k2 struct{}
	if Local(k1{}) != nil {
		t.Fatal("a value outside WithLocal")
	}
	WithLocal(k1{}, 1, func() {
		WithLocal(k2{}, 2, func() {
			WithLocal(k1{}, 3, func() {
				if Local(k1{}) != 3 || Local(k2{}) != 2 {
					t.Errorf("inner: %v %v", Local(k1{}), Local(k2{}))
				}
			})
			if Local(k1{}) != 1 {
				t.Errorf("outer value not restored: %v", Local(k1{}))
			}
			done := make(chan any)
			go func() { done <- Local(k1{}) }()
			if v := <-done; v != nil {
				t.Errorf("another goroutine sees %v", v)
			}
		})
	})
	if Local(k1{}) != nil || localCount.Load() != 0 {
		t.Error("values left behind")
	}
}
