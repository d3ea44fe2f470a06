// Package plugintest checks that Wick's public packages stay loadable by
// gophernotes, the Go Jupyter kernel.
//
// gophernotes interprets cells with gomacro, which imports a compiled
// package by generating a small main package that lists the package's
// exported names, building it with `go build -buildmode=plugin` and opening
// the result with plugin.Open. Its tests do exactly that with Wick's public
// packages, and parse those packages to reject what gomacro cannot import:
// exported generic declarations and exported uses of unsafe.Pointer.
//
// Apart from ForeignTypes, which the public packages' own tests call, the
// package exists for its tests.
package plugintest
