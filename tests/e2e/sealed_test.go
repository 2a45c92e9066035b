package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// TestWhatTheRedriveRoleMakesUpReachesNoKarpenter: with a member list and with organization.id, whoever holds the
// redrive role sends the central queue, with the AWS SDK and not make requeue, what it made up: a first sender of B's
// forwarder with no seal; a vouch on a record nobody kept, with a seal made of nothing; a seal the router made for
// another body; a sealed record whose first sender was edited; a sealed record of the same body with its reason edited;
// a vouch on a sealed proven forgery. None reaches any Karpenter: each is refused and kept, in the quarantine and in the
// archive, the unsealed ones as unsealed (counted in Unsealed), the forgery as a forgery; make requeue sends none back.
// A record the router sealed as unknown_account, sent back by the redrive role, is delivered: what the router said of
// it holds.
func TestWhatTheRedriveRoleMakesUpReachesNoKarpenter(t *testing.T) {
	for _, org := range []string{"", "o-a1b2c3d4e5"} {
		t.Run(map[string]string{"": "members", "o-a1b2c3d4e5": "organization"}[org], func(t *testing.T) {
			b := sendersBus(t, org, map[string]string{})
			ctx := context.Background()
			bFwd := b.IAM.ID(memberB, harness.ForwarderRoleName) + ":events"
			aFwd := b.IAM.ID(memberA, harness.ForwarderRoleName) + ":events"
			minuteAgo := time.Now().Add(-time.Minute)
			madeUp := spotAs(memberB, bInstance, "made-up")
			vouchedNothing := spotAs(memberB, bInstance, "vouched-nothing")
			copied := spotAs(memberB, bInstance, "copied-seal")
			edited := spotAs(memberB, bInstance, "edited-sender")
			reasonEdited := spotAs(memberB, bInstance, "edited-reason")
			forgery := spotAs(memberB, bInstance, "sealed-forgery")
			genuine := spotAs(memberB, bInstance, "sealed-genuine")
			sends := []struct {
				body  string
				attrs map[string]string
			}{
				{madeUp, map[string]string{contract.AttrRequeuedFrom: contract.RequeuedFromQuarantine, contract.AttrFirstSender: bFwd,
					contract.AttrFirstSent: strconv.FormatInt(minuteAgo.UnixMilli(), 10), contract.AttrReason: string(contract.ReasonUnknownAccount)}},
				{vouchedNothing, map[string]string{contract.AttrRequeuedFrom: contract.RequeuedFromQuarantine, contract.AttrFirstSender: "AROAOLDBFORWARDER001:s",
					contract.AttrReason: string(contract.ReasonUnattributable), contract.AttrVouched: contract.VouchEvent, contract.AttrSeal: "MEUCIQ=="}},
				{copied, b.sealedBack(t, genuine, contract.ReasonUnknownAccount, bFwd, minuteAgo, "first-genuine")},
				{edited, with(b.sealedBack(t, edited, contract.ReasonUnattributable, "AROAOLDBFORWARDER001:s", minuteAgo, "first-edited"),
					contract.AttrFirstSender, bFwd)},
				{reasonEdited, with(with(b.sealedBack(t, reasonEdited, contract.ReasonDeadLettered, "AROAOLDBFORWARDER001:s", minuteAgo, "first-reason"),
					contract.AttrReason, string(contract.ReasonUnattributable)), contract.AttrVouched, contract.VouchEvent)},
				{forgery, with(b.sealedBack(t, forgery, contract.ReasonForgedSender, aFwd, minuteAgo, "first-forgery"), contract.AttrVouched, contract.VouchEvent)},
			}
			redrive := b.As(sqsemu.Account, harness.RedriveRoleName)
			for _, s := range sends {
				if err := b.PublishWith(ctx, redrive, s.attrs, s.body); err != nil {
					t.Fatal(err)
				}
			}
			b.drain()
			for _, c := range []string{"alpha", "beta", "gamma"} {
				if got := b.received(c); len(got) != 0 {
					t.Fatalf("%s received %q: the redrive role spoke for an account", c, got)
				}
			}
			kept := b.quarantined(t)
			for id, reason := range map[string]contract.Reason{"made-up": contract.ReasonUnsealed, "vouched-nothing": contract.ReasonUnsealed,
				"copied-seal": contract.ReasonUnsealed, "edited-sender": contract.ReasonUnsealed, "edited-reason": contract.ReasonUnsealed,
				"sealed-forgery": contract.ReasonForgedSender} {
				if kept[id].reason != string(reason) {
					t.Errorf("%s kept as %+v, want %s", id, kept[id], reason)
				}
			}
			if got := b.Metric(contract.MetricUnsealed, "", ""); got != 5 {
				t.Errorf("Unsealed = %v, want 5", got)
			}
			if n := len(archived(t, b)); n != 6 {
				t.Errorf("the archive holds %d records, want the 6 refusals", n)
			}
			out := b.requeueAs(t, harness.RedriveRoleName, "-send")
			if !strings.Contains(out, "6 read from the quarantine, 6 selected, sent back to the central queue: 0") {
				t.Errorf("make requeue SEND=1 said:\n%s", out)
			}
			out = b.requeueAs(t, harness.RedriveRoleName, "-event", "made-up,vouched-nothing,sealed-forgery", "-vouch", "-send")
			if !strings.Contains(out, "sent back to the central queue: 0") {
				t.Errorf("make requeue vouching for what was made up said:\n%s", out)
			}
			b.drain()
			if got := b.received("gamma"); len(got) != 0 {
				t.Fatalf("gamma received %q after make requeue", got)
			}

			if err := b.PublishWith(ctx, redrive, b.sealedBack(t, genuine, contract.ReasonUnknownAccount, bFwd, minuteAgo, "first-genuine"), genuine); err != nil {
				t.Fatal(err)
			}
			b.drain()
			if got := b.received("gamma"); len(got) != 1 || got[0] != genuine {
				t.Errorf("gamma received %q, want the record the router sealed, sent back", got)
			}
		})
	}
}

// with is attrs with k set to v, after sealing: what an edit of a sealed record looks like.
func with(attrs map[string]string, k, v string) map[string]string {
	out := maps.Clone(attrs)
	out[k] = v
	return out
}

// archived are the archive's records, by refused message ID, as the S3 that holds them (the stand-in, or moto's) has
// them.
func archived(t *testing.T, b *bus) map[string]archive.Entry {
	t.Helper()
	ctx := context.Background()
	keys, err := b.ArchiveKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]archive.Entry{}
	for _, k := range keys {
		if !strings.HasPrefix(k, archive.RefusedPrefix) {
			continue
		}
		body, err := b.ArchiveObject(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		var e archive.Entry
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatal(err)
		}
		out[e.Refused] = e
	}
	return out
}

// TestTheArchiveOutlivesTheQuarantine: every refusal the router keeps is also in the archive, once (a refusal retried because
// the quarantine failed to take it is archived once), sealed, with the seal key's public key beside it; purged,
// re-configured to keep a minute, then deleted, the quarantine loses its messages, and make requeue FROM=archive
// still lists every one, each seal verified. Nobody deletes a record: neither an administrator nor the router, with or
// without the governance bypass.
func TestTheArchiveOutlivesTheQuarantine(t *testing.T) {
	b := sendersBus(t, "", map[string]string{})
	ctx := context.Background()
	b.SQS.SetFault(harness.QuarantineQueue, &sqsemu.Fault{Status: 500, Code: "InternalError", Times: 1})
	for _, body := range []string{spotAs(memberB, bInstance, "forged-1"), spotAs(sqsemu.Account, hubInstance, "forged-2"), "not an event"} {
		if err := b.PublishAs(ctx, b.As(memberA, harness.ForwarderRoleName), body); err != nil {
			t.Fatal(err)
		}
	}
	b.drain()
	kept := b.quarantined(t)
	records := archived(t, b)
	if len(kept) != 3 || len(records) != 3 {
		t.Fatalf("kept %d, archived %d; want 3 of each, the retried ones written once", len(kept), len(records))
	}
	if keys := b.S3.Keys(harness.ArchiveBucket); !strings.HasPrefix(keys[0], archive.KeysPrefix) {
		t.Errorf("the archive's keys %v hold no public key", keys)
	}
	// What the refusals cost (docs/performance.md, "What a refusal costs"): each sealed and written once per attempt
	// (the retried ones' second writes answered 412), the public key read and archived once.
	signs, reads, puts := b.kms.Calls("Sign"), b.kms.Calls("GetPublicKey"), b.S3.Calls("PutObject")
	t.Logf("3 refusals, the quarantine failing once: %d kms:Sign, %d kms:GetPublicKey, %d s3:PutObject", signs, reads, puts)
	if signs != 6 || reads != 1 || puts != 7 {
		t.Errorf("%d Sign, %d GetPublicKey, %d PutObject; want 6 (3 refusals, each tried twice), 1, 7 (the key, then 3 and 3)", signs, reads, puts)
	}
	admin := b.SQS.Client() // an administrator of the hub: SQS would refuse the purge (the quarantine's policy); its other calls stand
	if _, err := admin.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(b.Quarantine)}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(b.Quarantine),
		Attributes: map[string]string{"MessageRetentionPeriod": "60"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteQueue(ctx, harness.QuarantineQueue); err != nil {
		t.Fatal(err)
	}
	out := b.requeueAs(t, harness.RedriveRoleName, "-from", "archive")
	if !strings.Contains(out, "3 records in the archive s3://"+harness.ArchiveBucket+", 3 selected") || strings.Count(out, "verified") != 3 {
		t.Errorf("make requeue FROM=archive said:\n%s", out)
	}
	for _, id := range []string{"forged-1", "forged-2"} {
		if !strings.Contains(out, id) {
			t.Errorf("the archive's listing does not name %s:\n%s", id, out)
		}
	}
	record := b.S3.Keys(harness.ArchiveBucket)[1]
	for who, role := range map[string]string{"an administrator": "AROAADMINISTRATOR001", "the router": b.IAM.ID(sqsemu.Account, harness.RouterRoleName)} {
		c := s3.New(s3.Options{Region: sqsemu.Region, BaseEndpoint: aws.String(b.S3.URL), Credentials: credentials.NewStaticCredentialsProvider(
			caller.SessionKey(sqsemu.Account, role, "s"), "stub", "stub")})
		for _, in := range []*s3.DeleteObjectInput{
			{Bucket: aws.String(harness.ArchiveBucket), Key: aws.String(record)},
			{Bucket: aws.String(harness.ArchiveBucket), Key: aws.String(record), VersionId: aws.String(b.S3.VersionIDs(harness.ArchiveBucket, record)[0]),
				BypassGovernanceRetention: aws.Bool(true)},
		} {
			if _, err := c.DeleteObject(ctx, in); err == nil {
				t.Errorf("%s deleted a record (version %s)", who, aws.ToString(in.VersionId))
			}
		}
	}
	if n := len(archived(t, b)); n != 3 {
		t.Errorf("the archive holds %d records after the deletes, want 3", n)
	}
}
