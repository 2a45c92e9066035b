// Package verify proves, on demand, that each cluster's Karpenter reads its interruption queue (make verify,
// docs/operations.md, "Heartbeat"): it puts one canary per cluster on the default event bus, as the heartbeat schedules do,
// then reports when the router forwarded it (its "canary forwarded" log line, read from the router's log group)
// and when the cluster's queue was seen empty again (Karpenter received and deleted it). It touches no
// instance: a canary is a no-op for every Karpenter.
package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/outputs"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Events puts canaries on the default event bus.
type Events interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// Logs reads the router's log group.
type Logs interface {
	FilterLogEvents(ctx context.Context, in *cloudwatchlogs.FilterLogEventsInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.FilterLogEventsOutput, error)
}

// Queues reads a cluster queue's message counts, and looks into the dead-letter queue for canaries EventBridge could
// not deliver.
type Queues interface {
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
}

var (
	_ Events = (*eventbridge.Client)(nil)
	_ Logs   = (*cloudwatchlogs.Client)(nil)
	_ Queues = (*sqs.Client)(nil)
)

// Clients are the AWS APIs verify calls.
type Clients struct {
	Events Events
	Logs   Logs
	Queues Queues
}

// Outputs are a stack's outputs as verify reads them (pulumi stack output --json): the bus's name, region and
// router's log group, each cluster's queue and account (the hub's or a member's), the canary interval (the router's
// default when absent: a canary the router held back is put again once it has passed), the dead-letter queue
// EventBridge puts what it could not deliver to, and how the hub's rules deliver (the default when absent).
type Outputs = outputs.Read

// Cluster is a cluster's record in Outputs.
type Cluster = outputs.ReadCluster

// ReadOutputs decodes a stack's outputs and checks verify has what it needs; one masked as a secret is left out.
func ReadOutputs(r io.Reader) (Outputs, error) {
	var o Outputs
	absent, err := outputs.Parse(r, &o)
	if err != nil {
		return Outputs{}, fmt.Errorf("reading the stack's outputs (pulumi stack output --json): %w", err)
	}
	missing := outputs.Empty(&o, &o.BusName, &o.Region, &o.RouterLogGroupName)
	// No clusters output (or one masked as a secret) is not a stack of no clusters, whose output is {}.
	for _, name := range outputs.Fields(&o, &o.Clusters) {
		if slices.Contains(absent, name) {
			missing = append(missing, name)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(o.Clusters)) {
		cl := o.Clusters[c]
		for _, name := range outputs.Empty(&cl, &cl.QueueURL) {
			missing = append(missing, "clusters."+c+"."+name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return Outputs{}, fmt.Errorf("the stack's outputs lack %s: run pulumi up with this version first (a secret one: pulumi stack output --json --show-secrets)", strings.Join(missing, ", "))
	}
	return o, nil
}

// Options shape a run.
type Options struct {
	// Clusters to verify; every cluster of the outputs when empty.
	Clusters []string
	// Timeout is how long to wait for every canary to be forwarded and consumed (default 2 minutes).
	Timeout time.Duration
	// Poll is how often the log group and the queues are read (default 1 s): the precision of the times.
	Poll time.Duration
	// Now defaults to time.Now.
	Now func() time.Time
}

// Result is one cluster's: how long its canary took to be forwarded by the router (from the put), and then to
// be consumed by its Karpenter (from the forwarding), or why verify could not see it.
type Result struct {
	Cluster   string
	EventID   string
	Forwarded time.Duration
	Consumed  time.Duration
	// HeldBack counts the canaries of the cluster the router held back (another canary had reached the cluster
	// less than the canary interval before, such as its heartbeat's), each put again after the interval.
	HeldBack int
	// Err says what did not happen within the timeout; nil when the canary was consumed.
	Err error
	// Refused is why the router refused the canary for its sender (its log line's reason, sender and error), and
	// DeadLettered why EventBridge could not deliver it (the dead-letter queue's ERROR_CODE and ERROR_MESSAGE): the
	// hub's own rules do not deliver as the router takes them.
	Refused, DeadLettered string

	putAgainAt time.Time // when a held-back canary is put again
}

// ErrNotForwarded and ErrNotConsumed are the two ways a canary fails.
var (
	ErrNotForwarded = errors.New("not forwarded")
	ErrNotConsumed  = errors.New("not consumed")
)

// Run puts a canary for each cluster and follows it until every one is consumed or the timeout passes. The error
// is for what stops the run itself (a cluster not in the outputs, PutEvents refused); each cluster's outcome is
// in its Result.
func Run(ctx context.Context, c Clients, out Outputs, opts Options) ([]Result, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.Poll == 0 {
		opts.Poll = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	clusters := opts.Clusters
	if len(clusters) == 0 {
		clusters = slices.Sorted(maps.Keys(out.Clusters))
	}
	for _, cl := range clusters {
		if _, ok := out.Clusters[cl]; !ok {
			return nil, fmt.Errorf("cluster %q is not on the bus %s (its outputs' clusters: %s)", cl, out.BusName,
				strings.Join(slices.Sorted(maps.Keys(out.Clusters)), ", "))
		}
	}
	if len(clusters) == 0 {
		return nil, fmt.Errorf("the bus %s has no cluster to verify", out.BusName)
	}
	start := opts.Now()
	results, err := put(ctx, c.Events, out, clusters)
	if err != nil {
		return nil, err
	}
	byEvent := map[string]*Result{}
	for i := range results {
		byEvent[results[i].EventID] = &results[i]
	}
	forwardedAt, heldBack := map[string]time.Time{}, map[string]time.Time{}
	deadline := start.Add(opts.Timeout)
	interval := contract.DefaultSettings.CanaryInterval
	if out.CanaryIntervalSeconds > 0 {
		interval = time.Duration(out.CanaryIntervalSeconds) * time.Second
	}
	refused := map[string]string{}
	for {
		if err := forwarded(ctx, c.Logs, out.RouterLogGroupName, start, byEvent, forwardedAt, heldBack, refused); err != nil {
			return nil, err
		}
		pending := 0
		for i := range results {
			r := &results[i]
			at, ok := forwardedAt[r.EventID]
			held, isHeld := heldBack[r.EventID]
			switch {
			case r.Consumed > 0 || r.Err != nil:
			case !ok && refused[r.EventID] != "":
				r.Refused = refused[r.EventID]
				r.Err = fmt.Errorf("%w: the router refused it for its sender (%s)", ErrNotForwarded, r.Refused)
			case !ok && isHeld && r.putAgainAt.IsZero():
				// The router held it back: put another once the interval has passed, if it fits in the timeout.
				r.HeldBack++
				if r.putAgainAt = held.Add(interval); r.putAgainAt.After(deadline) {
					r.Err = fmt.Errorf("%w: the router held its canary back (another reached %s less than the canary interval, %s, "+
						"before) and the interval ends after the timeout: run verify again, or with a longer timeout",
						ErrNotForwarded, r.Cluster, seconds(interval))
					continue
				}
				pending++
			case !ok && !r.putAgainAt.IsZero() && !opts.Now().Before(r.putAgainAt):
				again, err := put(ctx, c.Events, out, []string{r.Cluster})
				if err != nil {
					return nil, err
				}
				delete(byEvent, r.EventID)
				r.EventID, r.putAgainAt = again[0].EventID, time.Time{}
				byEvent[r.EventID] = r
				pending++
			case !ok:
				pending++
			default:
				r.Forwarded = max(at.Sub(start), time.Millisecond)
				empty, err := emptyQueue(ctx, c.Queues, out.Clusters[r.Cluster].QueueURL)
				if err != nil {
					return nil, fmt.Errorf("reading the queue of %s: %w", r.Cluster, err)
				}
				if empty {
					r.Consumed = max(opts.Now().Sub(at), time.Millisecond)
				} else {
					pending++
				}
			}
		}
		if pending == 0 || !opts.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(opts.Poll):
		}
	}
	if err := deadLettered(ctx, c.Queues, out.DeadLetterQueueURL, results); err != nil {
		return nil, err
	}
	for i := range results {
		r := &results[i]
		switch {
		case r.Consumed > 0, r.Err != nil:
		case r.DeadLettered != "":
			r.Err = fmt.Errorf("%w: EventBridge could not deliver it to the central queue (%s)", ErrNotForwarded, r.DeadLettered)
		case r.Forwarded == 0:
			r.Err = fmt.Errorf("%w within %s: no \"%s\" line in %s (check the canary rule, the central queue and the router)",
				ErrNotForwarded, seconds(opts.Timeout), contract.LogCanaryForwarded, out.RouterLogGroupName)
		default:
			r.Err = fmt.Errorf("%w within %s: its queue still holds messages (check Karpenter's settings.interruptionQueue, its logs and its role)",
				ErrNotConsumed, seconds(opts.Timeout))
		}
	}
	return results, nil
}

// put puts one canary per cluster, naming the cluster's account, ten per PutEvents call (its limit).
func put(ctx context.Context, events Events, out Outputs, clusters []string) ([]Result, error) {
	var results []Result
	for chunk := range slices.Chunk(clusters, 10) {
		entries := make([]ebtypes.PutEventsRequestEntry, len(chunk))
		for i, cl := range chunk {
			entries[i] = ebtypes.PutEventsRequestEntry{
				EventBusName: aws.String("default"), Source: aws.String(contract.SourceCanary),
				DetailType: aws.String(contract.DetailTypeCanary),
				Detail:     aws.String(contract.CanaryDetail{Bus: out.BusName, Account: out.Clusters[cl].Account, Clusters: []string{cl}}.JSON()),
			}
		}
		resp, err := events.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		if err != nil {
			return nil, fmt.Errorf("putting canaries: %w", err)
		}
		if len(resp.Entries) != len(chunk) {
			return nil, fmt.Errorf("putting canaries: %d entries answered for %d", len(resp.Entries), len(chunk))
		}
		for i, e := range resp.Entries {
			if e.EventId == nil {
				return nil, fmt.Errorf("putting the canary of %s: %s %s", chunk[i], aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
			}
			results = append(results, Result{Cluster: chunk[i], EventID: *e.EventId})
		}
	}
	return results, nil
}

// deadLettered looks, for every canary not forwarded, into the dead-letter queue (when the outputs name it), where
// EventBridge puts an event it could not deliver to the central queue with why in the ERROR_CODE and ERROR_MESSAGE
// attributes ("Using dead-letter queues to process undelivered events in EventBridge",
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html). It receives with no visibility
// timeout, so what it reads stays where it is, for the redrive.
func deadLettered(ctx context.Context, queues Queues, dlq string, results []Result) error {
	pending := map[string]*Result{}
	for i := range results {
		if r := &results[i]; r.Forwarded == 0 && r.Err == nil {
			pending[r.EventID] = r
		}
	}
	if dlq == "" || len(pending) == 0 {
		return nil
	}
	for range 10 { // at most 100 messages: the canaries of one run are among the newest
		out, err := queues.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(dlq), MaxNumberOfMessages: 10, VisibilityTimeout: 0, MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			return fmt.Errorf("looking into the dead-letter queue for the canaries not forwarded: %w", err)
		}
		if len(out.Messages) == 0 {
			return nil
		}
		for _, m := range out.Messages {
			var ev struct {
				ID string `json:"id"`
			}
			if json.Unmarshal([]byte(aws.ToString(m.Body)), &ev) != nil || pending[ev.ID] == nil {
				continue
			}
			attr := func(k string) string { return aws.ToString(m.MessageAttributes[k].StringValue) }
			pending[ev.ID].DeadLettered = strings.TrimSpace(attr("ERROR_CODE") + ": " + attr("ERROR_MESSAGE"))
		}
	}
	return nil
}

// Hub says whether the hub's own rules deliver to the central queue as the router takes them, from what the run's
// canaries (all put on the hub's default bus, all through its canary rule) became: one forwarded proves they do;
// one the router refused for its sender, or that EventBridge dead-lettered, proves they do not, and says which
// setting to switch (mode is the stack's centralQueue.hubDelivery, "" its default). ok is false when the run
// proves neither.
func Hub(results []Result, mode string) (line string, delivers, ok bool) {
	mode = cmp.Or(mode, contract.HubDeliveryExecutionRole)
	other := contract.HubDeliveryQueuePolicy
	if mode == contract.HubDeliveryQueuePolicy {
		other = contract.HubDeliveryExecutionRole
	}
	switch_ := fmt.Sprintf("switch the hub's delivery: pulumi config set --path centralQueue.hubDelivery %s, then pulumi up and make verify again "+
		"(docs/security.md, \"How the hub's rules deliver\")", other)
	for _, r := range results {
		if r.Forwarded > 0 {
			return fmt.Sprintf("the hub's own rules deliver to the central queue (%s): its canaries reached the router", mode), true, true
		}
	}
	for _, r := range results {
		switch {
		case r.DeadLettered != "":
			return fmt.Sprintf("the hub's own rules do NOT deliver (%s): EventBridge dead-lettered its canaries (%s); %s", mode, r.DeadLettered, switch_), false, true
		case r.Refused != "":
			return fmt.Sprintf("the hub's own rules do NOT deliver as the router takes them (%s): it refused its canaries for their sender (%s); %s", mode, r.Refused, switch_), false, true
		}
	}
	return "", false, false
}

// forwarded reads the router's lines since start and records when each of the run's canaries was forwarded to
// the cluster it is for ("canary forwarded"), held back by the canary interval (a drop of reason
// canary_rate_limited), or refused for its sender (a drop of reason forged_sender or unattributable_sender).
func forwarded(ctx context.Context, logs Logs, group string, start time.Time, byEvent map[string]*Result, at, held map[string]time.Time,
	refused map[string]string,
) error {
	read := func(pattern string, record func(line map[string]any, ts time.Time)) error {
		in := &cloudwatchlogs.FilterLogEventsInput{
			LogGroupName:  aws.String(group),
			StartTime:     aws.Int64(start.Add(-time.Minute).UnixMilli()), // the router's clock may lag ours
			FilterPattern: aws.String(pattern),
		}
		for p := cloudwatchlogs.NewFilterLogEventsPaginator(logs, in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return fmt.Errorf("reading the router's log group %s: %w", group, err)
			}
			for _, e := range page.Events {
				var line map[string]any
				if json.Unmarshal([]byte(aws.ToString(e.Message)), &line) == nil && e.Timestamp != nil {
					record(line, time.UnixMilli(*e.Timestamp))
				}
			}
		}
		return nil
	}
	err := read(fmt.Sprintf(`{ $.msg = %q }`, contract.LogCanaryForwarded), func(line map[string]any, ts time.Time) {
		id, _ := line[contract.LogEventID].(string)
		cluster, _ := line[contract.LogCluster].(string)
		if r, ok := byEvent[id]; ok && r.Cluster == cluster {
			if _, seen := at[id]; !seen {
				at[id] = ts
			}
		}
	})
	if err != nil {
		return err
	}
	err = read(fmt.Sprintf(`{ $.%s = %q }`, contract.LogReason, contract.ReasonCanaryRateLimited), func(line map[string]any, ts time.Time) {
		if id, _ := line[contract.LogEventID].(string); byEvent[id] != nil && line["msg"] == contract.LogMessageDropped {
			if _, seen := held[id]; !seen {
				held[id] = ts
			}
		}
	})
	if err != nil {
		return err
	}
	return read(fmt.Sprintf(`{ $.%s = %q || $.%s = %q }`, contract.LogReason, contract.ReasonForgedSender, contract.LogReason, contract.ReasonUnattributable),
		func(line map[string]any, _ time.Time) {
			if id, _ := line[contract.LogEventID].(string); byEvent[id] != nil && line["msg"] == contract.LogMessageDropped {
				refused[id] = fmt.Sprintf("%v, sender %v: %v", line[contract.LogReason], line[contract.LogSender], line["error"])
			}
		})
}

// emptyQueue reports whether the queue holds no message, visible, in flight or delayed: once the canary was
// sent there, its Karpenter received and deleted it. SQS's counts are approximate, settling within seconds.
func emptyQueue(ctx context.Context, queues Queues, url string) (bool, error) {
	out, err := queues.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{
		sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed,
	}})
	if err != nil {
		return false, err
	}
	for k, v := range out.Attributes {
		n, err := strconv.Atoi(v)
		if err != nil {
			return false, fmt.Errorf("attribute %s is %q, not a count", k, v)
		}
		if n != 0 {
			return false, nil
		}
	}
	return true, nil
}

// Report writes one line per cluster and returns the clusters whose canary failed.
func Report(w io.Writer, results []Result) []string {
	var failed []string
	width := 0
	for _, r := range results {
		width = max(width, len(r.Cluster))
	}
	for _, r := range results {
		var line string
		switch {
		case r.Err == nil && r.HeldBack > 0:
			line = fmt.Sprintf("forwarded in %s, consumed by Karpenter in %s (put again: the router held back %d, another canary had just reached it)",
				seconds(r.Forwarded), seconds(r.Consumed), r.HeldBack)
		case r.Err == nil:
			line = fmt.Sprintf("forwarded in %s, consumed by Karpenter in %s", seconds(r.Forwarded), seconds(r.Consumed))
		case errors.Is(r.Err, ErrNotConsumed):
			line = fmt.Sprintf("forwarded in %s, %v", seconds(r.Forwarded), r.Err)
		default:
			line = r.Err.Error()
		}
		if r.Err != nil {
			failed = append(failed, r.Cluster)
		}
		fmt.Fprintf(w, "%-*s  %s\n", width, r.Cluster, line)
	}
	return failed
}

// seconds formats d to the tenth of a second, or the hundredth below one second.
func seconds(d time.Duration) string {
	digits := 1
	if d < time.Second {
		digits = 2
	}
	return strconv.FormatFloat(d.Seconds(), 'f', digits, 64) + " s"
}
