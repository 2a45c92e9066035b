package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/ebstub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// TestCostModel counts, at the emulator, the requests an interruption event costs with the bus and with
// per-cluster rules, at 1, 10 and 100 clusters. The bus's cost must not grow with the fleet; the per-cluster
// setup's grows linearly. The cost table (docs/performance.md) comes from this test's log (go test -run CostModel -v).
func TestCostModel(t *testing.T) {
	for _, n := range []int{1, 10, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c, err := harness.MeasureCost(context.Background(), n, 100, 10)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("N=%d: bus %.2f requests/event %v + %d DescribeInstances; per-cluster rules %.2f requests/event %v",
				n, c.BusPerEvent(), c.Bus, c.DescribeInstances, c.PerClusterPerEvent(), c.PerCluster)
			// 1 send to the central queue, ~1 batched forward, 1 Karpenter delete, plus receives amortised over
			// batches and one GetQueueUrl per cluster: a constant, not a function of N.
			if got := c.BusPerEvent(); got > 4.5 {
				t.Errorf("bus: %.2f requests per event at N=%d, want <= 4.5 whatever N", got, n)
			}
			// Every event reaches N queues and is received and deleted N times.
			if got, floor := c.PerClusterPerEvent(), 2*float64(n); got < floor {
				t.Errorf("per-cluster rules: %.2f requests per event at N=%d, want >= %.0f", got, n, floor)
			}
			if c.Bus["SendMessage"] != c.Events {
				t.Errorf("bus: %d SendMessage for %d events, want one each (EventBridge to the central queue)", c.Bus["SendMessage"], c.Events)
			}
		})
	}
}

// TestHeartbeatCost counts the requests a canary costs, from its PutEvents to its Karpenter's delete, when each
// one travels alone (the worst case). The heartbeat's cost (docs/operations.md) comes from this test's log
// (go test -run HeartbeatCost -v).
func TestHeartbeatCost(t *testing.T) {
	const clusters, beats = 3, 4
	var names []string
	for i := range clusters {
		names = append(names, fmt.Sprintf("cluster-%03d", i))
	}
	// Each canary alone, one after the other: the canary interval must not hold the next one of a cluster back.
	b := newBusWith(t, harness.Options{Clusters: names, Env: map[string]string{contract.EnvCanaryInterval: "1ns"}})
	eb, err := ebstub.Start(b.As(sqsemu.Account, harness.ForwarderRoleName), sqsemu.Account, sqsemu.Region,
		ebstub.Rule{Name: contract.RuleCanary, Pattern: contract.CanaryPattern(b.Settings.BusName), QueueURL: b.Central})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eb.Close)
	events := eventbridge.New(eventbridge.Options{
		Region: sqsemu.Region, BaseEndpoint: aws.String(eb.URL), Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	put := func(ctx context.Context, cluster string) error {
		out, err := events.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
			Source: aws.String(contract.SourceCanary), DetailType: aws.String(contract.DetailTypeCanary),
			Detail: aws.String(contract.CanaryDetail{Bus: b.Settings.BusName, Clusters: []string{cluster}}.JSON()),
		}}})
		if err == nil && out.FailedEntryCount != 0 {
			err = fmt.Errorf("PutEvents refused the canary of %s: %s", cluster, aws.ToString(out.Entries[0].ErrorMessage))
		}
		return err
	}
	c, err := harness.MeasureHeartbeat(context.Background(), clusters, beats, put, b.Bus)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("per canary: 1 PutEvents (%d for %d canaries), %.2f SQS requests %v", c.PutEvents, c.Canaries, c.SQSPerCanary(), c.SQS)
	// EventBridge's send to the central queue; the router's receive and batch delete (Lambda's); its forward;
	// Karpenter's receive and delete.
	want := map[string]int{"SendMessage": 1, "ReceiveMessage": 2, "DeleteMessageBatch": 1, "SendMessageBatch": 1, "DeleteMessage": 1}
	for action, n := range want {
		if c.SQS[action] != n*c.Canaries {
			t.Errorf("%s: %d for %d canaries, want %d each", action, c.SQS[action], c.Canaries, n)
		}
	}
	if c.PutEvents != c.Canaries || harness.Total(c.SQS) != 6*c.Canaries {
		t.Errorf("%d PutEvents and %d SQS requests for %d canaries, want 1 and 6 each: %v", c.PutEvents, harness.Total(c.SQS), c.Canaries, c.SQS)
	}
	if got := b.Metric(contract.MetricCanaryForwarded, contract.DimCluster, names[0]); got != 1+beats {
		t.Errorf("CanaryForwarded{Cluster=%s} = %v, want %d", names[0], got, 1+beats)
	}
}
