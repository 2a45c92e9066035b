// Command router is the bus's Lambda function: it forwards EC2 interruption events from the central queue to the
// owning cluster's Karpenter interruption queue. docs/configuration.md documents its environment variables.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/handler"
)

func main() {
	ctx := context.Background()
	h, err := handler.FromEnv(ctx, os.Getenv, os.Stdout)
	if err != nil { // start-up only: the request path never exits
		fmt.Fprintln(os.Stderr, "router:", err)
		os.Exit(1)
	}
	lambda.StartWithOptions(h, lambda.WithContext(ctx))
}
