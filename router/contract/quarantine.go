package contract

import "slices"

// The quarantine (docs/operations.md, "Refused messages: the quarantine"): the router keeps every message it refuses
// for one of QuarantineReasons in the bus's quarantine queue, body unchanged, with why in the message attributes
// below, instead of deleting it; an operator reads it there and sends it back as the redrive role (cmd/requeue).
// The attributes' names keep clear of the prefixes SQS reserves ("AWS.", "Amazon.": "Amazon SQS message
// attributes", https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html),
// and they are 7 of the 10 a message may carry.
const (
	// AttrReason is the Reason the router refused the message for.
	AttrReason = "kib-reason"
	// AttrError is why, as the router's log says it (at most MaxAttrError bytes).
	AttrError = "kib-error"
	// AttrAccount is the account the event names (claims to come from); empty when the body is no event.
	AttrAccount = "kib-account"
	// AttrSender and AttrSent are the SenderId and SentTimestamp SQS stamped on the message in the central queue.
	AttrSender = "kib-sender"
	AttrSent   = "kib-sent"
	// AttrMessageID is the message's ID in the queue it was refused from, and AttrEventID its event's id.
	AttrMessageID = "kib-message-id"
	AttrEventID   = "kib-event-id"
	// AttrRequeuedFrom marks a message the requeue command sent back: the queue it came from.
	AttrRequeuedFrom = "kib-requeued-from"
)

// MaxAttrError bounds AttrError, so the attributes never push a message past SQS's size limit by much.
const MaxAttrError = 1024

// QuarantineReasons are the refusals kept in the quarantine, and why each is worth reading again:
//   - forged_sender: evidence that one account tried to speak for another, for a security team; or a genuine event
//     refused because its sender could not be attributed (a forwarder created anew, a redrive by StartMessageMoveTask
//     keeping a former sender), to send back;
//   - unknown_account: a genuine event of an account not on the bus, or whose reader role is refused: send it back
//     once the account is added or its baseline fixed;
//   - canary_forbidden: a canary put in one account naming another's clusters, evidence like forged_sender;
//   - unparseable: no event at all on a queue only roles of the bus send to: a fault or tampering, to read.
//
// Not kept: not_interruption (events Karpenter ignores), no_owner (every instance of no cluster), no_queue (clusters
// not on the bus), canary_rate_limited (by design): each is routine, comes in volume, and has nothing to send back.
var QuarantineReasons = []Reason{ReasonForgedSender, ReasonUnknownAccount, ReasonCanaryForbidden, ReasonUnparseable}

// Quarantined reports whether a message refused for r is kept in the quarantine.
func Quarantined(r Reason) bool { return slices.Contains(QuarantineReasons, r) }
