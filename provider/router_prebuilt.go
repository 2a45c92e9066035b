//go:build prebuiltrouter

package main

import (
	_ "embed"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
)

// routerZip is the router Lambda's deployment package, built by the release (.goreleaser.yml's before hook: go run
// ./cmd/build-router -out provider/prebuilt) before the provider is built with -tags prebuiltrouter: a released
// provider deploys it, so that no user of the package needs Go.
//
//go:embed prebuilt/router.zip
var routerZip []byte

func init() { buildRouter = routerbuild.Prebuilt(routerZip) }
