// Command demo runs the whole event path on loopback (make demo): an embedded goaws for SQS (queues in two
// accounts), stubs of EC2 and STS, and the router built exactly as in Lambda, as the hub of a member account. It
// routes one event of each kind for three clusters of the hub and one of the member, an instance no cluster owns
// and an account not on the bus, then reports what each cluster's Karpenter receives (read by Karpenter's own
// parser), what was dropped and why, and the AWS requests each event cost; then runs make verify's code with
// one Karpenter stopped.
package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	kv "github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/ebstub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/logstub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/verify"
)

const (
	account = sqsemu.Account
	region  = sqsemu.Region
)

// member is a member account of the bus, with a cluster of its own: the bus's account is the hub.
const member = "210987654321"

var clusters = []string{"payments-prod", "search-prod", "batch-spot", "orders-prod"}

// instances and the tags EC2 holds for them: each owner tag the router reads, and a bastion no cluster owns.
var instances = []struct {
	id, role string
	tags     map[string]string
	account  string // the hub's when empty
}{
	{"i-0a00000000000a001", "payments-prod, launched by Karpenter", map[string]string{"eks:eks-cluster-name": "payments-prod", "karpenter.sh/nodepool": "default"}, ""},
	{"i-0a00000000000a002", "payments-prod, launched by Karpenter", map[string]string{"eks:eks-cluster-name": "payments-prod"}, ""},
	{"i-0b00000000000b001", "search-prod, cloud-provider tag", map[string]string{"kubernetes.io/cluster/search-prod": "owned"}, ""},
	{"i-0b00000000000b002", "search-prod, managed node group", map[string]string{"eks:cluster-name": "search-prod"}, ""},
	{"i-0c00000000000c001", "batch-spot, launched by Karpenter", map[string]string{"eks:eks-cluster-name": "batch-spot"}, ""},
	{"i-0c00000000000c002", "batch-spot, launched by Karpenter", map[string]string{"eks:eks-cluster-name": "batch-spot"}, ""},
	{"i-0d00000000000d001", "bastion, no cluster", map[string]string{"Name": "bastion"}, ""},
	{"i-0e00000000000e001", "legacy-cluster, not on the bus", map[string]string{"eks:eks-cluster-name": "legacy-cluster"}, ""},
	{"i-0f00000000000f001", "orders-prod, in member account " + member, map[string]string{"eks:eks-cluster-name": "orders-prod"}, member},
}

type event struct{ name, id, body string }

func ec2Event(n int, detailType, detail string) string {
	return fmt.Sprintf(`{"version":"0","id":"demo-%02d","detail-type":%q,"source":"aws.ec2","account":%q,"time":"2026-11-21T12:00:%02dZ","region":%q,"resources":[],"detail":%s}`,
		n, detailType, account, n, region, detail)
}

func events() []event {
	health := fmt.Sprintf(`{"version":"0","id":"demo-05","detail-type":"AWS Health Event","source":"aws.health","account":%q,"time":"2026-11-21T12:00:05Z","region":%q,"resources":["i-0a00000000000a002","i-0b00000000000b002"],"detail":{"eventArn":"arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/demo","service":"EC2","eventTypeCode":"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED","eventTypeCategory":"scheduledChange","startTime":"Sat, 28 Nov 2026 12:00:00 GMT","affectedEntities":[{"entityValue":"i-0a00000000000a002"},{"entityValue":"i-0b00000000000b002"}]}}`,
		account, region)
	return []event{
		{"spot interruption warning", "demo-01", ec2Event(1, "EC2 Spot Instance Interruption Warning", `{"instance-id":"i-0a00000000000a001","instance-action":"terminate"}`)},
		{"rebalance recommendation", "demo-02", ec2Event(2, "EC2 Instance Rebalance Recommendation", `{"instance-id":"i-0b00000000000b001"}`)},
		{"state change: terminated", "demo-03", ec2Event(3, "EC2 Instance State-change Notification", `{"instance-id":"i-0c00000000000c001","state":"terminated"}`)},
		{"state change: stopping", "demo-04", ec2Event(4, "EC2 Instance State-change Notification", `{"instance-id":"i-0b00000000000b002","state":"stopping"}`)},
		{"health: scheduled change, 2 clusters", "demo-05", health},
		{"capacity reservation warning", "demo-06", ec2Event(6, "EC2 Capacity Reservation Instance Interruption Warning", `{"instance-id":"i-0c00000000000c002","instance-action":"terminate"}`)},
		{"spot warning, bastion", "demo-07", ec2Event(7, "EC2 Spot Instance Interruption Warning", `{"instance-id":"i-0d00000000000d001","instance-action":"terminate"}`)},
		{"spot warning, cluster not on bus", "demo-08", ec2Event(8, "EC2 Spot Instance Interruption Warning", `{"instance-id":"i-0e00000000000e001","instance-action":"terminate"}`)},
		{"state change: running", "demo-09", ec2Event(9, "EC2 Instance State-change Notification", `{"instance-id":"i-0a00000000000a001","state":"running"}`)},
		{"spot warning, member account", "demo-10", strings.Replace(ec2Event(10, "EC2 Spot Instance Interruption Warning", `{"instance-id":"i-0f00000000000f001","instance-action":"terminate"}`), `"account":"`+account+`"`, `"account":"`+member+`"`, 1)},
		{"spot warning, account not on bus", "demo-11", strings.Replace(ec2Event(11, "EC2 Spot Instance Interruption Warning", `{"instance-id":"i-0f00000000000f001","instance-action":"terminate"}`), `"account":"`+account+`"`, `"account":"999999999999"`, 1)},
		{"not JSON", "", "this is not an event"},
	}
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	b, err := harness.New(ctx, harness.Options{Clusters: clusters[:3], Members: map[string][]string{member: {"orders-prod"}}})
	if err != nil {
		return err
	}
	defer b.Close()
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	defer w.Flush()

	fmt.Fprintf(w, "karpenter-interruption-bus demo: goaws at %s, EC2 stub at %s, no AWS account\n\n", b.SQS.URL, b.EC2.URL)
	fmt.Fprintln(w, "Cluster queues ("+contract.EnvClusterQueuePrefix+"="+harness.Prefix+"):")
	for _, c := range clusters {
		fmt.Fprintf(w, "  %s\t-> %s\tin account %s\n", c, harness.QueueOf(c), b.AccountOf(harness.QueueOf(c)))
	}
	fmt.Fprintln(w, "\nInstances in EC2:")
	for _, in := range instances {
		if in.account == "" {
			in.account = account
		}
		b.EC2.PutIn(in.account, in.id, in.tags)
		fmt.Fprintf(w, "  %s\t%s\t%s\t%v\n", in.account, in.id, in.role, in.tags)
	}

	fmt.Fprintln(w, "\nRouting each event (EventBridge -> central queue -> router -> cluster queue); AWS requests per event:")
	fmt.Fprintln(w, "  event\toutcome\tSQS requests\tDescribeInstances\tAssumeRole")
	evs := events()
	for _, ev := range evs {
		before, ec2Before, stsBefore := b.SQS.Snapshot(), b.EC2.Calls(), b.STS.Calls(harness.ReaderRole(member))
		if err := b.Publish(ctx, ev.body); err != nil {
			return err
		}
		res, err := b.Drain(ctx)
		if err != nil {
			return err
		}
		outcome := "forwarded"
		if len(res) > 0 && res[len(res)-1].Failed > 0 {
			outcome = "left for retry"
		}
		key := ev.id
		if key == "" {
			key = ev.body
		}
		if d := b.Drops()[key]; len(d) > 0 {
			outcome = "dropped: " + d[0].Reason
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%d\t%d\n", ev.name, outcome, requests(b.SQS.Snapshot(), before), b.EC2.Calls()-ec2Before,
			b.STS.Calls(harness.ReaderRole(member))-stsBefore)
	}

	fmt.Fprintf(w, "\nWhat each cluster's Karpenter receives, read by Karpenter v%s's own parser (the stack's default;\n"+
		"versions before 1.10 take the capacity reservation warning for a no-op):\n", kv.Default)
	var karpenterRequests []string
	for _, c := range clusters {
		before := b.SQS.Snapshot()
		bodies, err := b.Consume(ctx, harness.QueueOf(c))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s (%d messages)\n", c, len(bodies))
		for _, body := range bodies {
			p, err := karpenter.Parse(body)
			id := body[strings.Index(body, `"id":"`)+6:][:7]
			switch {
			case err != nil:
				fmt.Fprintf(w, "    %s\tKarpenter cannot parse it: %v\n", id, err)
			case p.Kind == "no_op":
				fmt.Fprintf(w, "    %s\tno_op: Karpenter ignores it\n", id)
			default:
				fmt.Fprintf(w, "    %s\t%s\t%v\n", id, p.Kind, p.InstanceIDs)
			}
		}
		karpenterRequests = append(karpenterRequests, c+": "+requests(b.SQS.Snapshot(), before))
	}
	fmt.Fprintf(w, "  Karpenter's own requests to read them (GetQueueUrl is its start-up lookup):\n    %s\n", strings.Join(karpenterRequests, "\n    "))

	fmt.Fprintln(w, "\nDropped, acknowledged and logged once each with a reason:")
	drops := b.Drops()
	for _, k := range slices.Sorted(maps.Keys(drops)) {
		for _, d := range drops[k] {
			fmt.Fprintf(w, "  %s\t%s\t%s\n", k, d.Reason, d.Error)
		}
	}
	fmt.Fprintf(w, "\nRouter metrics (EMF): received %.0f, forwarded %.0f deliveries, dropped %.0f, retried %.0f\n",
		b.Metric(contract.MetricReceived, "", ""), b.Metric(contract.MetricForwarded, "", ""), b.Metric(contract.MetricDropped, "", ""), b.Metric(contract.MetricRetried, "", ""))
	return heartbeat(ctx, b, w)
}

// heartbeat runs make verify's code against this bus, with the Karpenters of two clusters reading their queues
// and batch-spot's stopped: EventBridge's canary rule (a stub), the router's log group (a stub), goaws.
func heartbeat(ctx context.Context, b *harness.Bus, w *tabwriter.Writer) error {
	eb, err := ebstub.Start(b.As(account, harness.ForwarderRoleName), account, region,
		ebstub.Rule{Name: contract.RuleCanary, Pattern: contract.CanaryPattern(b.Settings.BusName), QueueURL: b.Central})
	if err != nil {
		return err
	}
	defer eb.Close()
	logGroup := "/aws/lambda/" + harness.NamePrefix + "-router"
	logs := logstub.Start(logGroup, b.Out.Text)
	defer logs.Close()
	run, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() { b.Serve(run) })
	for _, c := range clusters {
		if c != "batch-spot" { // batch-spot's Karpenter is stopped
			wg.Go(func() { _ = b.Karpenter(run, c, func(string) {}) })
		}
	}

	var out verify.Outputs
	out.BusName, out.Region, out.RouterLogGroupName = b.Settings.BusName, region, logGroup
	out.Clusters = map[string]verify.Cluster{}
	for _, c := range clusters {
		acct := b.AccountOf(harness.QueueOf(c))
		u, err := b.SQS.ClientIn(acct).GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(harness.QueueOf(c))})
		if err != nil {
			return err
		}
		out.Clusters[c] = verify.Cluster{QueueURL: aws.ToString(u.QueueUrl), Account: acct}
	}
	creds := credentials.NewStaticCredentialsProvider("demo", "demo", "")
	results, err := verify.Run(ctx, verify.Clients{
		Events: eventbridge.New(eventbridge.Options{Region: region, BaseEndpoint: aws.String(eb.URL), Credentials: creds}),
		Logs:   cloudwatchlogs.New(cloudwatchlogs.Options{Region: region, BaseEndpoint: aws.String(logs.URL), Credentials: creds}),
		Queues: b.SQS.Client(),
	}, out, verify.Options{Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\nHeartbeat: make verify on this bus, batch-spot's Karpenter stopped (a canary per cluster, a no-op for Karpenter):")
	w.Flush()
	var report strings.Builder
	failed := verify.Report(&report, results)
	for _, line := range strings.Split(strings.TrimSpace(report.String()), "\n") {
		fmt.Fprintln(w, "  "+line)
	}
	fmt.Fprintf(w, "  exit 1: the canary of %s was not consumed\n", strings.Join(failed, ", "))
	return nil
}

// requests formats the SQS requests made between two snapshots, idle polling and the demo's own bookkeeping
// (GetQueueAttributes, to know the central queue drained) left out.
func requests(after, before map[string]int) string {
	var parts []string
	total := 0
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if n := after[k] - before[k]; n > 0 && k != sqsemu.EmptyReceive && k != "GetQueueAttributes" {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
			total += n
		}
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}
