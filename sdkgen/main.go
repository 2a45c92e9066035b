// Command sdkgen generates the component package's TypeScript and Python SDKs from its schema
// (provider/schema.json) with Pulumi's own code generators, as pulumi package add does in a consumer's project.
// It is its own module: the generators come with pulumi/pkg at the version of the Pulumi CLI the engine tests run
// (v3.259.0, which this module's tool directives pin too, so the two share one compile), heavy to compile, and
// needed by neither the program nor the provider.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/sdkgen/generate"
)

func main() {
	schemaPath := flag.String("schema", "../provider/schema.json", "the package's schema")
	out := flag.String("out", "../build/sdk", "directory to write <language>/ under")
	version := flag.String("version", "", "the SDKs' version (default the schema's)")
	publish := flag.Bool("publish", false, "generate the TypeScript SDK as npm publishes it (compiled before packing, no postinstall)")
	schemaOut := flag.String("schema-out", "", "also write the schema at -version to this file (the schema a release attaches)")
	flag.Parse()
	if err := run(*schemaPath, *out, *schemaOut, generate.Options{Version: *version, Publish: *publish}); err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen:", err)
		os.Exit(1)
	}
}

func run(schemaPath, out, schemaOut string, opts generate.Options) error {
	if err := generate.FromFile(schemaPath, out, opts); err != nil {
		return err
	}
	if schemaOut == "" {
		return nil
	}
	if opts.Version == "" {
		return errors.New("-schema-out needs -version: the schema a release attaches carries the release's version")
	}
	text, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	versioned, err := generate.Versioned(text, opts.Version)
	if err != nil {
		return err
	}
	return os.WriteFile(schemaOut, versioned, 0o644)
}
