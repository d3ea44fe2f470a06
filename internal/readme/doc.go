// Package readme holds the tests that keep the repository's READMEs true to
// the code: every Go code block in a README must appear, line for line
// (indentation aside), in the body of an Example function, which go test
// compiles and, when it has an Output comment, runs and checks; a block
// that is a whole program (it starts with "package main") must appear in a
// program under examples/, which go build and go vet compile and
// scripts/readme_commands.sh runs. The README's shell commands are run by
// scripts/readme_commands.sh in a fresh clone.
//
// The package has no API; it exists for its tests.
package readme
