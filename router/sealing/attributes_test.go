package sealing

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

func reader(attrs map[string]types.MessageAttributeValue) func(string) string {
	return func(k string) string { return aws.ToString(attrs[k].StringValue) }
}

// TestEachWayReadsWhatItsWriterWrote: what the quarantine writes of a record (Kept) reads back as that record
// (ReadKept), and so does what a message sent back carries (SentBack, ReadSentBack); empty values are left out, a
// send time travels as a Number, and a value that is not one as a String, unchanged.
func TestEachWayReadsWhatItsWriterWrote(t *testing.T) {
	body := `{"id":"e","account":"222222222222"}`
	for name, rec := range map[string]Record{
		"whole":                    {Account: "222222222222", Reason: "unattributable_sender", FirstSender: "AROAOLD:s", FirstSent: "1763726400000", Origin: "dlq", MessageID: "m-1"},
		"no time, no origin":       {Account: "222222222222", Reason: "unknown_account", FirstSender: "AROAFWD:s", MessageID: "m-2"},
		"a time that is no number": {Account: "222222222222", Reason: "unknown_account", FirstSender: "AROAFWD:s", FirstSent: "yesterday", MessageID: "m-3"},
		"kept again":               {Account: "222222222222", Reason: "no_owner", FirstSender: "AROAFWD:s", MessageID: "m-4", Refused: "c-9"},
	} {
		t.Run(name, func(t *testing.T) {
			rec.BodySHA256 = BodyDigest(body)
			kept := map[string]types.MessageAttributeValue{}
			rec.Kept(kept, "c2VhbA==")
			if got, seal := ReadKept(body, reader(kept)); got != rec || seal != "c2VhbA==" {
				t.Errorf("ReadKept: %+v %q, want %+v", got, seal, rec)
			}
			back := map[string]types.MessageAttributeValue{}
			rec.SentBack(back, "c2VhbA==")
			if got, seal := ReadSentBack(body, rec.Account, reader(back)); got != rec || seal != "c2VhbA==" {
				t.Errorf("ReadSentBack: %+v %q, want %+v", got, seal, rec)
			}
			if _, ok := back[contract.AttrAccount]; ok {
				t.Error("a message sent back carries the account: the router reads it from the body")
			}
			for _, attrs := range []map[string]types.MessageAttributeValue{kept, back} {
				for k, v := range attrs {
					if aws.ToString(v.StringValue) == "" {
						t.Errorf("%s is empty: SQS refuses an empty value", k)
					}
				}
			}
			for k, attrs := range map[string]map[string]types.MessageAttributeValue{contract.AttrSent: kept, contract.AttrFirstSent: back} {
				want := map[string]string{"1763726400000": "Number", "yesterday": "String"}[rec.FirstSent]
				if got := aws.ToString(attrs[k].DataType); got != want {
					t.Errorf("%s travels as %q, want %q", k, got, want)
				}
			}
		})
	}
}
