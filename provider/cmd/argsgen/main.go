// Command argsgen writes the component package's arguments (provider/components/args.go) from the program's
// configuration: make schema runs it, then rewrites the schema and the SDKs.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/internal/argsgen"
)

func main() {
	config := flag.String("config", "../infra/config", "the configuration package's directory (its doc comments)")
	out := flag.String("out", "components/args.go", "where to write")
	flag.Parse()
	b, err := argsgen.Generate(*config)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
}
