// Command pulumi-resource-kubernetes is the real pulumi-kubernetes provider, built from the module proxy's
// github.com/pulumi/pulumi-kubernetes/provider/v4 at the version this module pins (the nearest the proxy serves to
// the program's SDK, v4.23.0: the proxy serves no tagged provider), for the engine tests that judge what it does
// with a cluster out of reach (tests/engine, TestAClusterOutOfReach). Its main is the provider's own
// (cmd/pulumi-resource-kubernetes), which embeds its schema with the version set: make kubernetes-provider writes
// schema-embed.json and terraform-mapping-embed.json here first (gen), as the provider's generate.go does, since the
// module's zip holds neither.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var pulumiSchema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
