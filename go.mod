module github.com/wickml/wick

go 1.26.0

require (
	github.com/ardanlabs/jinja v1.8.0
	github.com/chewxy/math32 v1.11.1
	github.com/google/go-cmp v0.7.0
	gorgonia.org/cu v0.9.6
)

require (
	github.com/google/uuid v1.1.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
)
