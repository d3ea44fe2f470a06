package plugintest

import "reflect"

// ForeignTypes returns, for the type typ of package pkg (its import path),
// each field path whose type comes from another package, following
// pointers, slices, arrays, channels, maps and structs. gophernotes loads
// every package such a field's type comes from and warns about each
// generic declaration in it (math/rand/v2, sync, hash/maphash), so the
// exported types of the public packages keep their state behind fields of
// their own package's types or interfaces. name is the path's first
// element.
func ForeignTypes(name string, typ reflect.Type, pkg string) []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		if p := typ.PkgPath(); p != "" && p != pkg {
			out = append(out, path+" has type "+typ.String()+" from package "+p)
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
	walk(name, typ)
	return out
}
