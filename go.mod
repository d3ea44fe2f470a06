module github.com/wickml/wick

go 1.26
