// Command sdkgen generates the component package's TypeScript and Python SDKs from its schema
// (provider/schema.json) with Pulumi's own code generators, as pulumi package add does in a consumer's project.
// It is its own module: the generators come with pulumi/pkg at the version of the program's SDK (v3.175.0),
// heavy to compile, and needed by neither the program nor the provider.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/sdkgen/generate"
)

func main() {
	schemaPath := flag.String("schema", "../provider/schema.json", "the package's schema")
	out := flag.String("out", "../build/sdk", "directory to write <language>/ under")
	version := flag.String("version", "", "the SDKs' version (default the schema's)")
	flag.Parse()
	// pulumi/pkg v3.175.0's Node.js generator computes relative imports with filepath.Rel, whose result Go 1.26
	// changed: it would write imports that do not resolve.
	if strings.HasPrefix(runtime.Version(), "go1.26") || strings.HasPrefix(runtime.Version(), "go1.27") {
		fmt.Fprintf(os.Stderr, "sdkgen: built with %s; the generators need Go 1.25 (GOTOOLCHAIN=go1.25.4, as make package sets)\n", runtime.Version())
		os.Exit(2)
	}
	if err := generate.FromFile(*schemaPath, *out, *version); err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen:", err)
		os.Exit(1)
	}
}
