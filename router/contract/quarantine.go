package contract

import (
	"slices"
	"unicode/utf8"
)

// The quarantine (docs/operations.md, "Refused messages: the quarantine"): the router keeps every message it refuses
// for one of QuarantineReasons in the bus's quarantine queue, body unchanged, with why in the message attributes
// below, instead of deleting it; an operator reads it there and sends it back as the redrive role (cmd/requeue).
// The attributes' names keep clear of the prefixes SQS reserves ("AWS.", "Amazon.": "Amazon SQS message
// attributes", https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html),
// and a kept message carries at most the 10 a message may have (AttrReason, AttrError, AttrAccount, AttrSender,
// AttrSent, AttrMessageID, AttrRefused, AttrEventID, AttrOrigin, AttrSeal), one sent back at most 10 too
// (AttrRequeuedFrom, AttrSeal, AttrReason, AttrMessageID, AttrRefused, AttrFirstSender, AttrFirstSent, AttrOrigin,
// AttrVouched, AttrVouchedBy).
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
	// AttrRefused is, on a record kept again (sent back, then refused again), the ID of the message whose refusal it
	// keeps now (sealing.Record.Refused): a new record, whose seal covers it.
	AttrRefused = "kib-refused"
	// AttrRequeuedFrom marks a message the requeue command sent back: the queue it came from, RequeuedFromQuarantine
	// or RequeuedFromDLQ.
	AttrRequeuedFrom = "kib-requeued-from"
	// AttrFirstSender and AttrFirstSent say, on a message the redrive role sent back, who first sent it and when (the
	// SenderId and SentTimestamp the router judged, or the dead-letter queue held): the router judges it by them,
	// never by the redrive role (docs/security.md, "What is sent back"). AttrOrigin is OriginDLQ when that first
	// sender is the dead-letter queue's, whose senders AWS does not document: such a message is never proven forged.
	AttrFirstSender = "kib-first-sender"
	AttrFirstSent   = "kib-first-sent"
	AttrOrigin      = "kib-origin"
	// AttrVouched is what an operator vouched for when sending an unattributable message back (VouchEvent or
	// VouchSender), and AttrVouchedBy who: the router delivers it, and logs both.
	AttrVouched   = "kib-vouched"
	AttrVouchedBy = "kib-vouched-by"
	// AttrSeal is the router's seal of what it kept (router/sealing: the base64 of a KMS signature over the body's
	// digest, AttrAccount's account, AttrReason, the first sender and send time, AttrOrigin and AttrMessageID). make
	// requeue carries it back with AttrReason and AttrMessageID, and the router believes what a message the redrive
	// role sent says of itself only when its seal verifies: anything else it refuses as ReasonUnsealed.
	AttrSeal = "kib-seal"
	// AttrIntake on a message the redrive role sends asks the router to seal the dead-letter queue's messages into
	// the quarantine (IntakeDLQ), from where make requeue sends them back as any other kept message.
	AttrIntake = "kib-intake"
)

// The values of AttrRequeuedFrom, AttrOrigin and AttrVouched.
const (
	RequeuedFromQuarantine = "quarantine"
	RequeuedFromDLQ        = "dlq"
	OriginDLQ              = "dlq"
	VouchEvent             = "event"
	VouchSender            = "sender"
	IntakeDLQ              = "dlq"
)

// MaxAttrError bounds AttrError, so the attributes never push a message past SQS's size limit by much.
const MaxAttrError = 1024

// TruncateUTF8 cuts s to at most n bytes on a character boundary: SQS refuses an attribute value that is not valid
// UTF-8 ("SendMessage": a message attribute's string value takes Unicode characters only), and a cut inside a
// character leaves half of one.
func TruncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// QuarantineReasons are the refusals kept in the quarantine, and why each is worth reading again:
//   - forged_sender: a proven forgery, evidence that one account tried to speak for another, for a security team:
//     never sent back;
//   - unattributable_sender: a sender the router can neither tie to the account nor prove is not its forwarder (a
//     forwarder created anew since the message was sent): sent back only when an operator vouches for it by name;
//   - unknown_account: an event of an account not on the bus, or whose reader role is refused, its sender kept: sent
//     back once the account is added or its baseline fixed, when the router judges that sender against the
//     account's forwarder (vouched for by name when it cannot be attributed);
//   - canary_forbidden: a canary put in one account naming another's clusters, evidence like forged_sender;
//   - unsealed: a message the redrive role sent that the router did not keep and seal, evidence of what whoever holds
//     the role tried: never sent back;
//   - dead_lettered: a message of the dead-letter queue taken in on an operator's request, its sender as the
//     dead-letter queue held it: sent back, and judged by that sender;
//   - unparseable: no event at all on a queue only roles of the bus send to: a fault or tampering, to read;
//   - replayed: a sealed record sent back once more after another message delivered it, evidence like unsealed.
//
// Not kept: not_interruption (events Karpenter ignores), no_owner (every instance of no cluster), no_queue (clusters
// not on the bus), canary_rate_limited (by design): each is routine, comes in volume, and has nothing to send back.
var QuarantineReasons = []Reason{ReasonForgedSender, ReasonUnattributable, ReasonUnknownAccount, ReasonCanaryForbidden, ReasonUnsealed,
	ReasonDeadLettered, ReasonUnparseable, ReasonReplayed, ReasonLedgerHidden}

// Evidence are the reasons whose messages are proof of misuse, never sent back: a proven forgery, a canary put in one
// account naming another's clusters (refused again on its content, whoever sends it), what the redrive role sent
// that the router had not sealed, and a sealed record it sent once more after it was delivered. A sealed record kept for one of them is refused again for it, whatever else it says.
var Evidence = []Reason{ReasonForgedSender, ReasonCanaryForbidden, ReasonUnsealed, ReasonReplayed}

// Vouchable are the reasons of the sealed records an operator may vouch for (AttrVouched): what the router could not
// attribute, or kept while its account was not on the bus. Nothing else is delivered on a vouch.
var Vouchable = []Reason{ReasonUnattributable, ReasonUnknownAccount}

// Quarantined reports whether a message refused for r is kept in the quarantine.
func Quarantined(r Reason) bool { return slices.Contains(QuarantineReasons, r) }

// KeptAgain are the reasons beside QuarantineReasons a sealed record sent back is kept again for: its owner or its
// owner's queue may come, and it is then sent back and delivered (a new record: sealing.Record.Refused).
var KeptAgain = []Reason{ReasonNoOwner, ReasonNoQueue}

// QuarantinedWhenSentBack reports whether a record sent back and refused for r is kept in the quarantine.
func QuarantinedWhenSentBack(r Reason) bool { return Quarantined(r) || slices.Contains(KeptAgain, r) }

// What the router and the infrastructure agree on of the seal key (router/sealing) and the archive (router/archive):
// the key's spec and usage as KMS names them ("CreateKey", https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateKey.html),
// the signing algorithm, and the archive's prefixes, which the router's policy lets it write under.
const (
	SealKeySpec   = "ECC_NIST_P256"
	SealKeyUsage  = "SIGN_VERIFY"
	SealAlgorithm = "ECDSA_SHA_256"

	ArchiveRefusedPrefix   = "refused/"
	ArchiveKeysPrefix      = "keys/"
	ArchiveDeliveredPrefix = "delivered/"
	ArchiveClaimsPrefix    = "claims/"
)

// MaxMessageBytes is the largest message every queue of the bus takes, body and attributes counted together ("Amazon
// SQS message quotas": "the message size includes the message body and the message attributes"): 256 KiB, the
// default of the AWS provider the stack is deployed with. SQS takes up to 1 MiB since August 2025 ("CreateQueue",
// MaximumMessageSize, https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html), but
// pulumi-aws v6.83.2 bundles terraform-provider-aws v5.100.0, which refuses a maxMessageSize over 262,144 at every
// preview (internal/service/sqs/queue.go, max_message_size: validation.IntBetween(1024, 262_144); raised in v6.8.0,
// hashicorp/terraform-provider-aws#43710, and never in the v5 line). Moving to pulumi-aws v7 (terraform-provider-aws
// v6) would allow 1 MiB: this constant, the queues' maxMessageSize and the stand-ins' rules would move together.
// Every live event fits: EventBridge delivers events of 256 KB at most. What does not fit is a refused event near that
// limit with the attributes the quarantine adds: the router keeps it in the archive only, and says so.
const MaxMessageBytes = 256 << 10

// AttributeBytes is what SQS counts of one message attribute against the message's size: its name, its data type and
// its value ("Amazon SQS message attributes": "each message attribute ... counts toward the total message size").
func AttributeBytes(name, dataType, value string) int { return len(name) + len(dataType) + len(value) }
