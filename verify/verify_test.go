package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// fakeAWS plays EventBridge, the router's log group and the cluster queues: a canary put for a cluster in
// forwards is logged as forwarded; queues in full keep a message.
type fakeAWS struct {
	mu       sync.Mutex
	forwards map[string]bool
	full     map[string]bool
	refuse   string          // a cluster whose canary PutEvents refuses
	held     map[string]bool // clusters whose first canary the router holds back (the canary interval)
	puts     int
	put      map[string]string // event id -> cluster
	order    []string          // event ids in the order put
	patterns []string          // filter patterns asked, once each
	// refused are clusters whose canaries the router refuses for their sender; deadLettered, clusters whose canaries
	// EventBridge could not deliver, in the dead-letter queue.
	refused, deadLettered map[string]bool
	// forwardAfter delays a cluster's forwarded line until that many reads of it; fullReads keeps its queue holding
	// a message for that many reads.
	forwardAfter, fullReads map[string]int
	reads                   map[string]int
	startTimes              []int64 // each FilterLogEvents call's StartTime
}

func (f *fakeAWS) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.puts++
	out := &eventbridge.PutEventsOutput{}
	for _, e := range in.Entries {
		detail := aws.ToString(e.Detail)
		cluster := detail[strings.Index(detail, `"clusters":["`)+13 : strings.LastIndex(detail, `"]`)]
		if aws.ToString(e.Source) != contract.SourceCanary || aws.ToString(e.DetailType) != contract.DetailTypeCanary ||
			aws.ToString(e.EventBusName) != "default" || !strings.Contains(detail, `"bus":"kib-test"`) || cluster == f.refuse {
			out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{ErrorCode: aws.String("AccessDeniedException"), ErrorMessage: aws.String("no")})
			continue
		}
		id := fmt.Sprintf("ev-%d-%s", f.puts, cluster)
		f.put[id] = cluster
		f.order = append(f.order, id)
		out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String(id)})
	}
	return out, nil
}

func (f *fakeAWS) FilterLogEvents(_ context.Context, in *cloudwatchlogs.FilterLogEventsInput, _ ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.FilterLogEventsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pattern := aws.ToString(in.FilterPattern)
	if !slices.Contains(f.patterns, pattern) {
		f.patterns = append(f.patterns, pattern)
	}
	f.startTimes = append(f.startTimes, aws.ToInt64(in.StartTime))
	out := &cloudwatchlogs.FilterLogEventsOutput{}
	ts := aws.Int64(time.Unix(1000, 0).Add(1500 * time.Millisecond).UnixMilli())
	first := map[string]bool{}
	for _, id := range f.order {
		cluster := f.put[id]
		heldBack := f.held[cluster] && !first[cluster]
		first[cluster] = true
		switch {
		case heldBack && pattern == `{ $.reason = "canary_rate_limited" }`:
			msg := fmt.Sprintf(`{"msg":"message dropped","reason":"canary_rate_limited","eventId":%q}`, id)
			out.Events = append(out.Events, logtypes.FilteredLogEvent{Message: aws.String(msg), Timestamp: ts})
		case f.refused[cluster] && pattern == `{ $.reason = "forged_sender" || $.reason = "unattributable_sender" }`:
			msg := fmt.Sprintf(`{"msg":"message dropped","reason":"forged_sender","senderId":"AROAEVENTBRIDGE:s","eventId":%q,"error":"not the forwarder"}`, id)
			out.Events = append(out.Events, logtypes.FilteredLogEvent{Message: aws.String(msg), Timestamp: ts})
		case !heldBack && f.forwards[cluster] && pattern == `{ $.msg = "canary forwarded" }` && f.read("fwd/"+cluster) > f.forwardAfter[cluster]:
			msg := fmt.Sprintf(`{"msg":%q,"eventId":%q,"cluster":%q}`, contract.LogCanaryForwarded, id, cluster)
			out.Events = append(out.Events, logtypes.FilteredLogEvent{Message: aws.String(msg), Timestamp: ts})
		}
	}
	return out, nil
}

// read counts a read of key, and returns how many there were (the fake's lock held).
func (f *fakeAWS) read(key string) int {
	if f.reads == nil {
		f.reads = map[string]int{}
	}
	f.reads[key]++
	return f.reads[key]
}

func (f *fakeAWS) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := "0"
	cluster := strings.TrimPrefix(aws.ToString(in.QueueUrl), "https://sqs/")
	if f.full[cluster] || f.read("queue/"+cluster) <= f.fullReads[cluster] {
		n = "1"
	}
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": n}}, nil
}

// ReceiveMessage answers the dead-letter queue: the canaries of the clusters in deadLettered, with the attributes
// EventBridge gives an event it could not deliver.
func (f *fakeAWS) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if aws.ToString(in.QueueUrl) != "https://sqs/dlq" || in.VisibilityTimeout != 0 {
		return nil, fmt.Errorf("received from %s with visibility %d", aws.ToString(in.QueueUrl), in.VisibilityTimeout)
	}
	out := &sqs.ReceiveMessageOutput{}
	for _, id := range f.order {
		if f.deadLettered[f.put[id]] {
			out.Messages = append(out.Messages, sqstypes.Message{Body: aws.String(fmt.Sprintf(`{"id":%q}`, id)), MessageAttributes: map[string]sqstypes.MessageAttributeValue{
				"ERROR_CODE":    {DataType: aws.String("String"), StringValue: aws.String("NO_PERMISSIONS")},
				"ERROR_MESSAGE": {DataType: aws.String("String"), StringValue: aws.String("role arn:aws:iam::111111111111:role/kib-test-forward is not authorized")},
			}})
		}
	}
	return out, nil
}

func stackOutputs(clusters ...string) Outputs {
	var o Outputs
	o.BusName, o.Region, o.RouterLogGroupName = "kib-test", "us-east-1", "/aws/lambda/kib-test-router"
	o.Clusters, o.DeadLetterQueueURL = map[string]Cluster{}, "https://sqs/dlq"
	for _, c := range clusters {
		o.Clusters[c] = Cluster{QueueURL: "https://sqs/" + c}
	}
	return o
}

// clock starts at 1000 s and moves a second each time it is read.
func clock() func() time.Time {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name             string
		forwards, full   []string
		wantErr          map[string]error
		wantReportFailed []string
	}{
		{"all consumed", []string{"a", "b"}, nil, map[string]error{"a": nil, "b": nil}, nil},
		{"b not consumed", []string{"a", "b"}, []string{"b"}, map[string]error{"a": nil, "b": ErrNotConsumed}, []string{"b"}},
		{"b not forwarded", []string{"a"}, nil, map[string]error{"a": nil, "b": ErrNotForwarded}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAWS{forwards: map[string]bool{}, full: map[string]bool{}, put: map[string]string{}}
			for _, c := range tt.forwards {
				f.forwards[c] = true
			}
			for _, c := range tt.full {
				f.full[c] = true
			}
			results, err := Run(context.Background(), Clients{f, f, f}, stackOutputs("a", "b"), Options{Timeout: 10 * time.Second, Poll: time.Millisecond, Now: clock()})
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != 2 {
				t.Fatalf("%d results for 2 clusters", len(results))
			}
			for _, r := range results {
				want := tt.wantErr[r.Cluster]
				if !errors.Is(r.Err, want) || (want == nil) != (r.Err == nil) {
					t.Errorf("%s: error %v, want %v", r.Cluster, r.Err, want)
				}
				if want == nil && (r.Forwarded <= 0 || r.Consumed <= 0) {
					t.Errorf("%s consumed without times: %+v", r.Cluster, r)
				}
			}
			var out bytes.Buffer
			if failed := Report(&out, results); fmt.Sprint(failed) != fmt.Sprint(tt.wantReportFailed) {
				t.Errorf("failed = %v, want %v\n%s", failed, tt.wantReportFailed, out.String())
			}
			if !strings.Contains(out.String(), "a  forwarded in 0.50 s, consumed by Karpenter in ") {
				t.Errorf("report:\n%s", out.String())
			}
			if want := []string{`{ $.msg = "canary forwarded" }`, `{ $.reason = "canary_rate_limited" }`,
				`{ $.reason = "forged_sender" || $.reason = "unattributable_sender" }`}; !slices.Equal(f.patterns, want) {
				t.Errorf("filter patterns = %q, want %q", f.patterns, want)
			}
		})
	}
}

func TestRunPutsTenPerCall(t *testing.T) {
	var names []string
	for i := range 25 {
		names = append(names, fmt.Sprintf("c%02d", i))
	}
	f := &fakeAWS{forwards: map[string]bool{}, full: map[string]bool{}, put: map[string]string{}}
	for _, c := range names {
		f.forwards[c] = true
	}
	results, err := Run(context.Background(), Clients{f, f, f}, stackOutputs(names...), Options{Timeout: 10 * time.Second, Poll: time.Millisecond, Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	if f.puts != 3 || len(results) != 25 {
		t.Errorf("%d PutEvents calls, %d results for 25 clusters; want 3 and 25", f.puts, len(results))
	}
}

func TestRunRefusals(t *testing.T) {
	f := &fakeAWS{forwards: map[string]bool{}, full: map[string]bool{}, put: map[string]string{}, refuse: "b"}
	if _, err := Run(context.Background(), Clients{f, f, f}, stackOutputs("a", "b"), Options{Now: clock()}); err == nil ||
		!strings.Contains(err.Error(), "putting the canary of b: AccessDeniedException") {
		t.Errorf("error = %v, want the refused canary named", err)
	}
	if _, err := Run(context.Background(), Clients{f, f, f}, stackOutputs("a"), Options{Clusters: []string{"zz"}}); err == nil ||
		!strings.Contains(err.Error(), `cluster "zz" is not on the bus kib-test (its outputs' clusters: a)`) {
		t.Errorf("error = %v, want the unknown cluster named", err)
	}
}

func TestReadOutputs(t *testing.T) {
	if _, err := ReadOutputs(strings.NewReader(`{"busName":"b","clusters":{"a":{}}}`)); err == nil ||
		!strings.Contains(err.Error(), "lack clusters.a.queueUrl, region, routerLogGroupName") {
		t.Errorf("error = %v, want every missing output named", err)
	}
	o, err := ReadOutputs(strings.NewReader(`{"busName":"b","region":"r","routerLogGroupName":"g","clusters":{"a":{"queueUrl":"u","mode":"install"}},"other":1}`))
	if err != nil || o.Clusters["a"].QueueURL != "u" {
		t.Errorf("outputs = %+v, %v", o, err)
	}
	if _, err := ReadOutputs(strings.NewReader(``)); err == nil {
		t.Error("empty outputs accepted")
	}
	// pulumi stack output --json masks a secret: one verify does not need is left out, clusters it needs are named.
	if o, err := ReadOutputs(strings.NewReader(`{"busName":"b","region":"r","routerLogGroupName":"g","clusters":{},` +
		`"ruleArns":"[secret]","canaryIntervalSeconds":"[secret]"}`)); err != nil || o.CanaryIntervalSeconds != 0 {
		t.Errorf("secrets verify does not need: %+v, %v", o, err)
	}
	if _, err := ReadOutputs(strings.NewReader(`{"busName":"b","region":"r","routerLogGroupName":"g","clusters":"[secret]"}`)); err == nil ||
		!strings.Contains(err.Error(), "lack clusters: ") || !strings.Contains(err.Error(), "--show-secrets") {
		t.Errorf("error = %v, want the secret clusters named", err)
	}
	if _, err := ReadOutputs(strings.NewReader(`{"busName":"b","region":"r","routerLogGroupName":"g"}`)); err == nil ||
		!strings.Contains(err.Error(), "lack clusters: ") {
		t.Errorf("error = %v, want no clusters output named", err)
	}
}

// TestRunNamesTheClustersAccount: a member's cluster's canary names the member's account, so the router
// forwards it there though verify puts it in the hub.
type recordingEvents struct{ details []string }

func (r *recordingEvents) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	out := &eventbridge.PutEventsOutput{}
	for _, e := range in.Entries {
		r.details = append(r.details, aws.ToString(e.Detail))
		out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String("e")})
	}
	return out, nil
}

func TestRunNamesTheClustersAccount(t *testing.T) {
	o := stackOutputs("a")
	o.Clusters["a"] = Cluster{QueueURL: "https://sqs/a", Account: "222222222222"}
	rec := &recordingEvents{}
	f := &fakeAWS{forwards: map[string]bool{}, full: map[string]bool{}, put: map[string]string{}}
	if _, err := Run(context.Background(), Clients{rec, f, f}, o, Options{Timeout: time.Second, Poll: time.Millisecond, Now: clock()}); err != nil {
		t.Fatal(err)
	}
	if len(rec.details) != 1 || rec.details[0] != `{"bus":"kib-test","account":"222222222222","clusters":["a"]}` {
		t.Errorf("canary details %v, want a's account named", rec.details)
	}
}

// TestRunPutsAHeldBackCanaryAgain: the router held b's canary back (another had just reached b, such as its
// heartbeat's): verify puts another once the canary interval has passed, and b passes; when the interval would
// end after the timeout, b fails, saying why.
func TestRunPutsAHeldBackCanaryAgain(t *testing.T) {
	for _, tt := range []struct {
		name     string
		interval int
		timeout  time.Duration
		wantErr  bool
	}{
		{"within the timeout", 5, time.Minute, false},
		{"after the timeout", 120, time.Minute, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAWS{forwards: map[string]bool{"a": true, "b": true}, full: map[string]bool{}, put: map[string]string{}, held: map[string]bool{"b": true}}
			o := stackOutputs("a", "b")
			o.CanaryIntervalSeconds = tt.interval
			results, err := Run(context.Background(), Clients{f, f, f}, o, Options{Timeout: tt.timeout, Poll: time.Millisecond, Now: clock()})
			if err != nil {
				t.Fatal(err)
			}
			b := results[1]
			if b.Cluster != "b" || b.HeldBack != 1 || (b.Err != nil) != tt.wantErr {
				t.Fatalf("b = %+v, want held back once, failed %t", b, tt.wantErr)
			}
			if tt.wantErr {
				if !errors.Is(b.Err, ErrNotForwarded) || !strings.Contains(b.Err.Error(), "held its canary back") || f.puts != 1 {
					t.Errorf("b: %v after %d puts, want the held-back canary named and no second put", b.Err, f.puts)
				}
				return
			}
			if f.puts != 2 || results[0].Err != nil {
				t.Errorf("%d PutEvents calls (want 2: the first, and b's again); a: %v", f.puts, results[0].Err)
			}
			var out bytes.Buffer
			Report(&out, results)
			if !strings.Contains(out.String(), "put again: the router held back 1") {
				t.Errorf("report:\n%s", out.String())
			}
		})
	}
}

// TestTheHubsOwnDelivery: verify says whether the hub's own rules deliver as the router takes them, and if not, the
// one setting to switch: a canary forwarded proves they do; canaries the router refused for their sender (EventBridge
// stamping another ID than the forwarder's), or that EventBridge dead-lettered (it refused the execution role), prove
// they do not, and the report names centralQueue.hubDelivery and the mode to switch to.
func TestTheHubsOwnDelivery(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		forwards, refused, dlq []string
		mode                   string
		want                   []string // in the hub's line; none: no line
		delivers               bool
	}{
		{"delivers", []string{"a", "b"}, nil, nil, "", []string{"the hub's own rules deliver to the central queue (executionRole)"}, true},
		{"refused for their sender", nil, []string{"a", "b"}, nil, "", []string{"do NOT deliver as the router takes them", "forged_sender, sender AROAEVENTBRIDGE:s",
			"pulumi config set --path centralQueue.hubDelivery queuePolicy"}, false},
		{"dead-lettered", nil, nil, []string{"a", "b"}, "", []string{"EventBridge dead-lettered its canaries (NO_PERMISSIONS: role", "centralQueue.hubDelivery queuePolicy"}, false},
		{"dead-lettered by policy", nil, nil, []string{"a", "b"}, contract.HubDeliveryQueuePolicy, []string{"(queuePolicy)", "centralQueue.hubDelivery executionRole"}, false},
		{"nothing known", nil, nil, nil, "", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAWS{forwards: map[string]bool{}, full: map[string]bool{}, put: map[string]string{}, refused: map[string]bool{}, deadLettered: map[string]bool{}}
			for _, c := range tt.forwards {
				f.forwards[c] = true
			}
			for _, c := range tt.refused {
				f.refused[c] = true
			}
			for _, c := range tt.dlq {
				f.deadLettered[c] = true
			}
			results, err := Run(context.Background(), Clients{f, f, f}, stackOutputs("a", "b"), Options{Timeout: 3 * time.Second, Poll: time.Millisecond, Now: clock()})
			if err != nil {
				t.Fatal(err)
			}
			line, delivers, ok := Hub(results, tt.mode)
			if ok != (len(tt.want) > 0) || delivers != tt.delivers {
				t.Fatalf("hub: %q, delivers %t, known %t", line, delivers, ok)
			}
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("hub line %q does not say %q", line, w)
				}
			}
			if len(tt.refused)+len(tt.dlq) > 0 {
				for _, r := range results {
					if !errors.Is(r.Err, ErrNotForwarded) || !strings.Contains(r.Err.Error(), map[bool]string{true: "refused it for its sender", false: "could not deliver it"}[len(tt.refused) > 0]) {
						t.Errorf("%s: %v", r.Cluster, r.Err)
					}
				}
			}
		})
	}
}

// TestEveryPendingCanaryIsAwaited: verify keeps polling while any canary is pending, whatever keeps it so (not yet
// forwarded, its queue still full, held back, put again): two clusters pending for different reasons in the same
// round both end consumed.
func TestEveryPendingCanaryIsAwaited(t *testing.T) {
	for _, tt := range []struct {
		name     string
		f        *fakeAWS
		clusters []string
	}{
		{"not yet forwarded, and a queue still full", &fakeAWS{forwards: map[string]bool{"slow": true, "full": true}, forwardAfter: map[string]int{"slow": 2},
			fullReads: map[string]int{"full": 2}}, []string{"full", "slow"}},
		{"held back, and not yet forwarded", &fakeAWS{forwards: map[string]bool{"held": true, "slow": true}, held: map[string]bool{"held": true},
			forwardAfter: map[string]int{"slow": 12}}, []string{"held", "slow"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.full, f.put = map[string]bool{}, map[string]string{}
			o := stackOutputs(tt.clusters...)
			o.CanaryIntervalSeconds = 2
			results, err := Run(context.Background(), Clients{f, f, f}, o, Options{Timeout: time.Minute, Poll: time.Millisecond, Now: clock()})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				if r.Err != nil {
					t.Errorf("%s: %v", r.Cluster, r.Err)
				}
			}
		})
	}
}

// TestDefaults: the run waits two minutes unless told (the message says so), reads the log group from a minute
// before it began (the router's clock may lag), holds a canary back by the router's default interval when the
// outputs give none, and writes times under a second to the hundredth.
func TestDefaults(t *testing.T) {
	f := &fakeAWS{forwards: map[string]bool{}, full: map[string]bool{}, put: map[string]string{}}
	results, err := Run(context.Background(), Clients{f, f, f}, stackOutputs("a"), Options{Poll: time.Millisecond, Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Err == nil || !strings.Contains(results[0].Err.Error(), "not forwarded within 120.0 s") {
		t.Errorf("a canary never forwarded: %v, want the two minutes named", results[0].Err)
	}
	if want := time.Unix(1001, 0).Add(-time.Minute).UnixMilli(); len(f.startTimes) == 0 || f.startTimes[0] != want {
		t.Errorf("log reads from %v, want %d: a minute before the run's start", f.startTimes[:1], want)
	}
	held := &fakeAWS{forwards: map[string]bool{"b": true}, full: map[string]bool{}, put: map[string]string{}, held: map[string]bool{"b": true}}
	results, err = Run(context.Background(), Clients{held, held, held}, stackOutputs("b"), Options{Timeout: 20 * time.Second, Poll: time.Millisecond, Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Err == nil || !strings.Contains(results[0].Err.Error(), "canary interval, 30.0 s") {
		t.Errorf("held back with no interval in the outputs: %v, want the router's default, 30 s, named", results[0].Err)
	}
	for d, want := range map[time.Duration]string{999 * time.Millisecond: "1.00 s", time.Second: "1.0 s", 1500 * time.Millisecond: "1.5 s"} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%s) = %q, want %q", d, got, want)
		}
	}
}
