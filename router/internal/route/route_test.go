package route

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/canary"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

const (
	qprefix = "kib_"
	account = "123456789012"
	region  = "us-east-1"
)

// fakeEC2 answers DescribeInstances from owner tags; ids absent from owners are unknown to EC2.
type fakeEC2 struct {
	mu     sync.Mutex
	owners map[string]string // instance id -> eks:eks-cluster-name ("" for an untagged instance)
	err    error
	calls  int
	// before, when set, runs before each call is answered, outside the lock.
	before func()
}

func (f *fakeEC2) DescribeInstances(_ context.Context, in *ec2.DescribeInstancesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	if f.before != nil {
		f.before()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	var insts []ec2types.Instance
	for _, id := range in.Filters[0].Values {
		c, ok := f.owners[id]
		if !ok {
			continue
		}
		inst := ec2types.Instance{InstanceId: aws.String(id)}
		if c != "" {
			inst.Tags = []ec2types.Tag{{Key: aws.String("eks:eks-cluster-name"), Value: aws.String(c)}}
		}
		insts = append(insts, inst)
	}
	return &ec2.DescribeInstancesOutput{Reservations: []ec2types.Reservation{{Instances: insts}}}, nil
}

// fakeSQS holds the cluster queues that exist and what each received; failing queues answer errors.
type fakeSQS struct {
	mu        sync.Mutex
	queues    map[string][]string // queue name -> bodies received
	sendErr   map[string]error    // queue name -> error for the whole call
	failEntry map[string]int      // queue name -> index of an entry to fail inside an HTTP 200
	sends     int
	urlCalls  int
	byURL     map[string][]string // queue URL (account and name) -> bodies received
}

func newSQS(clusters ...string) *fakeSQS {
	f := &fakeSQS{queues: map[string][]string{}, sendErr: map[string]error{}, failEntry: map[string]int{}}
	for _, c := range clusters {
		f.queues[queuename.For(qprefix, c)] = nil
	}
	return f
}

func (f *fakeSQS) GetQueueUrl(_ context.Context, in *sqs.GetQueueUrlInput, _ ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.urlCalls++
	if _, ok := f.queues[*in.QueueName]; !ok {
		return nil, &sqstypes.QueueDoesNotExist{}
	}
	return &sqs.GetQueueUrlOutput{QueueUrl: aws.String("https://sqs/" + *in.QueueOwnerAWSAccountId + "/" + *in.QueueName)}, nil
}

func (f *fakeSQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends++
	name := (*in.QueueUrl)[strings.LastIndex(*in.QueueUrl, "/")+1:]
	if err := f.sendErr[name]; err != nil {
		return nil, err
	}
	out := &sqs.SendMessageBatchOutput{}
	fail, hasFail := f.failEntry[name]
	for i, e := range in.Entries {
		if hasFail && i == fail {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InternalError")})
			continue
		}
		f.queues[name] = append(f.queues[name], *e.MessageBody)
		if f.byURL == nil {
			f.byURL = map[string][]string{}
		}
		f.byURL[*in.QueueUrl] = append(f.byURL[*in.QueueUrl], *e.MessageBody)
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

type harness struct {
	ec2       *fakeEC2
	sqs       *fakeSQS
	redeliver *fakeRedeliverer
	r         *Router
	logs      *bytes.Buffer
	emf       *bytes.Buffer
	seals     *seals // judgedHarness's
}

// fakeRedeliverer records the messages it is asked to bring back, and their receive counts.
type fakeRedeliverer struct {
	mu    sync.Mutex
	later map[string]int // receipt handle -> receive count
	err   error
}

func (f *fakeRedeliverer) Later(_ context.Context, receiptHandle string, receiveCount int) (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.later[receiptHandle] = receiveCount
	return time.Duration(receiveCount) * time.Second, f.err
}

func newHarness(owners map[string]string, clustersWithQueues ...string) *harness {
	h := &harness{ec2: &fakeEC2{owners: owners}, sqs: newSQS(clustersWithQueues...), logs: &bytes.Buffer{}, emf: &bytes.Buffer{},
		redeliver: &fakeRedeliverer{later: map[string]int{}}}
	h.r = New(
		accounts.New(owner.New(h.ec2, owner.Options{CacheSize: 1000, OwnerTTL: time.Hour, NoOwnerTTL: time.Hour}), accounts.Options{}),
		forward.New(h.sqs, forward.Options{CacheSize: 100, URLTTL: time.Hour, MissingTTL: time.Hour}),
		Options{
			QueuePrefix: qprefix, Bus: "kib-test", SendConcurrency: 4, BusQueues: []string{queuename.For(qprefix, "central")},
			Redeliverer: h.redeliver,
			Metrics:     metrics.NewWriter(h.emf, "NS", "test"),
			Log:         slog.New(slog.NewJSONHandler(h.logs, nil)),
			Now:         func() time.Time { return time.Date(2026, 11, 21, 12, 0, 10, 0, time.UTC) },
		})
	return h
}

func (h *harness) handle(t *testing.T, bodies ...string) events.SQSEventResponse {
	t.Helper()
	resp, err := h.r.Handle(context.Background(), batch(bodies...))
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	return resp
}

// prime routes bodies outside the test's assertions, to warm caches.
func (h *harness) prime(bodies ...string) {
	_, _ = h.r.Handle(context.Background(), batch(bodies...))
	h.logs.Reset()
	h.emf.Reset()
}

func batch(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("m%d", i), ReceiptHandle: fmt.Sprintf("rh%d", i),
			Body: b, Attributes: map[string]string{"ApproximateReceiveCount": fmt.Sprint(i + 1)}})
	}
	return ev
}

func (h *harness) received(cluster string) []string {
	return h.sqs.queues[queuename.For(qprefix, cluster)]
}

// dropLogs returns messageId -> reasons of the "message dropped" log lines.
func (h *harness) dropLogs(t *testing.T) map[string][]string {
	t.Helper()
	return h.logsOf(t, "message dropped", "messageId", "reason")
}

// logsOf returns, for the log lines whose msg is msg, their key attribute -> their value attributes.
func (h *harness) logsOf(t *testing.T, msg, key, value string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			k, _ := rec[key].(string)
			v, ok := rec[value].(string)
			if !ok && rec[value] != nil {
				v = fmt.Sprint(rec[value])
			}
			if !ok && rec[value] == nil {
				v = ""
			}
			out[k] = append(out[k], v)
		}
	}
	return out
}

// metric returns the value of metric in the EMF record whose dimension dim equals val.
func (h *harness) metric(t *testing.T, dim, val, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(h.emf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if v, ok := rec[name].(float64); ok && (rec[dim] == val || dim == "") {
			return v
		}
	}
	return 0
}

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "event", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func spot(id string) string {
	return `{"version":"0","id":"ev-` + id + `","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2",` +
		`"account":"` + account + `","time":"2026-11-21T12:00:00Z","region":"` + region + `","resources":[],` +
		`"detail":{"instance-id":"` + id + `","instance-action":"terminate"}}`
}

func instance(n int) string { return fmt.Sprintf("i-%017x", n) }

func failedIDs(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

func TestEveryKindReachesItsOwner(t *testing.T) {
	owners := map[string]string{
		"i-0a1b2c3d4e5f60001": "alpha", "i-0a1b2c3d4e5f60002": "beta", "i-0a1b2c3d4e5f60003": "gamma",
		"i-0a1b2c3d4e5f60004": "alpha", "i-0a1b2c3d4e5f60005": "beta", "i-0a1b2c3d4e5f60006": "gamma",
		"i-0a1b2c3d4e5f60007": "alpha",
	}
	h := newHarness(owners, "alpha", "beta", "gamma")
	spotB, rebalance, term := fixture(t, "spot-interruption.json"), fixture(t, "rebalance-recommendation.json"), fixture(t, "state-change-terminated.json")
	stopping, health, capres := fixture(t, "state-change-stopping.json"), fixture(t, "health-scheduled-change.json"), fixture(t, "capacity-reservation-interruption.json")
	resp := h.handle(t, spotB, rebalance, term, stopping, health, capres)
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v, want none", failedIDs(resp))
	}
	want := map[string][]string{
		"alpha": {spotB, stopping, capres},
		"beta":  {rebalance, health},
		"gamma": {term, health},
	}
	for cluster, bodies := range want {
		got := h.received(cluster)
		slices.Sort(got)
		slices.Sort(bodies)
		if !slices.Equal(got, bodies) {
			t.Errorf("%s received %d bodies, want %d, byte for byte:\n got %q\nwant %q", cluster, len(got), len(bodies), got, bodies)
		}
	}
	if got := h.metric(t, contract.DimCluster, "gamma", contract.MetricForwarded); got != 2 {
		t.Errorf("Forwarded{Cluster=gamma} = %v, want 2", got)
	}
	if got := h.metric(t, contract.DimKind, "scheduled_change", contract.MetricReceived); got != 1 {
		t.Errorf("Received{Kind=scheduled_change} = %v, want 1", got)
	}
}

func TestHealthEventReachesEachOwningClusterOnce(t *testing.T) {
	a1, a2, b1, none := instance(1), instance(2), instance(3), instance(4)
	h := newHarness(map[string]string{a1: "a", a2: "a", b1: "b", none: ""}, "a", "b")
	health := `{"version":"0","id":"h","detail-type":"AWS Health Event","source":"aws.health","account":"` + account +
		`","time":"2026-11-21T12:00:00Z","region":"` + region + `","resources":[],"detail":{"service":"EC2",` +
		`"eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"` + a1 + `"},{"entityValue":"` + b1 +
		`"},{"entityValue":"` + a2 + `"},{"entityValue":"` + none + `"},{"entityValue":"` + a1 + `"}]}}`
	if resp := h.handle(t, health); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v", failedIDs(resp))
	}
	for _, c := range []string{"a", "b"} {
		if got := h.received(c); len(got) != 1 || got[0] != health {
			t.Errorf("cluster %s received %d copies, want exactly 1 unchanged", c, len(got))
		}
	}
}

func TestDrops(t *testing.T) {
	owned, untagged, unknown, orphan, badTag, loop := instance(1), instance(2), instance(3), instance(4), instance(5), instance(6)
	owners := map[string]string{owned: "a", untagged: "", orphan: "no-queue-cluster", badTag: "not/a cluster", loop: "central"}
	pending := strings.Replace(fixture(t, "state-change-terminated.json"), `"terminated"`, `"pending"`, 1)
	tests := []struct {
		name, body string
		reason     contract.Reason
	}{
		{"not JSON", "not json", contract.ReasonUnparseable},
		{"no instance id", strings.Replace(spot(owned), `"instance-id":"`+owned+`",`, "", 1), contract.ReasonUnparseable},
		{"pending state", pending, contract.ReasonNotInterruption},
		{"other source", strings.Replace(spot(owned), `"aws.ec2"`, `"aws.s3"`, 1), contract.ReasonNotInterruption},
		{"untagged instance", spot(untagged), contract.ReasonNoOwner},
		{"instance unknown to EC2", spot(unknown), contract.ReasonNoOwner},
		{"owner without a queue", spot(orphan), contract.ReasonNoQueue},
		{"owner tag no cluster can have", spot(badTag), contract.ReasonNoQueue},
		// Were a bus queue ever a cluster's, the router must not feed the bus its own output.
		{"owner whose queue is the bus's own", spot(loop), contract.ReasonNoQueue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(owners, "a", "central")
			// The good message in the same batch is forwarded regardless.
			resp := h.handle(t, tt.body, spot(owned))
			if len(resp.BatchItemFailures) != 0 {
				t.Fatalf("failures = %v, want none: a drop is acknowledged", failedIDs(resp))
			}
			if got := h.dropLogs(t); !slices.Equal(got["m0"], []string{string(tt.reason)}) || len(got) != 1 {
				t.Errorf("drop logs = %v, want m0 logged once with %s", got, tt.reason)
			}
			if got := h.metric(t, contract.DimReason, string(tt.reason), contract.MetricDropped); got != 1 {
				t.Errorf("Dropped{Reason=%s} = %v, want 1", tt.reason, got)
			}
			if got := h.received("a"); len(got) != 1 || got[0] != spot(owned) {
				t.Errorf("cluster a received %q, want only the good event", got)
			}
			if got := h.received("central"); len(got) != 0 {
				t.Errorf("the bus's own queue received %d events", len(got))
			}
		})
	}
}

func TestTransientFailuresRetryOnlyTheirMessages(t *testing.T) {
	a, b := instance(1), instance(2)
	owners := map[string]string{a: "a", b: "b"}
	throttle := &smithy.GenericAPIError{Code: "RequestLimitExceeded", Message: "slow down"}
	tests := []struct {
		name      string
		setup     func(h *harness)
		wantRetry []string
		wantA     int
	}{
		{"EC2 throttled", func(h *harness) { h.ec2.err = throttle }, []string{"m0", "m1", "m2"}, 0},
		{"queue b answers 500", func(h *harness) {
			h.sqs.sendErr[queuename.For(qprefix, "b")] = &smithy.GenericAPIError{Code: "InternalError", Fault: smithy.FaultServer}
		}, []string{"m1"}, 2},
		{"queue b throttled", func(h *harness) {
			h.sqs.sendErr[queuename.For(qprefix, "b")] = &smithy.GenericAPIError{Code: "RequestThrottled"}
		}, []string{"m1"}, 2},
		{"entry failed inside HTTP 200", func(h *harness) { h.sqs.failEntry[queuename.For(qprefix, "a")] = 1 }, []string{"m2"}, 1},
		{"queue b deleted after its URL was cached", func(h *harness) {
			h.prime(spot(b)) // caches b's URL
			h.sqs.sendErr[queuename.For(qprefix, "b")] = &sqstypes.QueueDoesNotExist{}
		}, []string{"m1"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(owners, "a", "b")
			tt.setup(h)
			resp := h.handle(t, spot(a), spot(b), strings.Replace(spot(a), `"ev-`, `"ev2-`, 1))
			if got := failedIDs(resp); !slices.Equal(got, tt.wantRetry) {
				t.Errorf("BatchItemFailures = %v, want %v", got, tt.wantRetry)
			}
			if got := len(h.received("a")); got != tt.wantA {
				t.Errorf("cluster a received %d, want %d", got, tt.wantA)
			}
			if got := h.metric(t, contract.DimBus, "test", contract.MetricRetried); got != float64(len(tt.wantRetry)) {
				t.Errorf("Retried = %v, want %d", got, len(tt.wantRetry))
			}
			if len(h.dropLogs(t)) != 0 {
				t.Errorf("a transient failure was logged as a drop")
			}
			// Each retried message, and only those, is brought back after a backoff on its own receive count.
			want := map[string]int{}
			for _, id := range tt.wantRetry {
				n, _ := strconv.Atoi(strings.TrimPrefix(id, "m"))
				want[fmt.Sprintf("rh%d", n)] = n + 1
			}
			if fmt.Sprint(h.redeliver.later) != fmt.Sprint(want) {
				t.Errorf("redelivered %v, want %v (receipt handle -> receive count)", h.redeliver.later, want)
			}
		})
	}
}

// TestRetryComesBackEvenWhenItsVisibilityCannotBeChanged: a failed ChangeMessageVisibility only delays the
// message to the queue's visibility timeout; it is still listed for redelivery, and the log says why it is late.
func TestRetryComesBackEvenWhenItsVisibilityCannotBeChanged(t *testing.T) {
	a := instance(1)
	h := newHarness(map[string]string{a: "a"}, "a")
	h.sqs.sendErr[queuename.For(qprefix, "a")] = errors.New("connection reset")
	h.redeliver.err = errors.New("throttled")
	if got := failedIDs(h.handle(t, spot(a))); !slices.Equal(got, []string{"m0"}) {
		t.Fatalf("BatchItemFailures = %v, want m0", got)
	}
	if !strings.Contains(h.logs.String(), `"redeliveryError":"throttled"`) {
		t.Errorf("the failed visibility change is not logged:\n%s", h.logs.String())
	}
}

func TestHealthEventRetriedWhenOneOwnerFails(t *testing.T) {
	a, b := instance(1), instance(2)
	h := newHarness(map[string]string{a: "a", b: "b"}, "a", "b")
	h.sqs.sendErr[queuename.For(qprefix, "b")] = errors.New("connection reset")
	health := `{"version":"0","id":"h","detail-type":"AWS Health Event","source":"aws.health","account":"` + account +
		`","time":"2026-11-21T12:00:00Z","region":"` + region + `","resources":[],"detail":{"service":"EC2",` +
		`"eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"` + a + `"},{"entityValue":"` + b + `"}]}}`
	resp := h.handle(t, health)
	if got := failedIDs(resp); !slices.Equal(got, []string{"m0"}) {
		t.Fatalf("BatchItemFailures = %v, want m0: one owner did not get it", got)
	}
}

func TestCallCounts(t *testing.T) {
	tests := []struct {
		name               string
		messages, clusters int
		wantEC2, wantURL   int
	}{
		{"100 over 5 clusters", 100, 5, 1, 5},
		{"7 over 1 cluster", 7, 1, 1, 1},
		{"250 over 3 clusters", 250, 3, 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owners := map[string]string{}
			var bodies []string
			perCluster := make([]int, tt.clusters)
			for i := range tt.messages {
				id := instance(i + 1)
				owners[id] = fmt.Sprintf("c%d", i%tt.clusters)
				perCluster[i%tt.clusters]++
				bodies = append(bodies, spot(id))
			}
			want := 0
			for _, n := range perCluster {
				want += (n + 9) / 10 // ceil(n/10) SendMessageBatch calls per cluster
			}
			var names []string
			for c := range tt.clusters {
				names = append(names, fmt.Sprintf("c%d", c))
			}
			h := newHarness(owners, names...)
			if resp := h.handle(t, bodies...); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("failures: %v", failedIDs(resp))
			}
			if h.sqs.sends != want {
				t.Errorf("SendMessageBatch calls = %d, want sum of ceil(n/10) = %d", h.sqs.sends, want)
			}
			if h.ec2.calls != tt.wantEC2 {
				t.Errorf("DescribeInstances calls = %d, want %d (ceil(ids/200))", h.ec2.calls, tt.wantEC2)
			}
			if h.sqs.urlCalls != tt.wantURL {
				t.Errorf("GetQueueUrl calls = %d, want %d", h.sqs.urlCalls, tt.wantURL)
			}
			h.ec2.calls, h.sqs.sends, h.sqs.urlCalls = 0, 0, 0
			h.handle(t, bodies...)
			if h.ec2.calls != 0 || h.sqs.urlCalls != 0 || h.sqs.sends != want {
				t.Errorf("warm batch: DescribeInstances %d, GetQueueUrl %d, SendMessageBatch %d; want 0, 0, %d",
					h.ec2.calls, h.sqs.urlCalls, h.sqs.sends, want)
			}
		})
	}
}

func TestCancelledContextFailsTheBatch(t *testing.T) {
	h := newHarness(nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.r.Handle(ctx, batch(spot(instance(1)))); err == nil {
		t.Fatal("Handle with a cancelled context returned no error")
	}
}

func TestEmptyBatch(t *testing.T) {
	h := newHarness(nil)
	if resp := h.handle(t); len(resp.BatchItemFailures) != 0 || h.ec2.calls != 0 || h.sqs.sends != 0 {
		t.Fatalf("empty batch made calls or failed: %+v", resp)
	}
}

// canaryLogs returns the clusters of the "canary forwarded" log lines, by event id.
func (h *harness) canaryLogs(t *testing.T) map[string][]string {
	t.Helper()
	return h.logsOf(t, contract.LogCanaryForwarded, contract.LogEventID, contract.LogCluster)
}

func TestCanaryReachesTheNamedClustersWithoutLookup(t *testing.T) {
	h := newHarness(map[string]string{}, "alpha", "beta", "gamma")
	canary := fixture(t, "canary.json") // for alpha and beta
	if resp := h.handle(t, canary); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v", failedIDs(resp))
	}
	for cluster, want := range map[string]int{"alpha": 1, "beta": 1, "gamma": 0} {
		got := h.received(cluster)
		if len(got) != want || (want == 1 && got[0] != canary) {
			t.Errorf("%s received %q, want %d unchanged canary", cluster, got, want)
		}
		if m := h.metric(t, contract.DimCluster, cluster, contract.MetricCanaryForwarded); m != float64(want) {
			t.Errorf("CanaryForwarded{Cluster=%s} = %v, want %d", cluster, m, want)
		}
		if m := h.metric(t, contract.DimCluster, cluster, contract.MetricForwarded); m != 0 {
			t.Errorf("Forwarded{Cluster=%s} = %v: a canary is not an interruption", cluster, m)
		}
	}
	if h.ec2.calls != 0 {
		t.Errorf("%d DescribeInstances calls for a canary, want none", h.ec2.calls)
	}
	if got := h.canaryLogs(t)["7f7a0a6e-5c1e-4b0b-9d55-1b2a6a8c0c01"]; !slices.Equal(got, []string{"alpha", "beta"}) && !slices.Equal(got, []string{"beta", "alpha"}) {
		t.Errorf("canary log lines for %v, want one for alpha and one for beta", got)
	}
	if m := h.metric(t, contract.DimKind, string(contract.KindCanary), contract.MetricReceived); m != 1 {
		t.Errorf("Received{Kind=canary} = %v, want 1", m)
	}
}

func TestCanaryDrops(t *testing.T) {
	canary := fixture(t, "canary.json")
	tests := []struct {
		name, body string
		reason     contract.Reason // "" when forwarded
		received   int             // by alpha
	}{
		{"a cluster not on the bus", strings.Replace(canary, `["alpha","beta"]`, `["gamma"]`, 1), contract.ReasonNoQueue, 0},
		{"one cluster on the bus, one not", strings.Replace(canary, `["alpha","beta"]`, `["gamma","alpha"]`, 1), "", 1},
		{"another bus's", strings.Replace(canary, `"bus":"kib-test"`, `"bus":"kib-other"`, 1), contract.ReasonNotInterruption, 0},
		{"a name no queue can bear", strings.Replace(canary, `["alpha","beta"]`, `["a b"]`, 1), contract.ReasonUnparseable, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(map[string]string{}, "alpha")
			if resp := h.handle(t, tt.body); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("failures = %v, want none: a canary is never retried for want of a queue", failedIDs(resp))
			}
			want := map[string][]string{}
			if tt.reason != "" {
				want["m0"] = []string{string(tt.reason)}
			}
			if got := h.dropLogs(t); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("drop logs = %v, want %v", got, want)
			}
			if got := h.received("alpha"); len(got) != tt.received {
				t.Errorf("alpha received %d canaries, want %d", len(got), tt.received)
			}
			if h.ec2.calls != 0 {
				t.Errorf("%d DescribeInstances calls for a canary, want none", h.ec2.calls)
			}
		})
	}
}

const (
	memberA = "222222222222"
	memberB = "333333333333"
	unknown = "444444444444"
)

func spotIn(acct, id string) string {
	return strings.Replace(spot(id), `"account":"`+account+`"`, `"account":"`+acct+`"`, 1)
}

// accountsHarness is a router for the bus's account and two members, each with its own EC2.
func accountsHarness(t *testing.T, hub, a, b *fakeEC2, clusters ...string) *harness {
	t.Helper()
	h := &harness{ec2: hub, sqs: newSQS(clusters...), logs: &bytes.Buffer{}, emf: &bytes.Buffer{}, redeliver: &fakeRedeliverer{later: map[string]int{}}}
	opts := owner.Options{CacheSize: 1000, OwnerTTL: time.Hour, NoOwnerTTL: time.Hour}
	h.r = New(
		accounts.New(owner.New(hub, opts), accounts.Options{
			ReaderRole: func(account string) string {
				return map[string]string{memberA: "reader-a", memberB: "reader-b"}[account]
			},
			NewResolver: func(role string) (accounts.Resolver, error) {
				return map[string]accounts.Resolver{"reader-a": owner.New(a, opts), "reader-b": owner.New(b, opts)}[role], nil
			},
		}),
		forward.New(h.sqs, forward.Options{CacheSize: 100, URLTTL: time.Hour, MissingTTL: time.Hour}),
		Options{
			QueuePrefix: qprefix, Bus: "kib-test", Hub: account, Accounts: []string{account, memberA, memberB}, SendConcurrency: 4,
			Redeliverer: h.redeliver, Metrics: metrics.NewWriter(h.emf, "NS", "test"), Log: slog.New(slog.NewJSONHandler(h.logs, nil)),
			Now: func() time.Time { return time.Date(2026, 11, 21, 12, 0, 10, 0, time.UTC) },
		})
	return h
}

// TestMemberAccounts: each event is looked up in its own account's EC2 and forwarded to the owning cluster's
// queue in that account; a canary of a member reaches the queue in that member; an event of an account not on
// the bus is dropped as unknown_account without any lookup.
func TestMemberAccounts(t *testing.T) {
	hub := &fakeEC2{owners: map[string]string{instance(1): "alpha"}}
	a := &fakeEC2{owners: map[string]string{instance(2): "beta"}}
	b := &fakeEC2{owners: map[string]string{instance(3): "gamma", instance(2): "wrong"}}
	h := accountsHarness(t, hub, a, b, "alpha", "beta", "gamma")
	canary := strings.Replace(fixture(t, "canary.json"), `"account":"`+account+`"`, `"account":"`+memberA+`"`, 1)
	canary = strings.Replace(canary, `["alpha","beta"]`, `["beta"]`, 1)
	// verify, run in the bus's account, names the account of a member's cluster in its canary.
	fromHub := strings.Replace(strings.Replace(fixture(t, "canary.json"), `["alpha","beta"]`, `["gamma"]`, 1), `"bus":"kib-test",`, `"bus":"kib-test","account":"`+memberB+`",`, 1)
	toStranger := strings.Replace(fromHub, `"account":"`+memberB+`"`, `"account":"`+unknown+`"`, 1)
	bodies := []string{spotIn(account, instance(1)), spotIn(memberA, instance(2)), spotIn(memberB, instance(3)), spotIn(unknown, instance(4)), canary, fromHub, toStranger}
	if resp := h.handle(t, bodies...); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v", failedIDs(resp))
	}
	want := map[string][]string{
		"https://sqs/" + account + "/" + queuename.For(qprefix, "alpha"): {bodies[0]},
		"https://sqs/" + memberA + "/" + queuename.For(qprefix, "beta"):  {bodies[1], canary},
		"https://sqs/" + memberB + "/" + queuename.For(qprefix, "gamma"): {bodies[2], fromHub},
	}
	if fmt.Sprint(h.sqs.byURL) != fmt.Sprint(want) {
		t.Errorf("deliveries = %v\nwant %v", h.sqs.byURL, want)
	}
	for name, f := range map[string]*fakeEC2{"hub": hub, "member A": a, "member B": b} {
		if f.calls != 1 {
			t.Errorf("%s's EC2 answered %d calls, want 1", name, f.calls)
		}
	}
	if got := h.dropLogs(t); fmt.Sprint(got) != fmt.Sprint(map[string][]string{"m3": {string(contract.ReasonUnknownAccount)}, "m6": {string(contract.ReasonUnknownAccount)}}) {
		t.Errorf("drops = %v, want the unknown account's event only", got)
	}
	if got := h.metric(t, contract.DimReason, string(contract.ReasonUnknownAccount), contract.MetricDropped); got != 2 {
		t.Errorf("Dropped{Reason=unknown_account} = %v", got)
	}
}

// TestMemberFailuresStayTheirs: a member whose EC2 throttles (or whose role cannot be assumed) gets its events
// retried, never dropped, while the other accounts' are forwarded; lookups run in parallel, so a slow account
// does not hold up the others (member B's lookup waits for the hub's: run one after the other, B first, it
// would wait out its guard and fail).
func TestMemberFailuresStayTheirs(t *testing.T) {
	hubDone := make(chan struct{})
	hub := &fakeEC2{owners: map[string]string{instance(1): "alpha"}}
	var once sync.Once
	a := &fakeEC2{owners: map[string]string{instance(2): "beta"}, err: &smithy.GenericAPIError{Code: "RequestLimitExceeded"}}
	b := &fakeEC2{owners: map[string]string{instance(3): "gamma"}}
	b.before = func() {
		select {
		case <-hubDone:
		case <-time.After(10 * time.Second):
			b.mu.Lock()
			b.err = errors.New("the hub's lookup never ran while member B's waited")
			b.mu.Unlock()
		}
	}
	hub.before = func() { once.Do(func() { close(hubDone) }) }
	h := accountsHarness(t, hub, a, b, "alpha", "beta", "gamma")
	resp := h.handle(t, spotIn(memberB, instance(3)), spotIn(memberA, instance(2)), spotIn(account, instance(1)))
	if got := failedIDs(resp); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("retried = %v, want member A's event only", got)
	}
	for _, c := range []string{"alpha", "gamma"} {
		if len(h.received(c)) != 1 {
			t.Errorf("%s received %d events, want 1", c, len(h.received(c)))
		}
	}
	if len(h.dropLogs(t)) != 0 {
		t.Errorf("drops = %v, want none: a failed lookup is retried", h.dropLogs(t))
	}
}

// TestCanaryOfAnotherAccount: a canary may name clusters of another account only when it was put in the hub's own
// account (where make verify runs); put in a member, or, on a bus of one account, anywhere, it is dropped as
// canary_forbidden, logged and counted, and reaches nobody.
func TestCanaryOfAnotherAccount(t *testing.T) {
	naming := func(putIn, to string) string {
		c := strings.Replace(fixture(t, "canary.json"), `"account":"`+account+`"`, `"account":"`+putIn+`"`, 1)
		c = strings.Replace(c, `["alpha","beta"]`, `["gamma"]`, 1)
		return strings.Replace(c, `"bus":"kib-test",`, `"bus":"kib-test","account":"`+to+`",`, 1)
	}
	h := accountsHarness(t, &fakeEC2{}, &fakeEC2{}, &fakeEC2{}, "gamma")
	bodies := []string{naming(memberA, memberB), naming(memberB, account), naming(account, memberB)}
	if resp := h.handle(t, bodies...); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v", failedIDs(resp))
	}
	if got := h.sqs.byURL["https://sqs/"+memberB+"/"+queuename.For(qprefix, "gamma")]; !slices.Equal(got, []string{bodies[2]}) {
		t.Errorf("member B's gamma received %d canaries, want the hub's only", len(got))
	}
	if got := h.sqs.byURL["https://sqs/"+account+"/"+queuename.For(qprefix, "gamma")]; len(got) != 0 {
		t.Errorf("the hub's gamma received %d canaries put in member B", len(got))
	}
	want := map[string][]string{"m0": {string(contract.ReasonCanaryForbidden)}, "m1": {string(contract.ReasonCanaryForbidden)}}
	if got := h.dropLogs(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("drops = %v, want %v", got, want)
	}
	if got := h.metric(t, contract.DimReason, string(contract.ReasonCanaryForbidden), contract.MetricDropped); got != 2 {
		t.Errorf("Dropped{Reason=canary_forbidden} = %v, want 2", got)
	}

	// A bus of one account (no hub): a canary naming another account is forbidden too.
	single := newHarness(map[string]string{}, "gamma")
	if resp := single.handle(t, naming(account, memberB)); len(resp.BatchItemFailures) != 0 {
		t.Fatal("retried")
	}
	if got := single.dropLogs(t)["m0"]; !slices.Equal(got, []string{string(contract.ReasonCanaryForbidden)}) {
		t.Errorf("single-account bus: drop = %v, want canary_forbidden", got)
	}
}

// TestCanaryRateLimitKey: the limit is per cluster queue, keyed on the cluster's own account (the account the
// canary names) and the cluster, not on the account the canary was put in: a canary put in the hub naming member
// B's gamma and one put in B naming its own gamma share a slot. A failed delivery gives back that same slot, so the
// retry goes through whichever account put the canary.
func TestCanaryRateLimitKey(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 10, 0, time.UTC)
	naming := func(putIn, to string) string {
		c := strings.Replace(fixture(t, "canary.json"), `"account":"`+account+`"`, `"account":"`+putIn+`"`, 1)
		c = strings.Replace(c, `["alpha","beta"]`, `["gamma"]`, 1)
		return strings.Replace(c, `"bus":"kib-test",`, `"bus":"kib-test","account":"`+to+`",`, 1)
	}
	gammaB := "https://sqs/" + memberB + "/" + queuename.For(qprefix, "gamma")

	h := accountsHarness(t, &fakeEC2{}, &fakeEC2{}, &fakeEC2{}, "gamma")
	h.r.canaries = canary.NewLimiter(30*time.Second, 100, func() time.Time { return now })
	h.handle(t, naming(account, memberB))
	h.handle(t, naming(memberB, memberB))
	if got := len(h.sqs.byURL[gammaB]); got != 1 {
		t.Errorf("member B's gamma received %d canaries in one interval (one put in the hub, one in B), want 1", got)
	}

	h = accountsHarness(t, &fakeEC2{}, &fakeEC2{}, &fakeEC2{}, "gamma")
	h.r.canaries = canary.NewLimiter(30*time.Second, 100, func() time.Time { return now })
	h.sqs.sendErr = map[string]error{queuename.For(qprefix, "gamma"): &smithy.GenericAPIError{Code: "ServiceUnavailable"}}
	if resp := h.handle(t, naming(account, memberB)); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("a failed canary delivery was not retried: %v", failedIDs(resp))
	}
	h.sqs.sendErr = nil
	if resp := h.handle(t, naming(account, memberB)); len(resp.BatchItemFailures) != 0 || len(h.sqs.byURL[gammaB]) != 1 {
		t.Errorf("the retry of a canary put in the hub for member B was held back: B's gamma received %d, failures %v",
			len(h.sqs.byURL[gammaB]), failedIDs(resp))
	}
}

// TestCanaryRateLimit: one canary per cluster per interval reaches its queue; the excess is dropped as
// canary_rate_limited and counted; another cluster, or the same cluster once the interval has passed, is not held
// back; a canary naming a held-back cluster and a free one reaches the free one; a failed delivery gives its slot
// back, so its retry is delivered.
func TestCanaryRateLimit(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 10, 0, time.UTC)
	h := newHarness(map[string]string{}, "alpha", "beta")
	h.r.canaries = canary.NewLimiter(30*time.Second, 100, func() time.Time { return now })
	forCluster := func(cs string) string { return strings.Replace(fixture(t, "canary.json"), `["alpha","beta"]`, cs, 1) }
	alpha := forCluster(`["alpha"]`)

	h.handle(t, alpha, alpha, alpha)
	if got := len(h.received("alpha")); got != 1 {
		t.Fatalf("alpha received %d of 3 canaries in one interval, want 1", got)
	}
	if got := h.metric(t, contract.DimReason, string(contract.ReasonCanaryRateLimited), contract.MetricDropped); got != 2 {
		t.Errorf("Dropped{Reason=canary_rate_limited} = %v, want 2", got)
	}
	h.handle(t, forCluster(`["alpha","beta"]`))
	if len(h.received("alpha")) != 1 || len(h.received("beta")) != 1 {
		t.Errorf("alpha and beta received %d and %d, want 1 each: beta was free", len(h.received("alpha")), len(h.received("beta")))
	}
	now = now.Add(30 * time.Second)
	h.handle(t, alpha)
	if got := len(h.received("alpha")); got != 2 {
		t.Errorf("after the interval alpha received %d in all, want 2", got)
	}

	h.sqs.sendErr = map[string]error{queuename.For(qprefix, "beta"): &smithy.GenericAPIError{Code: "ServiceUnavailable"}}
	now = now.Add(time.Minute)
	if resp := h.handle(t, forCluster(`["beta"]`)); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("a failed canary delivery was not retried: %v", failedIDs(resp))
	}
	h.sqs.sendErr = nil
	if resp := h.handle(t, forCluster(`["beta"]`)); len(resp.BatchItemFailures) != 0 || len(h.received("beta")) != 2 {
		t.Errorf("the retry of a failed canary was held back: beta received %d, failures %v", len(h.received("beta")), failedIDs(resp))
	}
}

// fakeSenders decides senders by a table.
type fakeSenders struct {
	results map[string]sender.Result // sender -> result, whatever the account
}

func (f *fakeSenders) IsRedrive(context.Context, string, time.Time) (bool, error) { return false, nil }

func (f *fakeSenders) Check(_ context.Context, _ string, _ bool, msgs []sender.Message) []sender.Result {
	out := make([]sender.Result, len(msgs))
	for i, m := range msgs {
		out[i] = f.results[m.Sender]
	}
	return out
}

// TestSenderCheck: in enforce mode a forged sender's message is dropped as forged_sender, named in its log line
// and counted, before any lookup in the account it names; an undecided one is retried; a sender whose account's
// reader role is refused drops the message as unknown_account; a sender that is no role is refused (forged), counted
// as such, and logged once. In observe mode the forged and undecided ones are forwarded too, logged and counted.
func TestSenderCheck(t *testing.T) {
	for _, observe := range []bool{false, true} {
		t.Run(map[bool]string{false: "enforce", true: "observe"}[observe], func(t *testing.T) {
			hub := &fakeEC2{owners: map[string]string{instance(1): "alpha"}}
			a := &fakeEC2{owners: map[string]string{instance(2): "beta", instance(5): "beta"}}
			b := &fakeEC2{owners: map[string]string{instance(3): "gamma", instance(4): "gamma"}}
			h := accountsHarness(t, hub, a, b, "alpha", "beta", "gamma")
			senders := &fakeSenders{results: map[string]sender.Result{
				"AROAA:s":  {Verdict: sender.Genuine},
				"AROAX:s":  {Verdict: sender.Forged, Err: errors.New("sender AROAX:s may not speak for account " + memberB)},
				"AROAU:s":  {Verdict: sender.Undecided, Err: errors.New("iam:GetRole throttled")},
				"AROAD:s":  {Verdict: sender.NotOnBus, Err: fmt.Errorf("%w: refused", accounts.ErrUnknownAccount)},
				"AIDASVC1": {Verdict: sender.Forged, Err: errors.New("sender AIDASVC1 is not an IAM role")},
			}}
			h.r.senders, h.r.observe = senders, observe
			bodies := []string{spotIn(memberA, instance(2)), spotIn(memberB, instance(3)), spotIn(memberB, instance(4)),
				spotIn(account, instance(1)), spotIn(memberA, instance(5)), spotIn(account, instance(1))}
			from := []string{"AROAA:s", "AROAX:s", "AROAU:s", "AIDASVC1", "AROAD:s", "AIDASVC1"}
			in := batch(bodies...)
			for i := range in.Records {
				in.Records[i].Attributes[sender.Attribute] = from[i]
			}
			resp, err := h.r.Handle(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			forged := string(contract.ReasonForgedSender)
			wantRetried, wantDrops := []string{"m2"}, map[string][]string{
				"m1": {forged}, "m3": {forged}, "m4": {string(contract.ReasonUnknownAccount)}, "m5": {forged},
			}
			wantGamma, wantAlpha := []string(nil), 0
			if observe {
				wantRetried, wantDrops = nil, map[string][]string{"m4": {string(contract.ReasonUnknownAccount)}}
				wantGamma, wantAlpha = []string{bodies[1], bodies[2]}, 2
			}
			if got := failedIDs(resp); fmt.Sprint(got) != fmt.Sprint(wantRetried) {
				t.Errorf("retried %v, want %v", got, wantRetried)
			}
			if got := h.dropLogs(t); fmt.Sprint(got) != fmt.Sprint(wantDrops) {
				t.Errorf("drops %v, want %v", got, wantDrops)
			}
			if got := h.sqs.byURL["https://sqs/"+memberB+"/"+queuename.For(qprefix, "gamma")]; fmt.Sprint(got) != fmt.Sprint(wantGamma) {
				t.Errorf("gamma (member B) received %q, want %q", got, wantGamma)
			}
			if got := h.sqs.byURL["https://sqs/"+memberA+"/"+queuename.For(qprefix, "beta")]; len(got) != 1 || got[0] != bodies[0] {
				t.Errorf("beta (member A) received %q, want its genuine event only", got)
			}
			if got := h.sqs.byURL["https://sqs/"+account+"/"+queuename.For(qprefix, "alpha")]; len(got) != wantAlpha {
				t.Errorf("alpha (the hub) received %d messages sent by no role, want %d", len(got), wantAlpha)
			}
			if !observe && b.calls != 0 {
				t.Errorf("member B's EC2 answered %d calls: a forged or undecided message was looked up", b.calls)
			}
			if got := h.metric(t, "", "", contract.MetricForgedSender); got != 3 {
				t.Errorf("ForgedSender = %v, want 3", got)
			}
			if got := h.metric(t, "", "", contract.MetricServiceSender); got != 2 {
				t.Errorf("ServiceSender = %v, want 2", got)
			}
			if !observe {
				if got := h.metric(t, contract.DimReason, string(contract.ReasonForgedSender), contract.MetricDropped); got != 3 {
					t.Errorf("Dropped{Reason=forged_sender} = %v, want 3", got)
				}
				named := h.logsOf(t, contract.LogMessageDropped, "messageId", contract.LogSender)["m1"]
				if fmt.Sprint(named) != "[AROAX:s]" {
					t.Errorf("the forged_sender drop names sender %v, want AROAX:s", named)
				}
				if acct := h.logsOf(t, contract.LogMessageDropped, "messageId", "account")["m1"]; fmt.Sprint(acct) != "["+memberB+"]" {
					t.Errorf("the forged_sender drop names account %v, want %s", acct, memberB)
				}
			} else {
				observed := h.logsOf(t, contract.LogSenderObserved, "eventId", contract.LogSender)
				if fmt.Sprint(observed) != fmt.Sprint(map[string][]string{"ev-" + instance(1): {"AIDASVC1", "AIDASVC1"}, "ev-" + instance(3): {"AROAX:s"}, "ev-" + instance(4): {"AROAU:s"}}) {
					t.Errorf("observed lines %v, want the forged, the no-role and the undecided messages", observed)
				}
			}
			if got := h.logsOf(t, contract.LogServiceSender, contract.LogSender, "account"); len(got["AIDASVC1"]) != 1 {
				t.Errorf("a sender that is no role logged %d times, want once", len(got["AIDASVC1"]))
			}
		})
	}
}

// TestLookupsInFlightAreBounded: the accounts' DescribeInstances calls run at once, but never more than
// SEND_CONCURRENCY of them: the figure EC2's quota and the sizing model count on (docs/performance.md).
func TestLookupsInFlightAreBounded(t *testing.T) {
	const accountsN, limit = 12, 3
	var mu sync.Mutex
	inFlight, most := 0, 0
	track := func() {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // holds the call open, so the others would pile up if unbounded
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	ec2s := map[string]*fakeEC2{}
	var bodies []string
	for i := range accountsN {
		acct := fmt.Sprintf("%012d", 500000000000+i)
		ec2s["reader-"+acct] = &fakeEC2{owners: map[string]string{instance(100 + i): "alpha"}, before: track}
		bodies = append(bodies, spotIn(acct, instance(100+i)))
	}
	opts := owner.Options{CacheSize: 1000, OwnerTTL: time.Hour, NoOwnerTTL: time.Hour}
	h := &harness{ec2: &fakeEC2{}, sqs: newSQS("alpha"), logs: &bytes.Buffer{}, emf: &bytes.Buffer{}, redeliver: &fakeRedeliverer{later: map[string]int{}}}
	h.r = New(
		accounts.New(owner.New(h.ec2, opts), accounts.Options{
			ReaderRole:  func(a string) string { return "reader-" + a },
			NewResolver: func(role string) (accounts.Resolver, error) { return owner.New(ec2s[role], opts), nil },
		}),
		forward.New(h.sqs, forward.Options{CacheSize: 100, URLTTL: time.Hour, MissingTTL: time.Hour}),
		Options{QueuePrefix: qprefix, Bus: "kib-test", Hub: account, SendConcurrency: limit, Metrics: metrics.NewWriter(h.emf, "NS", "test"),
			Log: slog.New(slog.NewJSONHandler(h.logs, nil))})
	if resp := h.handle(t, bodies...); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failedIDs(resp))
	}
	for role, f := range ec2s {
		if f.calls != 1 {
			t.Errorf("%s: %d DescribeInstances, want 1", role, f.calls)
		}
	}
	if most > limit || most < 2 {
		t.Errorf("%d lookups in flight at most, want 2 to SEND_CONCURRENCY (%d): bounded, and in parallel", most, limit)
	}
}

// fakeQuarantine keeps what it is given, or fails; started, when set, is closed when Keep is entered, and Keep waits
// for release first.
type fakeQuarantine struct {
	mu       sync.Mutex
	kept     []quarantine.Message
	err      error
	started  chan struct{}
	release  chan struct{}
	startOne sync.Once
}

func (f *fakeQuarantine) Keep(_ context.Context, msgs []quarantine.Message) []error {
	if f.started != nil {
		f.startOne.Do(func() { close(f.started) })
		<-f.release
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		if f.err != nil {
			errs[i] = f.err
			continue
		}
		f.kept = append(f.kept, m)
	}
	return errs
}

// TestRefusedMessagesAreQuarantined: every refusal of contract.QuarantineReasons is kept with its reason, error,
// claimed account, sender, sent time and ids, and acknowledged; the routine drops (no_owner, not_interruption) are
// not; a refusal the quarantine cannot take is retried, never deleted.
func TestRefusedMessagesAreQuarantined(t *testing.T) {
	hub := &fakeEC2{owners: map[string]string{instance(1): "alpha"}}
	a := &fakeEC2{owners: map[string]string{instance(2): "beta"}}
	h := accountsHarness(t, hub, a, &fakeEC2{}, "alpha", "beta")
	q := &fakeQuarantine{}
	h.r.quarantine = q
	h.r.senders = &fakeSenders{results: map[string]sender.Result{
		"AROAA:s": {Verdict: sender.Genuine},
		"AROAX:s": {Verdict: sender.Forged, Err: errors.New("sender AROAX:s may not speak for account " + memberA)},
	}}
	bodies := []string{
		spotIn(memberA, instance(2)),        // m0 genuine
		spotIn(memberA, instance(2)),        // m1 forged
		spotIn("210987654321", instance(7)), // m2 unknown account
		"not json",                          // m3 unparseable
		spotIn(account, instance(9)),        // m4 no owner: routine, not kept
	}
	in := batch(bodies...)
	for i, s := range []string{"AROAA:s", "AROAX:s", "AROAA:s", "AROAA:s", "AROAA:s"} {
		in.Records[i].Attributes[sender.Attribute] = s
		in.Records[i].Attributes[sender.SentAttribute] = "1763726400000"
	}
	resp, err := h.r.Handle(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("retried %v, want none", failedIDs(resp))
	}
	got := map[string]quarantine.Message{}
	for _, m := range q.kept {
		got[m.MessageID] = m
	}
	want := map[string]contract.Reason{"m1": contract.ReasonForgedSender, "m2": contract.ReasonUnknownAccount, "m3": contract.ReasonUnparseable}
	if len(got) != len(want) {
		t.Fatalf("kept %d messages (%v), want %v", len(got), slices.Collect(maps.Keys(got)), want)
	}
	for id, reason := range want {
		m := got[id]
		if m.Reason != reason || m.Err == nil || m.Sent != "1763726400000" || *m.Body != in.Records[id[1]-'0'].Body {
			t.Errorf("%s kept as %+v, want reason %s with its error, sent time and body unchanged", id, m, reason)
		}
	}
	if m := got["m1"]; m.Account != memberA || m.Sender != "AROAX:s" || m.EventID != "ev-"+instance(2) {
		t.Errorf("the forgery kept as %+v, want account %s, sender AROAX:s and its event id", m, memberA)
	}
	if got := h.metric(t, "", "", contract.MetricQuarantined); got != 3 {
		t.Errorf("Quarantined = %v, want 3", got)
	}
	if got := h.logsOf(t, contract.LogMessageDropped, "messageId", contract.LogQuarantined); fmt.Sprint(got) != "map[m1:[true] m2:[true] m3:[true] m4:[]]" {
		t.Errorf("drop lines marked quarantined: %v", got)
	}
	if got := h.sqs.byURL["https://sqs/"+memberA+"/"+queuename.For(qprefix, "beta")]; len(got) != 1 {
		t.Errorf("beta received %d, want the genuine event only", len(got))
	}

	// The quarantine fails: the refused messages are retried, the genuine one still forwarded.
	q.err = errors.New("SQS unavailable")
	resp, err = h.r.Handle(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := failedIDs(resp); fmt.Sprint(got) != "[m1 m2 m3]" {
		t.Errorf("with the quarantine failing, retried %v, want the three refused messages", got)
	}
}

// TestQuarantineDoesNotHoldTheBatch: the refused messages are kept while the batch's deliveries are sent, not after
// them: a quarantine that waits for a delivery to have been sent still lets the batch end.
func TestQuarantineDoesNotHoldTheBatch(t *testing.T) {
	h := newHarness(map[string]string{instance(1): "alpha"}, "alpha")
	q := &fakeQuarantine{started: make(chan struct{}), release: make(chan struct{})}
	h.r.quarantine = q
	h.r.sender = senderFunc(func(ctx context.Context, fq forward.Queue, bodies []*string) []error {
		<-q.started // the quarantine is entered before any delivery ends
		close(q.release)
		return make([]error, len(bodies))
	})
	done := make(chan events.SQSEventResponse)
	go func() { done <- h.handle(t, spot(instance(1)), "not json") }()
	select {
	case resp := <-done:
		if len(resp.BatchItemFailures) != 0 || len(q.kept) != 1 {
			t.Errorf("retried %v, kept %d; want none retried, the unparseable one kept", failedIDs(resp), len(q.kept))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the batch waits for the quarantine before delivering (or the other way round): deadlock")
	}
}

type senderFunc func(ctx context.Context, q forward.Queue, bodies []*string) []error

func (f senderFunc) Send(ctx context.Context, q forward.Queue, bodies []*string) []error {
	return f(ctx, q, bodies)
}
