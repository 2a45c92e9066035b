package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/handler"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/ec2stub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/lambdaesm"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

const prefix = "kib-"

// bus is the whole event path on loopback: goaws holding the central and cluster queues, the EC2 stub, and the
// router built from its environment exactly as in Lambda, invoked through the event source mapping.
type bus struct {
	sqs     *sqsemu.Server
	ec2     *ec2stub.Server
	central string
	esm     lambdaesm.Mapping
	out     *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// newBus starts the path with a queue for each of clusters. AWS_MAX_ATTEMPTS=1 turns off the SDK's own retries
// so each injected fault reaches the router, which is what these tests are about.
func newBus(t *testing.T, env map[string]string, clusters ...string) *bus {
	t.Helper()
	ctx := context.Background()
	b := &bus{sqs: sqsemu.Start(), ec2: ec2stub.Start(), out: &syncBuffer{}}
	t.Cleanup(b.ec2.Close)
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_SQS": b.sqs.URL, "AWS_ENDPOINT_URL_EC2": b.ec2.URL, "AWS_REGION": sqsemu.Region,
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_MAX_ATTEMPTS": "1",
		"AWS_PROFILE": "", "AWS_SESSION_TOKEN": "",
	} {
		t.Setenv(k, v)
	}
	var err error
	if b.central, err = b.sqs.CreateQueue(ctx, "kib-central", nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range clusters {
		if _, err := b.sqs.CreateQueue(ctx, queuename.For(prefix, c), nil); err != nil {
			t.Fatal(err)
		}
	}
	routerEnv := map[string]string{"CLUSTER_QUEUE_PREFIX": prefix, "BUS_NAME": "e2e"}
	for k, v := range env {
		routerEnv[k] = v
	}
	h, err := handler.FromEnv(ctx, func(k string) string { return routerEnv[k] }, b.out)
	if err != nil {
		t.Fatal(err)
	}
	b.esm = lambdaesm.Mapping{SQS: b.sqs.Client(), QueueURL: b.central, BatchSize: 10, Handler: lambdaesm.Handler(h)}
	return b
}

// publish puts bodies on the central queue, as the EventBridge rules do.
func (b *bus) publish(t *testing.T, bodies ...string) {
	t.Helper()
	for _, body := range bodies {
		if _, err := b.sqs.Client().SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &b.central, MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
}

// drain runs invocations until the central queue is empty.
func (b *bus) drain(t *testing.T) []lambdaesm.Result {
	t.Helper()
	res, err := b.esm.Drain(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// received takes every message from cluster's queue and returns the bodies, sorted.
func (b *bus) received(t *testing.T, cluster string) []string {
	t.Helper()
	return b.takeAll(t, queuename.For(prefix, cluster))
}

func (b *bus) takeAll(t *testing.T, queue string) []string {
	t.Helper()
	ctx := context.Background()
	c := b.sqs.Client()
	u, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &queue})
	if err != nil {
		t.Fatalf("queue %s: %v", queue, err)
	}
	var bodies []string
	for {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: u.QueueUrl, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
			if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: u.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	slices.Sort(bodies)
	return bodies
}

// drops returns the event or message id -> reasons of the router's "message dropped" log lines.
func (b *bus) drops() map[string][]string {
	out := map[string][]string{}
	for _, l := range b.out.lines() {
		if l["msg"] != "message dropped" {
			continue
		}
		id, _ := l["eventId"].(string)
		if id == "" {
			id, _ = l["bodyPrefix"].(string)
		}
		out[id] = append(out[id], l["reason"].(string))
	}
	return out
}

// metric sums metric over the EMF lines whose dimension dim is val ("" for the per-bus totals).
func (b *bus) metric(name, dim, val string) float64 {
	var sum float64
	for _, l := range b.out.lines() {
		if _, emf := l["_aws"]; !emf {
			continue
		}
		v, ok := l[name].(float64)
		if !ok {
			continue
		}
		if dim == "" {
			if _, k := l["Kind"]; k {
				continue
			}
			if _, c := l["Cluster"]; c {
				continue
			}
			if _, r := l["Reason"]; r {
				continue
			}
			sum += v
		} else if l[dim] == val {
			sum += v
		}
	}
	return sum
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "router", "internal", "event", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}
