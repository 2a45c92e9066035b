package requeue

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// keyVerifier verifies seals with a real P-256 key, as sealing.Sealer does with the seal key's public key.
type keyVerifier struct{ key *ecdsa.PrivateKey }

func (k keyVerifier) Verify(_ context.Context, rec sealing.Record, seal string) error {
	return sealing.Verify(&k.key.PublicKey, rec, seal)
}

func (k keyVerifier) seal(t *testing.T, rec sealing.Record) string {
	t.Helper()
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, rec.Digest())
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// TestWhatIsSealedIsWhatIsReadBack: a record kept as the quarantine keeps it (sealing.Record.Kept, with a real
// signature), sent back by the command, is read by the router (sealing.ReadSentBack) as the very record that was
// sealed, and its seal verifies: for every field of the record, the dead-letter queue's origin and no send time
// included.
func TestWhatIsSealedIsWhatIsReadBack(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	v := keyVerifier{key}
	body := `{"version":"0","id":"ev-1","account":"222222222222","region":"eu-west-1"}`
	for name, rec := range map[string]sealing.Record{
		"unknown account": {Account: "222222222222", Reason: string(contract.ReasonUnknownAccount), FirstSender: "AROAFWD:s",
			FirstSent: "1763726400000", MessageID: "m-first"},
		"the DLQ's sender": {Account: "222222222222", Reason: string(contract.ReasonDeadLettered), FirstSender: "AROAOLD:s",
			FirstSent: "1763726400001", Origin: contract.OriginDLQ, MessageID: "m-dlq"},
		"no send time": {Account: "222222222222", Reason: string(contract.ReasonUnattributable), FirstSender: "AROAOLD:s", MessageID: "m-3"},
	} {
		t.Run(name, func(t *testing.T) {
			rec.BodySHA256 = sealing.BodyDigest(body)
			seal := v.seal(t, rec)
			attrs := map[string]types.MessageAttributeValue{}
			rec.Kept(attrs, seal) // what the quarantine writes (router/internal/quarantine, attributes)
			m := types.Message{MessageId: aws.String("q-1"), Body: aws.String(body), MessageAttributes: attrs,
				Attributes: map[string]string{"SenderId": "AROAROUTER0000000001:router", "SentTimestamp": "1800000000000"}}
			f := newSQS(quarantine, m)
			var w bytes.Buffer
			rep, err := Run(context.Background(), Clients{SQS: f, STS: operator, Seals: v}, stackOuts, Options{From: Quarantine, Send: true,
				Vouch: true, EventIDs: []string{"ev-1"}}, &w)
			if err != nil || rep.Sent != 1 {
				t.Fatalf("sent %d, %v; want it sent:\n%s", rep.Sent, err, w.String())
			}
			sent := f.sent[0].MessageAttributes
			got, gotSeal := sealing.ReadSentBack(aws.ToString(f.sent[0].MessageBody), "222222222222",
				func(k string) string { return aws.ToString(sent[k].StringValue) })
			if got != rec || gotSeal != seal {
				t.Errorf("read back %+v (seal %q), want %+v (seal %q)", got, gotSeal, rec, seal)
			}
			if err := v.Verify(context.Background(), got, gotSeal); err != nil {
				t.Errorf("the seal read back does not verify: %v", err)
			}
			if dt := aws.ToString(sent[contract.AttrFirstSent].DataType); rec.FirstSent != "" && dt != "Number" {
				t.Errorf("the first send time travels as %s, want Number", dt)
			}
		})
	}
}
