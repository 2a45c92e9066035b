// Command render prints what the program declares for a stack, offline, under the Pulumi SDK's mocks:
//
//	make render STACK=dev            # a table: type, name, parent, key inputs
//	make render STACK=dev FORMAT=json
//	make render STACK=dev ACCOUNT=210987654321
//
// A configuration error is printed and exits 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
)

func main() {
	stack := flag.String("stack", "dev", "stack name: reads Pulumi.<stack>.yaml")
	format := flag.String("format", "table", "table or json")
	build := flag.Bool("build", false, "build the router instead of declaring it from a stub")
	file := flag.String("file", "", "stack configuration file (default Pulumi.<stack>.yaml)")
	account := flag.String("account", mocks.DefaultAccount, "AWS account the lookups answer as (the region is the stack's aws:region)")
	flag.Parse()
	if *file == "" {
		*file = "Pulumi." + *stack + ".yaml"
	}

	opts := render.Offline()
	if *build {
		opts.BuildRouter = infra.DefaultOptions().BuildRouter
	}
	rs, err := render.Stack(*file, *stack, opts, render.Target{Account: *account})
	if err != nil {
		// Show a configuration mistake as it is, not wrapped in the SDK's error list.
		var cfgErr *config.Error
		if errors.As(err, &cfgErr) {
			err = cfgErr
		}
		fmt.Fprintf(os.Stderr, "render %s: %v\n", *stack, err)
		os.Exit(1)
	}
	switch *format {
	case "json":
		err = render.WriteJSON(os.Stdout, rs)
	case "table":
		err = render.WriteTable(os.Stdout, rs)
	default:
		err = fmt.Errorf("unknown format %q: table or json", *format)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}
