// Command router is the bus's Lambda function: it forwards EC2 interruption events from the central queue to the
// owning cluster's Karpenter interruption queue. README.md documents its environment variables.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/route"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "router:", err)
		os.Exit(1)
	}
}

// run builds the router from the environment and serves Lambda invocations until the runtime stops it. Every
// start-up error is returned before the first invocation; none can happen on the request path.
func run(ctx context.Context) error {
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))
	// LoadDefaultConfig honours the SDK's standard variables, AWS_ENDPOINT_URL_SQS and AWS_ENDPOINT_URL_EC2
	// among them, so the same binary runs against emulators.
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("loading AWS configuration: %w", err)
	}
	owners := owner.New(ec2.NewFromConfig(awsCfg), owner.Options{
		ExtraTagKeys: cfg.OwnerTagKeys, CacheSize: cfg.CacheSize, OwnerTTL: cfg.OwnerTTL, NoOwnerTTL: cfg.NoOwnerTTL,
	})
	sender := forward.New(sqs.NewFromConfig(awsCfg), forward.Options{
		CacheSize: cfg.CacheSize, URLTTL: cfg.QueueURLTTL, MissingTTL: cfg.MissingQueueTTL,
	})
	r := route.New(owners, sender, route.Options{
		QueuePrefix:     cfg.QueuePrefix,
		SendConcurrency: cfg.SendConcurrency,
		Metrics:         metrics.NewWriter(os.Stdout, cfg.MetricsNamespace, cfg.BusName),
		Log:             log,
	})
	log.Info("router starting", "queuePrefix", cfg.QueuePrefix, "bus", cfg.BusName, "ownerTagKeys", cfg.OwnerTagKeys)
	lambda.StartWithOptions(r.Handle, lambda.WithContext(ctx))
	return nil
}
