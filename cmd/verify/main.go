// Command verify puts a canary for every cluster of a stack (or those named) and reports, per cluster, when the
// router forwarded it and when its Karpenter consumed it, then whether the hub's own rules deliver to the central
// queue (every canary goes through its canary rule) and, if not, the setting to switch; it exits 1 naming the
// clusters whose canary was not consumed in time. It reads the stack's outputs on stdin:
//
//	make verify STACK=prod                 # pulumi stack output --stack prod --json | go run ./cmd/verify
//	make verify STACK=prod CLUSTER=payments
//
// AWS credentials and endpoints come from the environment, as for the AWS CLI; the region is the stack's.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sdkbody"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/verify"
)

func main() {
	clusters := flag.String("cluster", "", "clusters to verify, comma-separated (default every cluster of the stack)")
	timeout := flag.Duration("timeout", 0, "how long to wait for every canary (default 2m)")
	flag.Parse()
	if err := run(*clusters, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "verify:", err)
		os.Exit(1)
	}
}

func run(clusters string, timeout time.Duration) error {
	ctx := context.Background()
	out, err := verify.ReadOutputs(os.Stdin)
	if err != nil {
		return err
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(out.Region), config.WithAPIOptions(sdkbody.APIOptions))
	if err != nil {
		return fmt.Errorf("loading AWS configuration: %w", err)
	}
	opts := verify.Options{Timeout: timeout}
	if clusters != "" {
		opts.Clusters = strings.Split(clusters, ",")
	}
	results, err := verify.Run(ctx, verify.Clients{
		Events: eventbridge.NewFromConfig(cfg), Logs: cloudwatchlogs.NewFromConfig(cfg), Queues: sqs.NewFromConfig(cfg),
	}, out, opts)
	if err != nil {
		return err
	}
	failed := verify.Report(os.Stdout, results)
	// Every canary goes through the hub's own canary rule: what became of them says whether the hub's rules deliver.
	if line, delivers, ok := verify.Hub(results, out.HubDelivery); ok {
		fmt.Println(line)
		if !delivers {
			return fmt.Errorf("the hub's own rules do not deliver: see above")
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("the canary of %s was not consumed: see above", strings.Join(failed, ", "))
	}
	return nil
}
