package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/ebstub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/logstub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
)

// routerLogGroup is where Lambda writes the router's lines, as the stack names it.
const routerLogGroup = "/aws/lambda/" + harness.NamePrefix + "-router"

// loopback is the whole canary path: EventBridge's rules (the stub) into the central queue (goaws), the router
// binary under the Lambda Runtime API, the cluster queues, and a Karpenter reading each running cluster's queue,
// with its parser, until the test ends; plus the router's log group (the stub) and the stack's outputs.
type loopback struct {
	*bus
	eventsURL, logsURL string
	outputs            []byte
	verifyBin          string
	eb                 *ebstub.Server

	// startKarpenter starts the Karpenter of a cluster, until the test ends.
	startKarpenter func(cluster string)

	mu   sync.Mutex
	read map[string][]string // cluster -> Karpenter's kinds of what it read
}

// loopbackCanaryInterval is the router's canary interval on the loopback bus: short, so a canary verify puts
// again after the router held it back comes within the test's timeout.
const loopbackCanaryInterval = 2

func newLoopback(t *testing.T, clusters ...string) *loopback {
	return newLoopbackWith(t, harness.Options{Clusters: clusters}, nil)
}

// newLoopbackWith is newLoopback on a bus of opts, its rules delivering as the SQS client deliverAs gives (nil: the
// hub's forwarder, or no role when opts.HubDelivery is queuePolicy).
func newLoopbackWith(t *testing.T, opts harness.Options, deliverAs func(b *bus) *sqs.Client) *loopback {
	clusters := opts.Clusters
	opts.Env = map[string]string{contract.EnvCanaryInterval: fmt.Sprintf("%ds", loopbackCanaryInterval)}
	b, stderr := routerBinaryWith(t, opts)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router stderr: %s", stderr.String())
		}
	})
	// The stack's rules: one per event type, and the canary rule of this bus, all into the central queue.
	rules := []ebstub.Rule{{Name: contract.RuleCanary, Pattern: contract.CanaryPattern(b.Settings.BusName), QueueURL: b.Central}}
	for _, et := range contract.EventTypes {
		rules = append(rules, ebstub.Rule{Name: et.Rule, Pattern: et.Pattern(), QueueURL: b.Central})
	}
	client := b.As(sqsemu.Account, harness.ForwarderRoleName)
	switch {
	case deliverAs != nil:
		client = deliverAs(b)
	case opts.HubDelivery == contract.HubDeliveryQueuePolicy:
		client = b.SQS.Client() // EventBridge through the queue's policy: no role
	}
	eb, err := ebstub.Start(client, sqsemu.Account, sqsemu.Region, rules...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eb.Close)
	logs := logstub.Start(routerLogGroup, b.Out.Text)
	t.Cleanup(logs.Close)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() { b.Serve(ctx) })

	out := map[string]any{"busName": b.Settings.BusName, "region": sqsemu.Region, "routerLogGroupName": routerLogGroup,
		"canaryIntervalSeconds": loopbackCanaryInterval, "deadLetterQueueUrl": b.DLQ, "hubDelivery": cmp.Or(opts.HubDelivery, contract.HubDeliveryExecutionRole)}
	queues := map[string]any{}
	for _, c := range clusters {
		u, err := b.SQS.Client().GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(harness.QueueOf(c))})
		if err != nil {
			t.Fatal(err)
		}
		queues[c] = map[string]any{"queueUrl": aws.ToString(u.QueueUrl), "mode": "install"}
	}
	out["clusters"] = queues
	l := &loopback{bus: b, eventsURL: eb.URL, logsURL: logs.URL, read: map[string][]string{}, eb: eb}
	l.outputs, _ = json.Marshal(out)
	l.startKarpenter = func(cluster string) {
		wg.Go(func() {
			_ = b.Karpenter(ctx, cluster, func(body string) {
				p, err := karpenter.Parse(body)
				kind := p.Kind
				if err != nil {
					kind = "error: " + err.Error()
				}
				l.mu.Lock()
				l.read[cluster] = append(l.read[cluster], kind)
				l.mu.Unlock()
			})
		})
	}
	return l
}

// verify runs cmd/verify, built from the repository, on the stack's outputs, against the stubs and goaws.
func (l *loopback) verify(t *testing.T, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	if l.verifyBin == "" {
		l.verifyBin = filepath.Join(t.TempDir(), "verify")
		build := exec.Command("go", "build", "-o", l.verifyBin, "./cmd/verify")
		build.Dir = filepath.Join("..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building cmd/verify: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(l.verifyBin, append([]string{"-timeout", "8s"}, args...)...)
	cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL_EVENTBRIDGE="+l.eventsURL, "AWS_ENDPOINT_URL_CLOUDWATCH_LOGS="+l.logsURL)
	cmd.Stdin = bytes.NewReader(l.outputs)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), exit
}

// TestVerifyOnLoopback: verify puts a canary per cluster; each running Karpenter reads its own, as a no-op,
// and verify reports it forwarded and consumed; the cluster whose Karpenter is stopped is reported not consumed,
// by name, with exit 1. Once that Karpenter runs again, verifying it alone passes.
func TestVerifyOnLoopback(t *testing.T) {
	l := newLoopback(t, "alpha", "beta", "gamma")
	l.startKarpenter("alpha")
	l.startKarpenter("beta") // gamma's Karpenter is stopped

	stdout, stderr, exit := l.verify(t)
	t.Logf("make verify:\n%s%s", stdout, stderr)
	if exit != 1 || !strings.Contains(stderr, "the canary of gamma was not consumed") {
		t.Fatalf("exit %d, stderr %q: want 1 naming gamma\n%s", exit, stderr, stdout)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[3], "the hub's own rules deliver to the central queue") {
		t.Fatalf("report:\n%s\nwant one line per cluster, then the hub's rules delivering", stdout)
	}
	for i, c := range []string{"alpha", "beta"} {
		if !strings.HasPrefix(lines[i], c+" ") || !strings.Contains(lines[i], " forwarded in ") || !strings.Contains(lines[i], ", consumed by Karpenter in ") {
			t.Errorf("line %q, want %s forwarded and consumed", lines[i], c)
		}
	}
	if !strings.HasPrefix(lines[2], "gamma ") || !strings.Contains(lines[2], "forwarded in ") || !strings.Contains(lines[2], "not consumed within 8.0 s") {
		t.Errorf("line %q, want gamma forwarded and not consumed", lines[2])
	}
	l.mu.Lock()
	for _, c := range []string{"alpha", "beta"} {
		if got := l.read[c]; len(got) != 1 || got[0] != "no_op" {
			t.Errorf("%s's Karpenter read %v, want its one canary, a no-op", c, got)
		}
	}
	l.mu.Unlock()
	if got := l.Metric(contract.MetricCanaryForwarded, contract.DimCluster, "gamma"); got != 1 {
		t.Errorf("CanaryForwarded{Cluster=gamma} = %v, want 1", got)
	}

	l.startKarpenter("gamma")
	stdout, stderr, exit = l.verify(t, "-cluster", "gamma")
	if exit != 0 || !strings.Contains(stdout, "gamma  forwarded in ") || !strings.Contains(stdout, "consumed by Karpenter in ") {
		t.Errorf("verifying gamma once its Karpenter runs: exit %d\n%s%s", exit, stdout, stderr)
	}
	// At once again: the router holds the new canary back (gamma had one less than the interval ago), and verify
	// puts another once the interval has passed.
	stdout, stderr, exit = l.verify(t, "-cluster", "gamma")
	if exit != 0 || !strings.Contains(stdout, "put again: the router held back 1") {
		t.Errorf("verifying gamma right after: exit %d, want 0 with its held-back canary put again\n%s%s", exit, stdout, stderr)
	}
	if d := l.dropReasons(); !slices.ContainsFunc(slices.Collect(maps.Values(d)), func(r []string) bool { return slices.Contains(r, string(contract.ReasonCanaryRateLimited)) }) {
		t.Errorf("no canary_rate_limited drop in the router's log: %v", d)
	}
	if exit, _ := l.verifyUnknown(t); exit != 1 {
		t.Errorf("verifying a cluster not on the bus exited %d, want 1", exit)
	}
}

func (l *loopback) verifyUnknown(t *testing.T) (int, string) {
	_, stderr, exit := l.verify(t, "-cluster", "delta")
	if !strings.Contains(stderr, `cluster "delta" is not on the bus`) {
		t.Errorf("stderr %q does not name delta", stderr)
	}
	return exit, stderr
}

// TestVerifySaysHowTheHubsRulesDeliver: make verify after the first pulumi up says whether the hub's own rules
// deliver, and if not, the one setting to switch, for each way AWS could refuse an execution role on an SQS target of
// its own account: EventBridge stamping another SenderId than the role's (the router refuses the canaries for their
// sender), or refusing to deliver (the canaries in the dead-letter queue with EventBridge's error). Switched to
// centralQueue.hubDelivery queuePolicy, the same canaries, delivered as no role through the queue's policy, reach
// every Karpenter, and verify passes.
func TestVerifySaysHowTheHubsRulesDeliver(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts harness.Options
		as   func(b *bus) *sqs.Client
		dlq  bool
		want []string // in verify's output; the first line of a failure
	}{
		{"another SenderId", harness.Options{Clusters: []string{"alpha"}}, func(b *bus) *sqs.Client { return b.As(sqsemu.Account, "AWSServiceRoleForEventBridgeStub") }, false,
			[]string{"do NOT deliver as the router takes them (executionRole)", "forged_sender", "pulumi config set --path centralQueue.hubDelivery queuePolicy"}},
		{"dead-lettered", harness.Options{Clusters: []string{"alpha"}}, nil, true,
			[]string{"EventBridge dead-lettered its canaries (NO_PERMISSIONS: ", "pulumi config set --path centralQueue.hubDelivery queuePolicy"}},
		{"through the queue's policy", harness.Options{Clusters: []string{"alpha"}, HubDelivery: contract.HubDeliveryQueuePolicy}, nil, false,
			[]string{"alpha  forwarded in", "the hub's own rules deliver to the central queue (queuePolicy)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newLoopbackWith(t, tt.opts, tt.as)
			if tt.dlq {
				l.eb.Refuse(&ebstub.Refusal{Code: "NO_PERMISSIONS", Message: "EventBridge may not assume the target's role", DLQURL: l.DLQ, DLQClient: l.SQS.Client()})
			}
			l.startKarpenter("alpha")
			stdout, stderr, exit := l.verify(t)
			t.Logf("make verify:\n%s%s", stdout, stderr)
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("verify does not say %q", w)
				}
			}
			if wantExit := map[bool]int{true: 0, false: 1}[tt.opts.HubDelivery != ""]; exit != wantExit {
				t.Errorf("exit %d, want %d", exit, wantExit)
			}
		})
	}
}
