package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	pulumisdk "github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/engine/standin"
)

// TestThePreviewFailsAsTheProvidersCheckWould: through the real CLI, a queue of 1 MiB, which SQS takes since August 2025
// but the Terraform provider pulumi-aws v6.83.2 bundles refuses (offline/providerrules), fails the preview with the
// provider's own message, as pulumi/pulumi-aws#6321 shows it; the same queue at 256 KiB previews. What the stand-in
// refuses is what the real provider's Check does, at a preview, before anything is created.
func TestThePreviewFailsAsTheProvidersCheckWould(t *testing.T) {
	t.Parallel()
	e := newEnv(t, standin.World{Region: region, Account: hub, Versions: versions(t)})
	size := 1048576
	s := inlineStack(t, e, "checks", "provider-checks", func(ctx *pulumisdk.Context) error {
		_, err := sqs.NewQueue(ctx, "big", &sqs.QueueArgs{Name: pulumisdk.String("big"), MaxMessageSize: pulumisdk.Int(size)})
		return err
	})
	ctx := context.Background()
	if err := s.SetConfig(ctx, "aws:region", auto.ConfigValue{Value: region}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	_, err := s.Preview(ctx, optpreview.ProgressStreams(&out), optpreview.ErrorProgressStreams(&out))
	const want = "aws:sqs/queue:Queue resource 'big' has a problem: expected max_message_size to be in the range (1024 - 262144), got 1048576. " +
		"Examine values at 'big.maxMessageSize'."
	if err == nil || !strings.Contains(out.String()+err.Error(), want) {
		t.Fatalf("preview of a queue of 1 MiB: %v\n%s\nwant it refused with %q", err, out.String(), want)
	}
	if n := len(e.Records(t)); n != 0 {
		t.Errorf("%d resources created by a preview that failed", n)
	}
	size = 262144
	if _, err := s.Preview(ctx); err != nil {
		t.Errorf("preview of a queue of 256 KiB: %v", err)
	}
}
