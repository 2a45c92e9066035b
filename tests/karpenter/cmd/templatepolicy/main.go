// Command templatepolicy copies the controller's IAM policies out of a Karpenter getting-started CloudFormation
// template into a version module's test data (package templatepolicy says what it keeps):
//
//	cd tests/karpenter
//	go run ./cmd/templatepolicy -source https://github.com/aws/karpenter-provider-aws/blob/<commit>/<path> \
//	  < cloudformation.yaml > v1.15/testdata/controller-policy.json
//
// make karpenter-bump does this, and the rest of a version bump, in one step.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/templatepolicy"
)

func main() {
	source := flag.String("source", "", "the template's address at the commit it is copied from (required)")
	flag.Parse()
	if *source == "" {
		fmt.Fprintln(os.Stderr, "templatepolicy: -source is required")
		os.Exit(2)
	}
	text, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "templatepolicy: reading the template:", err)
		os.Exit(1)
	}
	e, err := templatepolicy.FromTemplate(text, *source)
	if err == nil {
		var out []byte
		if out, err = e.JSON(); err == nil {
			_, err = os.Stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "templatepolicy:", err)
		os.Exit(1)
	}
}
