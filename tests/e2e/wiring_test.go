package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/ec2stub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// The router's wiring, from its environment to what it does: each setting is given two values, and the bus
// must behave differently, as that setting says, under each. A setting that does not reach the component using
// it, or reaches another (two lifetimes swapped, say), fails here. The router is built by handler.FromEnv, as in
// Lambda, on goaws and the EC2 and STS stubs. Lifetimes are made short where the behaviour is after expiry: the
// test waits for them to pass, it does not time anything.

const (
	wired1 = "i-0a1b2c3d4e5f60011"
	wired2 = "i-0a1b2c3d4e5f60012"
	wired3 = "i-0a1b2c3d4e5f60013"
	wired4 = "i-0a1b2c3d4e5f60014"
)

type wiringCase struct {
	name string
	// set and control are two values of the settings under test.
	set, control map[string]string
	opts         harness.Options
	// run drives the bus and says what it did.
	run func(t *testing.T, b *bus) string
	// want is what run says under set, and under control.
	want, wantControl string
}

func TestWiring(t *testing.T) {
	owned := func(c string) map[string]string { return map[string]string{"eks:eks-cluster-name": c} }
	var live []string // the clusters of the bus under test
	// route publishes bodies, drains the bus, and says what each cluster received and what was dropped why.
	route := func(b *bus, bodies ...string) string {
		before := b.dropReasons()
		b.publish(bodies...)
		b.drain()
		var out []string
		for _, c := range live {
			if n := len(b.received(c)); n > 0 {
				out = append(out, fmt.Sprintf("%s:%d", c, n))
			}
		}
		for id, reasons := range b.dropReasons() {
			if n := len(before[id]); len(reasons) > n {
				out = append(out, id+"="+strings.Join(reasons[n:], ","))
			}
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	clusters := []string{"alpha", "beta", "gamma", "delta"}
	tests := []wiringCase{
		{
			name: "NO_OWNER_CACHE_TTL: an instance tagged late is found once its no-owner entry expires",
			set:  map[string]string{contract.EnvNoOwnerTTL: "200ms", contract.EnvOwnerTTL: "6h"},
			// Swapped lifetimes: "no owner" kept six hours, the tagged instance's interruptions dropped.
			control: map[string]string{contract.EnvNoOwnerTTL: "6h", contract.EnvOwnerTTL: "200ms"},
			run: func(t *testing.T, b *bus) string {
				b.EC2.Put(wired1, map[string]string{"Name": "not yet tagged"})
				first := route(b, spotEvent(wired1))
				b.EC2.Put(wired1, owned("alpha"))
				time.Sleep(300 * time.Millisecond)
				return first + " | " + route(b, spotEvent(wired1))
			},
			want:        "ev-" + wired1 + "=no_owner | alpha:1",
			wantControl: "ev-" + wired1 + "=no_owner | ev-" + wired1 + "=no_owner",
		},
		{
			name:    "OWNER_CACHE_TTL: a found owner is asked again only once it expires",
			set:     map[string]string{contract.EnvOwnerTTL: "200ms"},
			control: map[string]string{contract.EnvOwnerTTL: "6h"},
			run: func(t *testing.T, b *bus) string {
				b.EC2.Put(wired1, owned("alpha"))
				route(b, spotEvent(wired1))
				time.Sleep(300 * time.Millisecond)
				route(b, spotEvent(wired1))
				return fmt.Sprintf("%d DescribeInstances", b.EC2.Calls())
			},
			want: "2 DescribeInstances", wantControl: "1 DescribeInstances",
		},
		{
			name:    "CACHE_SIZE: a cache of one instance forgets the first when it learns the second",
			set:     map[string]string{contract.EnvCacheSize: "1"},
			control: map[string]string{contract.EnvCacheSize: "100"},
			run: func(t *testing.T, b *bus) string {
				b.EC2.Put(wired1, owned("alpha"))
				b.EC2.Put(wired2, owned("beta"))
				route(b, spotEvent(wired1))
				route(b, spotEvent(wired2))
				route(b, spotEvent(wired1))
				return fmt.Sprintf("%d DescribeInstances", b.EC2.Calls())
			},
			want: "3 DescribeInstances", wantControl: "2 DescribeInstances",
		},
		{
			name:    "OWNER_TAG_KEYS: an extra key names the owner",
			set:     map[string]string{contract.EnvOwnerTagKeys: "team.example.com/cluster"},
			control: map[string]string{},
			run: func(t *testing.T, b *bus) string {
				b.EC2.Put(wired1, map[string]string{"team.example.com/cluster": "gamma"})
				return route(b, spotEvent(wired1))
			},
			want: "gamma:1", wantControl: "ev-" + wired1 + "=no_owner",
		},
		{
			name:    "BUS_QUEUES: a queue of the bus is never a destination",
			set:     map[string]string{contract.EnvBusQueues: harness.CentralQueue + "," + harness.QueueOf("delta")},
			control: map[string]string{contract.EnvBusQueues: harness.CentralQueue},
			run: func(t *testing.T, b *bus) string {
				b.EC2.Put(wired1, owned("delta"))
				return route(b, spotEvent(wired1))
			},
			want: "ev-" + wired1 + "=no_queue", wantControl: "delta:1",
		},
		{
			name:    "SEND_CONCURRENCY: cluster queues sent to at once",
			set:     map[string]string{contract.EnvSendConcurrency: "1"},
			control: map[string]string{contract.EnvSendConcurrency: "4"},
			run: func(t *testing.T, b *bus) string {
				b.SQS.SetLatency("SendMessageBatch", 100*time.Millisecond)
				for i, c := range clusters {
					b.EC2.Put(fmt.Sprintf("i-0a1b2c3d4e5f6002%d", i), owned(c))
				}
				var bodies []string
				for i := range clusters {
					bodies = append(bodies, spotEvent(fmt.Sprintf("i-0a1b2c3d4e5f6002%d", i)))
				}
				route(b, bodies...)
				if b.SQS.MaxInFlight("SendMessageBatch") > 1 {
					return "concurrent"
				}
				return "one at a time"
			},
			want: "one at a time", wantControl: "concurrent",
		},
		{
			name:    "RETRY_DELAY and RETRY_MAX_DELAY: a retried message comes back after the backoff, at most the maximum",
			set:     map[string]string{contract.EnvRetryDelay: "1s", contract.EnvRetryMaxDelay: "1s"},
			control: map[string]string{contract.EnvRetryDelay: "1s", contract.EnvRetryMaxDelay: "1m"},
			run: func(t *testing.T, b *bus) string {
				b.EC2.Put(wired1, owned("alpha"))
				b.SQS.SetFault(harness.QueueOf("alpha"), &sqsemu.Fault{Status: 500, Code: "InternalError", Times: 2})
				route(b, spotEvent(wired1))
				return fmt.Sprint(b.SQS.Visibilities())
			},
			want: "[1 1]", wantControl: "[1 2]",
		},
		{
			name:    "QUEUE_URL_CACHE_TTL: a cluster queue's URL is looked up again once it expires",
			set:     map[string]string{contract.EnvQueueURLTTL: "200ms"},
			control: map[string]string{contract.EnvQueueURLTTL: "1h"},
			run: func(t *testing.T, b *bus) string {
				b.EC2.Put(wired1, owned("alpha"))
				before := b.SQS.Snapshot()["GetQueueUrl"]
				route(b, spotEvent(wired1))
				time.Sleep(300 * time.Millisecond)
				route(b, spotEvent(wired1))
				// Karpenter's reads (the harness) resolved their URLs before the first route, once.
				return fmt.Sprintf("%d GetQueueUrl", b.SQS.Snapshot()["GetQueueUrl"]-before)
			},
			want: "2 GetQueueUrl", wantControl: "1 GetQueueUrl",
		},
		{
			name:    "MISSING_QUEUE_CACHE_TTL: a queue created after a miss is found once the miss expires",
			set:     map[string]string{contract.EnvMissingQueueTTL: "200ms"},
			control: map[string]string{contract.EnvMissingQueueTTL: "1h"},
			opts:    harness.Options{Clusters: []string{"alpha"}},
			run: func(t *testing.T, b *bus) string {
				b.EC2.Put(wired1, owned("epsilon"))
				first := route(b, spotEvent(wired1))
				if _, err := b.SQS.CreateQueue(context.Background(), harness.QueueOf("epsilon"), nil); err != nil {
					t.Fatal(err)
				}
				time.Sleep(300 * time.Millisecond)
				b.publish(spotEvent(wired3))
				b.EC2.Put(wired3, owned("epsilon"))
				b.drain()
				got, err := b.Consume(context.Background(), harness.QueueOf("epsilon"))
				if err != nil {
					t.Fatal(err)
				}
				return fmt.Sprintf("%s | epsilon:%d", first, len(got))
			},
			want: "ev-" + wired1 + "=no_queue | epsilon:1", wantControl: "ev-" + wired1 + "=no_queue | epsilon:0",
		},
		{
			name:    "CANARY_INTERVAL: canaries to one cluster, farther apart than the interval, all arrive",
			set:     map[string]string{contract.EnvCanaryInterval: "200ms"},
			control: map[string]string{contract.EnvCanaryInterval: "1h"},
			run: func(t *testing.T, b *bus) string {
				route(b, canaryEvent("c1", sqsemu.Account, "", "beta"))
				time.Sleep(300 * time.Millisecond)
				return route(b, canaryEvent("c2", sqsemu.Account, "", "beta"))
			},
			want: "beta:1", wantControl: "c2=canary_rate_limited",
		},
		{
			name:    "METRICS_NAMESPACE and BUS_NAME: where the metrics go, and the Bus dimension",
			set:     map[string]string{contract.EnvMetricsNamespace: "Custom", contract.EnvBusName: "kib-custom"},
			control: map[string]string{},
			run: func(t *testing.T, b *bus) string {
				route(b, "garbage")
				for _, l := range b.Out.Lines() {
					if aws, ok := l["_aws"].(map[string]any); ok {
						ns := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)["Namespace"]
						return fmt.Sprintf("%v %v", ns, l[contract.DimBus])
					}
				}
				return "no metrics"
			},
			want: "Custom kib-custom", wantControl: contract.MetricsNamespace + " " + harness.NamePrefix,
		},
		{
			name:    "LOG_LEVEL: info lines only at info",
			set:     map[string]string{contract.EnvLogLevel: "warn"},
			control: map[string]string{contract.EnvLogLevel: "info"},
			run: func(t *testing.T, b *bus) string {
				route(b, "garbage")
				for _, l := range b.Out.Lines() {
					if l["msg"] == "batch routed" {
						return "info lines"
					}
				}
				return "no info lines"
			},
			want: "no info lines", wantControl: "info lines",
		},
		{
			name: "ACCOUNT and MEMBER_READER_ROLES: a member's instances are looked up as its reader role",
			opts: harness.Options{Clusters: []string{"alpha"}, Members: map[string][]string{memberA: {"beta"}}},
			set:  map[string]string{},
			// Without the member, its events come from an account not on the bus.
			control: map[string]string{contract.EnvMemberReaderRoles: ""},
			run: func(t *testing.T, b *bus) string {
				b.EC2.PutIn(memberA, wired4, owned("beta"))
				got := route(b, spotIn(memberA, wired4))
				return fmt.Sprintf("%s, %d AssumeRole", got, b.STS.Calls(harness.ReaderRole(memberA)))
			},
			want: "beta:1, 1 AssumeRole", wantControl: "ev-" + wired4 + "=unknown_account, 0 AssumeRole",
		},
		{
			name:    "SENDER_CHECK: a member's forgery dropped, or forwarded and counted",
			opts:    harness.Options{Clusters: []string{"alpha"}, Members: map[string][]string{memberA: {"beta"}}},
			set:     map[string]string{contract.EnvSenderCheck: contract.SenderObserve},
			control: map[string]string{contract.EnvSenderCheck: contract.SenderEnforce},
			run: func(t *testing.T, b *bus) string {
				b.EC2.PutIn(ec2stub.Account, wired4, owned("alpha"))
				if err := b.PublishAs(context.Background(), b.As(memberA, harness.ForwarderRoleName), spotEvent(wired4)); err != nil {
					t.Fatal(err)
				}
				return fmt.Sprintf("%s, %v forged", route(b), b.Metric(contract.MetricForgedSender, "", ""))
			},
			want: "alpha:1, 1 forged", wantControl: "ev-" + wired4 + "=forged_sender, 1 forged",
		},
		{
			name:    "FORWARDER_ROLE_NAME: the member's role its events must come from",
			opts:    harness.Options{Clusters: []string{"alpha"}, Members: map[string][]string{memberA: {"beta"}}},
			set:     map[string]string{},
			control: map[string]string{contract.EnvForwarderRoleName: "some-other-role"},
			run: func(t *testing.T, b *bus) string {
				b.EC2.PutIn(memberA, wired4, owned("beta"))
				return route(b, spotIn(memberA, wired4))
			},
			want: "beta:1", wantControl: "ev-" + wired4 + "=unattributable_sender",
		},
		{
			name:    "REDRIVE_ROLE_NAME: the hub's role whose messages are judged by the first sender they carry",
			set:     map[string]string{},
			control: map[string]string{contract.EnvRedriveRoleName: "some-other-role"},
			run: func(t *testing.T, b *bus) string {
				b.EC2.PutIn(ec2stub.Account, wired4, owned("alpha"))
				first := b.sealedBack(t, spotEvent(wired4), contract.ReasonUnknownAccount, b.IAM.ID(sqsemu.Account, harness.ForwarderRoleName)+":events",
					time.Now(), "first-id")
				if err := b.PublishWith(context.Background(), b.As(sqsemu.Account, harness.RedriveRoleName), first, spotEvent(wired4)); err != nil {
					t.Fatal(err)
				}
				return route(b)
			},
			want: "alpha:1", wantControl: "ev-" + wired4 + "=forged_sender",
		},
		{
			name:    "SENDER_ROLE_CACHE_TTL: a role's ID asked again after its lifetime",
			set:     map[string]string{contract.EnvSenderRoleTTL: "200ms"},
			control: map[string]string{contract.EnvSenderRoleTTL: "1h"},
			run: func(t *testing.T, b *bus) string {
				b.EC2.PutIn(ec2stub.Account, wired4, owned("alpha"))
				redrive := b.As(sqsemu.Account, harness.RedriveRoleName)
				for range 2 {
					if err := b.PublishAs(context.Background(), redrive, spotEvent(wired4)); err != nil {
						t.Fatal(err)
					}
					route(b)
					time.Sleep(300 * time.Millisecond)
				}
				return fmt.Sprintf("%d GetRole", b.IAM.Calls(sqsemu.Account, harness.RedriveRoleName))
			},
			want: "2 GetRole", wantControl: "1 GetRole",
		},
		{
			name:    "SENDER_ROLE_RECHECK: a sender differing from an answer older than its message waits that long for IAM",
			set:     map[string]string{contract.EnvSenderRoleTTL: "1h", contract.EnvSenderRecheck: "200ms"},
			control: map[string]string{contract.EnvSenderRoleTTL: "1h", contract.EnvSenderRecheck: "1h"},
			run: func(t *testing.T, b *bus) string {
				b.EC2.PutIn(ec2stub.Account, wired4, owned("alpha"))
				if err := b.PublishAs(context.Background(), b.As(sqsemu.Account, harness.RedriveRoleName), spotEvent(wired4)); err != nil {
					t.Fatal(err)
				}
				route(b) // the redrive role's ID learned
				time.Sleep(300 * time.Millisecond)
				// A role of the hub that is not the redrive role, sent after that answer.
				if err := b.PublishAs(context.Background(), b.As(sqsemu.Account, "intruder"), spotEvent(wired4)); err != nil {
					t.Fatal(err)
				}
				res := b.pollOnce()
				return fmt.Sprintf("%d retried, %d GetRole", res.Failed, b.IAM.Calls(sqsemu.Account, harness.RedriveRoleName))
			},
			want: "0 retried, 2 GetRole", wantControl: "1 retried, 1 GetRole",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, side := range []struct {
				env  map[string]string
				want string
			}{{tt.set, tt.want}, {tt.control, tt.wantControl}} {
				opts := tt.opts
				if opts.Clusters == nil && opts.Members == nil {
					opts.Clusters = clusters
				}
				opts.Env = side.env
				b := newBusWith(t, opts)
				live = slices.Clone(opts.Clusters)
				for _, cs := range opts.Members {
					live = append(live, cs...)
				}
				for _, c := range live {
					b.received(c) // Karpenter resolves its queue at start-up
				}
				if got := tt.run(t, b); got != side.want {
					t.Errorf("with %v: %q, want %q", side.env, got, side.want)
				}
			}
		})
	}
}
