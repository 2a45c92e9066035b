// Package router is the module of the bus's Lambda function, whose main package is cmd/router. The module's root
// package carries the module's own source (Source), so that what imports it, the Pulumi program and the
// component package's provider alike, builds the Lambda wherever it runs: Pulumi runs a package's provider with
// the consumer's project as its working directory, far from any checkout of this repository.
package router

import "embed"

// Source is the router module's source as `go build` needs it: go.mod, go.sum and the Go files of every package
// (TestSourceHasEveryPackage keeps the list whole).
//
//go:embed go.mod go.sum *.go cmd/*/*.go contract/*.go event/*.go handler/*.go archive/*.go internal/*/*.go karpenter/*.go queuename/*.go release/*.go sdkbody/*.go sealing/*.go shortname/*.go sizing/*.go
var Source embed.FS

// Main is the Lambda's main package, relative to the module's root.
const Main = "./cmd/router"
