package nn

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/wickml/wick/tensor"
)

// To moves the whole module m to dev in one call, like PyTorch's
// module.to(device): every tensor its exported fields reach (parameters,
// with their gradients, and buffers), through pointers, slices, arrays,
// interfaces (Sequential, ModuleList, Container children, Param) and
// nested structs, is replaced by its copy on dev. Tensors already on dev
// are kept as they are, so To on the module's own device changes nothing.
//
// Unlike PyTorch's, a moved parameter is a new tensor (a Tensor's device
// is fixed): build the optimizer after To, as PyTorch advises for
// module.cuda(), or rebuild it from m.Parameters(). A moved parameter
// requires grad when the original did; tied parameters (GPT's lm_head and
// wte) stay one tensor; the copies are not recorded on the tape.
//
// To returns an error, and changes nothing, when dev is not available (a
// build without GPU support, no such GPU). It panics with a *tensor.Error
// naming the parameter if one stays behind because only an unexported
// field holds it (the others have moved then), and like NewContainer if m
// embeds a Container that leaves out a field holding parameters.
func To(m Module, dev tensor.Device) error {
	if _, err := tensor.BackendFor(dev); err != nil {
		return fmt.Errorf("nn: To: %w", err)
	}
	checkModule("To", m)
	moveModule("To", m, func(t *tensor.Tensor) *tensor.Tensor {
		if t.Device() == dev {
			return t
		}
		return t.Detach().To(dev)
	})
	return nil
}

var paramModuleType = reflect.TypeFor[paramModule]()

// moveModule replaces every tensor that m's exported fields reach by
// move's copy of it (detached; requiring grad and with the gradient moved
// too where the original had them), each tensor once, and panics if a
// parameter of m is not one of the results.
func moveModule(op string, m Module, move func(*tensor.Tensor) *tensor.Tensor) {
	moved := map[*tensor.Tensor]*tensor.Tensor{}
	newOf := func(t *tensor.Tensor) *tensor.Tensor {
		if n, ok := moved[t]; ok {
			return n
		}
		n := move(t)
		if n != t && n.DType() == tensor.Float32 { // nn keeps 16-bit parameters frozen (inference, LoRA bases)
			if t.IsRequiringGrad() && t.IsLeaf() {
				n.RequiresGrad()
			}
			if g := t.Grad(); g != nil {
				n.SetGrad(move(g))
			}
		}
		moved[t], moved[n] = n, n
		return n
	}
	type seenKey struct {
		p uintptr
		t reflect.Type
	}
	seen := map[seenKey]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				return
			}
			if v.Type() == tensorType {
				if v.CanSet() {
					v.Set(reflect.ValueOf(newOf(v.Interface().(*tensor.Tensor))))
				}
				return
			}
			if k := (seenKey{v.Pointer(), v.Type()}); !seen[k] {
				seen[k] = true
				walk(v.Elem())
			}
		case reflect.Interface:
			if v.IsNil() {
				return
			}
			e := v.Elem()
			if e.Type() == paramModuleType {
				if v.CanSet() {
					v.Set(reflect.ValueOf(paramModule{newOf(e.Interface().(paramModule).t)}))
				}
				return
			}
			walk(e)
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(m))
	for _, p := range m.NamedParameters() {
		if moved[p.Param] != p.Param {
			panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("parameter %q (%s%v on %s) stays behind: no exported field of %T reaches it", p.Name, p.Param.DType(), p.Param.Shape(), p.Param.Device(), m)})
		}
	}
}

// ParameterCount returns the number of elements of m's parameters, tied
// tensors counted once (PyTorch's sum(p.numel() for p in
// model.parameters())). It panics like NewContainer if m embeds a
// Container that leaves out a field holding parameters.
func ParameterCount(m Module) int {
	checkModule("ParameterCount", m)
	return NumParams(m)
}

// Summary returns m as print(model) shows it in PyTorch, the tree of
// modules with the parameter count of each (m's String, or its type when
// it has none), followed by the totals:
//
//	GPT(  # 12,345 params
//	  ...
//	)
//	parameters: 12,345 (trainable 12,345)
//
// Trainable parameters are those that require grad (LoRA freezes the
// others). It panics like ParameterCount.
func Summary(m Module) string {
	checkModule("Summary", m)
	var b strings.Builder
	if s, ok := m.(fmt.Stringer); ok {
		b.WriteString(s.String())
	} else {
		fmt.Fprintf(&b, "%T", m)
	}
	total, trainable := 0, 0
	for _, p := range m.Parameters() {
		n := p.Numel()
		total += n
		if p.IsRequiringGrad() {
			trainable += n
		}
	}
	fmt.Fprintf(&b, "\nparameters: %s (trainable %s)", groupDigits(total), groupDigits(trainable))
	return b.String()
}
