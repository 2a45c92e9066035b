// Package tools pins the project's development tools (golangci-lint, actionlint) as go.mod tool directives,
// apart from the program, the router and the tests, so their dependencies never mix. Run them with
// `go tool -modfile=tools/go.mod <tool>` (the Makefile does).
package tools
