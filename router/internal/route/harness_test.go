package route

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
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
	hang      map[string]bool     // queue name -> its sends answer nothing until their context ends, as a hung call
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

func (f *fakeSQS) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	name := (*in.QueueUrl)[strings.LastIndex(*in.QueueUrl, "/")+1:]
	f.mu.Lock()
	hang := f.hang[name]
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends++
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
	ledger    *fakeLedger
}

// fakeRedeliverer records the messages it is asked to bring back, and their receive counts.
type fakeRedeliverer struct {
	mu    sync.Mutex
	later map[string]int // receipt handle -> receive count
	err   error
	hang  bool // its calls answer nothing until their context ends, as a hung call
}

func (f *fakeRedeliverer) Later(ctx context.Context, receiptHandle string, receiveCount int) (time.Duration, error) {
	if f.hang {
		<-ctx.Done()
	}
	if err := ctx.Err(); err != nil {
		return 0, err // as an SDK call made past its context's end
	}
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
			Log:         testLogger(h.logs),
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

// noRefusal fails the test that logs a refused change of outcome (Router.decide): no rule may make one.
type noRefusal struct{ w io.Writer }

func (n noRefusal) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"msg":"`+logRefusedTransition+`"`)) {
		panic("a stage made a change of outcome no rule allows: " + string(p))
	}
	return n.w.Write(p)
}

// testLogger writes JSON lines to w, and fails the test on a refused change of outcome.
func testLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(noRefusal{w}, nil)) }
