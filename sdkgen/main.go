// Command sdkgen generates the component package's TypeScript and Python SDKs from its schema
// (provider/schema.json) with Pulumi's own code generators, as pulumi package add does in a consumer's project.
// It is its own module: the generators come with pulumi/pkg at the version of the Pulumi CLI the engine tests run
// (v3.259.0, which this module's tool directives pin too, so the two share one compile), heavy to compile, and
// needed by neither the program nor the provider.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/sdkgen/generate"
)

func main() {
	schemaPath := flag.String("schema", "../provider/schema.json", "the package's schema")
	out := flag.String("out", "../build/sdk", "directory to write <language>/ under")
	version := flag.String("version", "", "the SDKs' version (default the schema's)")
	flag.Parse()
	if err := generate.FromFile(*schemaPath, *out, *version); err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen:", err)
		os.Exit(1)
	}
}
