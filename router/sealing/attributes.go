package sealing

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// A record travels in message attributes twice: kept in the quarantine (Kept, which the quarantine writes and make
// requeue reads with ReadKept), then sent back to the central queue (SentBack, which make requeue writes and the
// router and the intake read with ReadSentBack). Both directions live here, so that what the seal covers is what is
// read after the trip; the body travels as itself and account is what the body's event names.

// Attribute values as SQS carries them: a number's DataType is "Number" ("Amazon SQS message attributes").
func str(v string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
}

// number is v as a Number, which it always is when SQS stamped it (SentTimestamp); anything else travels as a String,
// unchanged, so that what was sealed still verifies and SQS does not refuse the message.
func number(v string) types.MessageAttributeValue {
	if _, err := strconv.ParseInt(v, 10, 64); err != nil {
		return str(v)
	}
	return types.MessageAttributeValue{DataType: aws.String("Number"), StringValue: aws.String(v)}
}

// put sets name to v in attrs, leaving an empty value out: SQS refuses an empty attribute value.
func put(attrs map[string]types.MessageAttributeValue, name string, v types.MessageAttributeValue) {
	if aws.ToString(v.StringValue) != "" {
		attrs[name] = v
	}
}

// Kept adds to attrs what the quarantine keeps of r with its seal: the reason, the account, the first sender and
// send time (the quarantine's own names for them), the origin, the first message ID and the seal.
func (r Record) Kept(attrs map[string]types.MessageAttributeValue, seal string) {
	put(attrs, contract.AttrReason, str(r.Reason))
	put(attrs, contract.AttrAccount, str(r.Account))
	put(attrs, contract.AttrSender, str(r.FirstSender))
	put(attrs, contract.AttrSent, number(r.FirstSent))
	put(attrs, contract.AttrOrigin, str(r.Origin))
	put(attrs, contract.AttrMessageID, str(r.MessageID))
	put(attrs, contract.AttrRefused, str(r.Refused))
	put(attrs, contract.AttrSeal, str(seal))
}

// ReadKept is the record a kept message of body says it is (what Kept wrote), and its seal.
func ReadKept(body string, attr func(string) string) (Record, string) {
	return Record{
		BodySHA256: BodyDigest(body), Account: attr(contract.AttrAccount), Reason: attr(contract.AttrReason),
		FirstSender: attr(contract.AttrSender), FirstSent: attr(contract.AttrSent), Origin: attr(contract.AttrOrigin),
		MessageID: attr(contract.AttrMessageID), Refused: attr(contract.AttrRefused),
	}, attr(contract.AttrSeal)
}

// SentBack adds to attrs what a message sent back carries of r with its seal: the reason, the first sender and send
// time, the origin, the first message ID and the seal. The account is not carried: it is what the body names.
func (r Record) SentBack(attrs map[string]types.MessageAttributeValue, seal string) {
	put(attrs, contract.AttrReason, str(r.Reason))
	put(attrs, contract.AttrFirstSender, str(r.FirstSender))
	put(attrs, contract.AttrFirstSent, number(r.FirstSent))
	put(attrs, contract.AttrOrigin, str(r.Origin))
	put(attrs, contract.AttrMessageID, str(r.MessageID))
	put(attrs, contract.AttrRefused, str(r.Refused))
	put(attrs, contract.AttrSeal, str(seal))
}

// ReadSentBack is the record a message of body sent back says it is (what SentBack wrote), account being the
// account its event names, and its seal ("": it carries none).
func ReadSentBack(body, account string, attr func(string) string) (Record, string) {
	return Record{
		BodySHA256: BodyDigest(body), Account: account, Reason: attr(contract.AttrReason), FirstSender: attr(contract.AttrFirstSender),
		FirstSent: attr(contract.AttrFirstSent), Origin: attr(contract.AttrOrigin), MessageID: attr(contract.AttrMessageID),
		Refused: attr(contract.AttrRefused),
	}, attr(contract.AttrSeal)
}
