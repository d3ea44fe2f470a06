package nn

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/wickml/wick/tensor"
)

// Layer is a Module whose Forward maps one tensor to one tensor: what
// Sequential chains. Linear, Embedding, LayerNorm, Dropout, the activation
// modules (ReLU, GELU, Tanh, Sigmoid), Block and Sequential itself are
// Layers.
type Layer interface {
	Module
	Forward(x *tensor.Tensor) *tensor.Tensor
}

// Sequential applies its layers in order, like torch.nn.Sequential:
//
//	mlp := nn.Sequential{nn.NewLinear(4, 16, true), nn.ReLU{}, nn.NewLinear(16, 2, true)}
//	y := mlp.Forward(x)
//
// Its parameters are named by position as PyTorch names them ("0.weight",
// "0.bias", "2.weight", "2.bias": layers without parameters keep their
// index), so a state dict moves by name between it and a torch.nn.Sequential
// of the same layers. An empty Sequential is the identity. It is a slice:
// build, append and index it as one.
type Sequential []Layer

var _ Layer = Sequential(nil)

// Forward applies the layers to x in order. It panics if a layer is nil.
func (s Sequential) Forward(x *tensor.Tensor) *tensor.Tensor {
	for i, l := range s {
		if l == nil {
			panic(&tensor.Error{Pkg: "nn", Op: "Sequential", Msg: fmt.Sprintf("layer %d of %d is nil", i, len(s))})
		}
		x = l.Forward(x)
	}
	return x
}

// NamedParameters returns the layers' parameters, each prefixed with its
// layer's index ("1.weight"); a tensor shared by two layers is listed once,
// under its first name, like PyTorch's named_parameters. It panics if a
// layer is nil.
func (s Sequential) NamedParameters() []NamedParam { return namedChildren("Sequential", s.children()) }

// Parameters returns the tensors of NamedParameters, in order.
func (s Sequential) Parameters() []*tensor.Tensor { return params(s.NamedParameters()) }

// Train puts every layer in training mode.
func (s Sequential) Train() { eachChild(s.children(), Module.Train) }

// Eval puts every layer in evaluation mode.
func (s Sequential) Eval() { eachChild(s.children(), Module.Eval) }

// String prints the layers like PyTorch.
func (s Sequential) String() string { return childrenString("Sequential", s.children()) }

func (s Sequential) children() []NamedModule {
	out := make([]NamedModule, len(s))
	for i, l := range s {
		out[i] = NamedModule{Name: strconv.Itoa(i)}
		if l != nil {
			out[i].Module = l
		}
	}
	return out
}

// ModuleList holds modules named by position, like torch.nn.ModuleList: it
// has no Forward of its own; the code that owns it calls its modules.
// Inside a Container under the name "layers", its parameters are named
// "layers.0.weight", "layers.1.bias" and so on.
type ModuleList []Module

var _ Module = ModuleList(nil)

// NamedParameters returns the modules' parameters, each prefixed with its
// module's index; a shared tensor is listed once. It panics if a module is
// nil.
func (l ModuleList) NamedParameters() []NamedParam {
	return namedChildren("ModuleList", l.children())
}

// Parameters returns the tensors of NamedParameters, in order.
func (l ModuleList) Parameters() []*tensor.Tensor { return params(l.NamedParameters()) }

// Train puts every module in training mode.
func (l ModuleList) Train() { eachChild(l.children(), Module.Train) }

// Eval puts every module in evaluation mode.
func (l ModuleList) Eval() { eachChild(l.children(), Module.Eval) }

// String prints the modules like PyTorch.
func (l ModuleList) String() string { return childrenString("ModuleList", l.children()) }

func (l ModuleList) children() []NamedModule {
	out := make([]NamedModule, len(l))
	for i, m := range l {
		out[i] = NamedModule{Name: strconv.Itoa(i), Module: m}
	}
	return out
}

// NamedModule is a child module with the attribute name PyTorch would give
// it ("fc1", "layers", "head").
type NamedModule struct {
	Name   string
	Module Module
}

// Named returns the child m under name, for a Container.
func Named(name string, m Module) NamedModule { return NamedModule{Name: name, Module: m} }

// Param returns a parameter tensor that a module holds directly (PyTorch's
// self.scale = nn.Parameter(...)) as a child of a Container: its name is
// name itself.
func Param(name string, t *tensor.Tensor) NamedModule {
	return NamedModule{Name: name, Module: paramModule{t}}
}

// Container gives a user-defined module the Module methods from an explicit
// list of its named children, in the order PyTorch would register them.
// Embed it in a struct and fill it in the constructor with NewContainer,
// which checks the list against the struct's fields:
//
//	type MLP struct {
//		nn.Container
//		FC1, FC2 *nn.Linear
//	}
//
//	func NewMLP() *MLP {
//		m := &MLP{FC1: nn.NewLinear(4, 16, true), FC2: nn.NewLinear(16, 2, true)}
//		m.Container = nn.NewContainer(m, nn.Named("fc1", m.FC1), nn.Named("fc2", m.FC2))
//		return m
//	}
//
// *MLP then has NamedParameters ("fc1.weight", "fc1.bias", "fc2.weight",
// "fc2.bias"), Parameters, Train, Eval and String, and saves and loads with
// SaveFile and LoadFile. The list says what the module holds, and what it
// names: nothing is registered by reflection. A literal (nn.Container{...})
// works too, but is checked only when the whole module reaches a function
// that sees its struct (see NewContainer). Keep the list in step with the
// fields when replacing a child.
type Container []NamedModule

var _ Module = Container(nil)

// NewContainer returns the Container of children for owner, a pointer to
// the struct that embeds it, after checking the list: it panics with a
// *tensor.Error if a child is nil, if a name is empty, holds a dot or
// appears twice, or if an exported field of owner holds parameters that no
// child holds. Such a field is a Module with parameters (a *Linear, a
// ModuleList, a Sequential, an interface holding one), a *tensor.Tensor
// that requires grad (list it with Param), or a slice or array of them;
// the panic names the field and what to add. Modules without parameters
// (ReLU, a nil pointer) may be left out, and a field may alias a tensor
// that a child holds (a tied weight). As in PyTorch, where assigning a
// module to an attribute registers it, a module held only for reference (a
// frozen teacher model) goes in an unexported field.
//
// StateDictOf, LoadStateDict and so SaveFile, LoadFile, Save and Load, and
// ParameterCount, Summary and To run the same check on a module that
// embeds a Container, so a literal Container, or a field replaced after
// construction, fails there rather than saving or moving a model without
// the field. Unexported fields are not checked (reflection cannot call
// their methods), nor are the methods of types that gophernotes'
// interpreter defines (reflection does not see them).
func NewContainer(owner any, children ...NamedModule) Container {
	c := Container(children)
	checkOwner("NewContainer", owner, c)
	return c
}

// NamedParameters returns the children's parameters, each prefixed with its
// child's name; a tensor shared by two children is listed once, under its
// first name, like PyTorch's named_parameters. It panics if a child is nil,
// or if a name is empty, holds a dot or appears twice.
func (c Container) NamedParameters() []NamedParam { return namedChildren("Container", c) }

// Parameters returns the tensors of NamedParameters, in order.
func (c Container) Parameters() []*tensor.Tensor { return params(c.NamedParameters()) }

// Train puts every child in training mode. It panics like NamedParameters.
func (c Container) Train() { checkNames("Container", c); eachChild(c, Module.Train) }

// Eval puts every child in evaluation mode. It panics like NamedParameters.
func (c Container) Eval() { checkNames("Container", c); eachChild(c, Module.Eval) }

// String prints the children like PyTorch prints a module.
func (c Container) String() string { return childrenString("Container", c) }

var (
	containerType = reflect.TypeFor[Container]()
	moduleType    = reflect.TypeFor[Module]()
	tensorType    = reflect.TypeFor[*tensor.Tensor]()
)

// checkModule runs NewContainer's check on m when m is a pointer to a
// struct that embeds a Container.
func checkModule(op string, m Module) {
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return
	}
	st := v.Elem().Type()
	for i := range st.NumField() {
		if f := st.Field(i); f.Anonymous && f.Type == containerType {
			checkOwner(op, m, v.Elem().Field(i).Interface().(Container))
			return
		}
	}
}

// checkOwner panics if c's names are not valid or if an exported field of
// owner (a pointer to a struct) holds parameters that c's children do not.
func checkOwner(op string, owner any, c Container) {
	v := reflect.ValueOf(owner)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("the owner is %T, want a non-nil pointer to the struct that embeds the Container", owner)})
	}
	listed := map[*tensor.Tensor]bool{}
	for _, p := range namedChildren(op, c) {
		listed[p.Param] = true
	}
	st := v.Elem().Type()
	var missing []string
	for i := range st.NumField() {
		f := st.Field(i)
		if !f.IsExported() || f.Anonymous && f.Type == containerType {
			continue
		}
		missing = append(missing, unlisted(f.Name, v.Elem().Field(i), listed)...)
	}
	if len(missing) > 0 {
		verb := "holds"
		if len(missing) > 1 {
			verb = "hold"
		}
		panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("%s: %s %s parameters that no child in the Container's list holds (add it with nn.Named or nn.Param)", st, strings.Join(missing, ", "), verb)})
	}
}

// unlisted returns the name of the field value v (or of its elements) when
// it holds a parameter that listed does not.
func unlisted(name string, v reflect.Value, listed map[*tensor.Tensor]bool) []string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map, reflect.Func, reflect.Chan:
		if v.IsNil() {
			return nil
		}
	}
	if v.Type() == tensorType {
		if t := v.Interface().(*tensor.Tensor); t.IsRequiringGrad() && t.IsLeaf() && !listed[t] {
			return []string{fmt.Sprintf("field %s (a tensor that requires grad)", name)}
		}
		return nil
	}
	if v.Type().Implements(moduleType) {
		m := v.Interface().(Module)
		for _, p := range safeParameters(m) {
			if p != nil && !listed[p] {
				return []string{fmt.Sprintf("field %s (%T)", name, m)}
			}
		}
		return nil
	}
	if k := v.Kind(); k == reflect.Slice || k == reflect.Array {
		var out []string
		for i := range v.Len() {
			out = append(out, unlisted(fmt.Sprintf("%s[%d]", name, i), v.Index(i), listed)...)
		}
		return out
	}
	return nil
}

// safeParameters returns m's parameters, or none if listing them panics (a
// module the field holds half-built: then it is not the check's to
// report).
func safeParameters(m Module) (ps []*tensor.Tensor) {
	defer func() {
		if recover() != nil {
			ps = nil
		}
	}()
	return m.Parameters()
}

// checkNames panics if a child of children is nil, or a name is empty,
// holds a dot or appears twice.
func checkNames(op string, children []NamedModule) {
	names := map[string]bool{}
	for i, c := range children {
		switch {
		case c.Module == nil:
			panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("child %d (%q) is nil", i, c.Name)})
		case c.Name == "" || strings.Contains(c.Name, "."):
			panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("child %d has the name %q; want a non-empty name without dots", i, c.Name)})
		case names[c.Name]:
			panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("two children are named %q", c.Name)})
		}
		names[c.Name] = true
	}
}

// namedChildren lists the parameters of children with their names
// prefixed, dropping tensors already listed.
func namedChildren(op string, children []NamedModule) []NamedParam {
	checkNames(op, children)
	seen := map[*tensor.Tensor]bool{}
	var out []NamedParam
	for _, c := range children {
		for _, p := range c.Module.NamedParameters() {
			if p.Param == nil {
				panic(&tensor.Error{Pkg: "nn", Op: op, Msg: fmt.Sprintf("child %q has a nil parameter %q", c.Name, p.Name)})
			}
			if seen[p.Param] {
				continue
			}
			seen[p.Param] = true
			name := c.Name
			if p.Name != "" {
				name += "." + p.Name
			}
			out = append(out, NamedParam{Name: name, Param: p.Param})
		}
	}
	return out
}

// eachChild calls f on every child module, skipping nil ones.
func eachChild(children []NamedModule, f func(Module)) {
	for _, c := range children {
		if c.Module != nil {
			f(c.Module)
		}
	}
}

// childrenString prints a module of children like PyTorch's repr.
func childrenString(head string, children []NamedModule) string {
	if len(children) == 0 {
		return head + "()"
	}
	cs := make([]child, 0, len(children))
	count := 0
	seen := map[*tensor.Tensor]bool{}
	for _, c := range children {
		var s fmt.Stringer = stringFunc(func() string { return "None" })
		if c.Module != nil {
			for _, p := range c.Module.Parameters() {
				if p != nil && !seen[p] {
					seen[p] = true
					count += p.Numel()
				}
			}
			if st, ok := c.Module.(fmt.Stringer); ok {
				s = st
			} else {
				m := c.Module
				s = stringFunc(func() string { return fmt.Sprintf("%T()", m) })
			}
		}
		cs = append(cs, child{name: c.Name, m: s})
	}
	return treeString(head, count, cs)
}

// paramModule is a parameter held directly by a Container (see Param).
type paramModule struct{ t *tensor.Tensor }

func (p paramModule) NamedParameters() []NamedParam { return []NamedParam{{Name: "", Param: p.t}} }
func (p paramModule) Parameters() []*tensor.Tensor  { return []*tensor.Tensor{p.t} }
func (paramModule) Train()                          {}
func (paramModule) Eval()                           {}
func (p paramModule) String() string {
	return fmt.Sprintf("Parameter(shape=%v)", p.t.Shape())
}
