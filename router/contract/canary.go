package contract

import "encoding/json"

// Canary events are the bus's own heartbeat: put on the default event bus (by the heartbeat schedules and by
// verify), matched by the bus's canary rule, routed by the router to the clusters they name without any EC2
// lookup, and read by each cluster's Karpenter, which parses them as a no-op and deletes them. Their passage
// proves the whole path, from the rule to Karpenter's deletes (docs/operations.md, "Heartbeat").
const (
	// SourceCanary and DetailTypeCanary identify a canary; no AWS service uses them.
	SourceCanary     = "karpenter-interruption-bus.canary"
	DetailTypeCanary = "Interruption Bus Canary"
	// KindCanary is the Kind dimension of canaries.
	KindCanary Kind = "canary"
	// RuleCanary names the canary rule: "<namePrefix>-canary".
	RuleCanary = "canary"
	// MaxCanaryClusters bounds the clusters one canary names.
	MaxCanaryClusters = 100
)

// MetricCanaryForwarded counts canaries delivered to a cluster queue (dimensions Bus and Cluster); canaries are
// not counted in Forwarded.
const MetricCanaryForwarded = "CanaryForwarded"

// LogCanaryForwarded is the message of the router's log line for each canary delivered to a cluster queue, with
// the attributes LogEventID and LogCluster: what verify looks for in the router's log group.
const (
	LogCanaryForwarded = "canary forwarded"
	LogEventID         = "eventId"
	LogCluster         = "cluster"
)

// LogMessageDropped is the message of the router's log line for each message dropped, with the attributes
// LogEventID (when the message is an event) and LogReason (a Reason): verify reads the lines of its canaries held
// back by the canary interval (ReasonCanaryRateLimited) to put them again.
const (
	LogMessageDropped = "message dropped"
	LogReason         = "reason"
	// LogSender is the SQS SenderId of a message whose sender was refused (or is not a role), beside "account",
	// the account its event names.
	LogSender = "senderId"
	// LogSenderObserved is the message of the line for each message the sender check would have refused, and
	// forwarded all the same (SenderObserve), or could not decide and forwarded.
	LogSenderObserved = "sender check observed: forwarded a message it would not in enforce mode"
	// LogServiceSender is the message of the line logged the first time a router instance sees each sender that is
	// no role (docs/security.md, "Who sent each message").
	LogServiceSender = "a message sent by no IAM role: the hub's rules through the queue's policy, or judged as any sender"
	// LogVouched is the message of the line for each message delivered only because an operator vouched for it when
	// sending it back, with LogVouch (what was vouched for), LogVouchedBy (who the message says vouched: what make
	// requeue wrote, AttrVouchedBy, neither sealed nor checked; who sent it is the LogSentBack line's, as SQS stamped
	// it, and CloudTrail's record of the redrive role's session, with its source identity), LogSender (its first
	// sender).
	LogVouched   = "delivered on an operator's vouch: its first sender cannot be attributed"
	LogVouch     = "vouched"
	LogVouchedBy = "vouchedBy"
	// LogRequeued, true on a line, says the redrive role sent the message back; LogSender is then its first sender.
	LogRequeued = "requeued"
	// LogReaderRefused is the message of the line logged once when an account's reader role is refused (by the owner
	// lookup or the sender check), with its "account".
	LogReaderRefused = "reader role refused: the account's events are dropped as unknown_account"
	// LogQuarantined, true on a "message dropped" line, says the message was kept in the quarantine queue.
	LogQuarantined = "quarantined"
	// LogArchivedOnly, true on a "message dropped" line, says the message was kept in the archive only: too large for
	// the quarantine queue with its attributes (MaxMessageBytes), listed by make requeue FROM=archive.
	LogArchivedOnly = "archivedOnly"
	// LogDrained is the line of an invocation that took messages from the central queue itself after its batch
	// (Settings.Drain), with how many it "received", "deleted" and "retried", and the queue's "error" if one stopped it.
	LogDrained = "drained the central queue after the batch"
	// LogKeptInArchiveOnly is the line of each dead-lettered message the intake kept in the archive only (LogEventID: its
	// event's ID, its message ID when it is no event), LogArchivedOnly true.
	LogKeptInArchiveOnly = "dead-lettered message kept in the archive only: too large for the quarantine with its attributes"
	// LogDeadLettersTaken is the message of the line for each request of the redrive role to take the dead-letter
	// queue in (AttrIntake) the router carried out, with "kept" (how many) and "more" (whether some were left).
	LogDeadLettersTaken = "dead-letter queue taken into the quarantine, sealed"
	// LogSentBack is the line of every message the redrive role sent the central queue, naming who sent it as SQS
	// stamped it (LogSender: the SenderId, LogRoleID and LogSession its parts), never as the message says.
	LogSentBack = "sent back by the redrive role"
	LogRoleID   = "roleId"
	LogSession  = "session"
	// LogReplayed is the line of a sealed record refused as replayed, naming the message that delivered it first.
	LogReplayed = "a sealed record delivered before, sent back again: refused as replayed"
	// LogReplayedAtOnce is the line of a sealed record delivered by two messages at once, the other's delivery
	// recorded first: a replay that got through, counted as one.
	LogReplayedAtOnce = "a sealed record delivered by two messages at once: the second counted as replayed"
)

// CanaryDetail is a canary's detail: the bus it is for (its Bus dimension, the stack's name prefix), the account
// of the clusters it must reach (when not the account it was put in: verify, run in the hub, names a member's),
// and the clusters.
type CanaryDetail struct {
	Bus      string   `json:"bus"`
	Account  string   `json:"account,omitempty"`
	Clusters []string `json:"clusters"`
}

// JSON is the detail as EventBridge takes it (PutEvents' Detail, a schedule target's Input).
func (d CanaryDetail) JSON() string {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err) // plain data
	}
	return string(b)
}

// CanaryPattern is the canary rule's event pattern for bus: canaries naming that bus, and no other event.
func CanaryPattern(bus string) string {
	b, err := json.Marshal(map[string]any{
		"source": []string{SourceCanary}, "detail-type": []string{DetailTypeCanary},
		"detail": map[string][]string{"bus": {bus}},
	})
	if err != nil {
		panic(err) // plain data
	}
	return string(b)
}
