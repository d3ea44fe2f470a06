// Command loader opens a plugin built from ../plugin/main.go the way
// gophernotes does, with plugin.Open, and calls into it: through the
// reflect values the plugin exports (as the interpreter calls imported
// functions and methods) and through an ordinary exported function. It
// prints one line per result for the test to check.
package main

import (
	"fmt"
	"os"
	"plugin"
	"reflect"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: loader PLUGIN.so")
		os.Exit(2)
	}
	p, err := plugin.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "plugin.Open:", err)
		os.Exit(1)
	}
	all, err := p.Lookup("Symbols")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	n := 0
	iter := reflect.ValueOf(all).Elem().MapRange()
	for iter.Next() {
		n += iter.Value().FieldByName("Binds").Len() + iter.Value().FieldByName("Types").Len()
	}
	fmt.Printf("symbols: %d\n", n)

	sym, err := p.Lookup("Packages")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pkgs := reflect.ValueOf(sym).Elem() // *map[string]Package
	for _, k := range []string{"tensor", "autograd", "nn", "optim", "plot", "tokenizer"} {
		fmt.Printf("package %s: %v\n", k, pkgs.MapIndex(reflect.ValueOf("github.com/wickml/wick/"+k)).IsValid())
	}
	binds := pkgs.MapIndex(reflect.ValueOf("github.com/wickml/wick/tensor")).FieldByName("Binds")
	ones := binds.MapIndex(reflect.ValueOf("Ones")).Interface().(reflect.Value)
	// tensor.Ones(2, 3).Sum().String(), called as gomacro calls it.
	ts := ones.Call([]reflect.Value{reflect.ValueOf(2), reflect.ValueOf(3)})[0]
	sum := ts.MethodByName("Sum").Call(nil)[0]
	fmt.Println("sum:", sum.MethodByName("String").Call(nil)[0].String())
	fmt.Println("html:", ts.MethodByName("HTML").Call(nil)[0].String())

	demo, err := p.Lookup("Demo")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(demo.(func() string)())
}
