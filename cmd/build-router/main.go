// Command build-router builds the router Lambda: bootstrap and router.zip (make router).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
)

func main() {
	src := flag.String("src", "router", "directory of the router module")
	out := flag.String("out", "build/router", "output directory")
	flag.Parse()
	a, err := routerbuild.Build(context.Background(), os.DirFS(*src), *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build-router:", err)
		os.Exit(1)
	}
	fmt.Printf("%s\n%s (%d bytes, sha256 %s)\n", a.Bootstrap, a.Zip, a.Size, a.SourceCodeHash)
}
