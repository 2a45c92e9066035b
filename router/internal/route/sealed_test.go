package route

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// roles answers GetRole for one account from a table of role name -> ID, every role created at born.
type roles struct {
	ids  map[string]string
	born time.Time
}

func (r roles) GetRole(_ context.Context, in *iam.GetRoleInput, _ ...func(*iam.Options)) (*iam.GetRoleOutput, error) {
	id, ok := r.ids[aws.ToString(in.RoleName)]
	if !ok {
		return nil, &iamtypes.NoSuchEntityException{Message: aws.String("no such role")}
	}
	return &iam.GetRoleOutput{Role: &iamtypes.Role{RoleId: aws.String(id), RoleName: in.RoleName, CreateDate: aws.Time(r.born)}}, nil
}

const (
	fwdName, redriveName = "kib-forward", "kib-redrive"
	idHubFwd, idAFwd     = "AROAHUBFORWARDER0001", "AROAMEMBERAFORWARDER"
	idBFwd, idRedrive    = "AROAMEMBERBFORWARDER", "AROAREDRIVEROLE00001"
)

// seals seals with a P-256 key of the test's own, as the router's KMS key does (sealing.Sealer's signatures), and
// verifies with sealing.Verify; err, when set, is what Verify answers instead (the public key could not be read).
type seals struct {
	key *ecdsa.PrivateKey
	err error
}

func newSeals(t *testing.T) *seals {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &seals{key: k}
}

func (s *seals) Verify(_ context.Context, rec sealing.Record, seal string) error {
	if s.err != nil {
		return s.err
	}
	return sealing.Verify(&s.key.PublicKey, rec, seal)
}

func (s *seals) seal(rec sealing.Record) string {
	sig, err := ecdsa.SignASN1(rand.Reader, s.key, rec.Digest())
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// sentBack are the attributes make requeue sends body back with: kept for reason, first sent by first at firstSent,
// first refused as message orig, sealed with s; more are attributes to add or change after sealing (an edit the
// seal does not cover), "" values removing them.
func (s *seals) sentBack(body string, reason contract.Reason, first string, firstSent time.Time, more ...string) map[string]string {
	var ev struct{ Account string }
	_ = json.Unmarshal([]byte(body), &ev)
	attrs := map[string]string{
		contract.AttrRequeuedFrom: contract.RequeuedFromQuarantine, contract.AttrFirstSender: first, contract.AttrReason: string(reason),
		contract.AttrMessageID: "orig-" + first,
	}
	if !firstSent.IsZero() {
		attrs[contract.AttrFirstSent] = strconv.FormatInt(firstSent.UnixMilli(), 10)
	}
	sealedMore := map[string]string{}
	for i := 0; i+1 < len(more); i += 2 {
		if more[i] == contract.AttrOrigin || more[i] == contract.AttrRefused {
			attrs[more[i]] = more[i+1] // sealed with the rest
			continue
		}
		sealedMore[more[i]] = more[i+1]
	}
	attrs[contract.AttrSeal] = s.seal(sealing.Record{
		BodySHA256: sealing.BodyDigest(body), Account: ev.Account, Reason: string(reason), FirstSender: first,
		FirstSent: attrs[contract.AttrFirstSent], Origin: attrs[contract.AttrOrigin], MessageID: attrs[contract.AttrMessageID],
		Refused: attrs[contract.AttrRefused],
	})
	for k, v := range sealedMore {
		if v == "" {
			delete(attrs, k)
		} else {
			attrs[k] = v
		}
	}
	return attrs
}

// judgedHarness is accountsHarness with the real sender check: each account's forwarder and the hub's redrive role
// created at born, member B's forwarder created at bBorn; sent-back messages are sealed with its seals.
func judgedHarness(t *testing.T, born, bBorn time.Time) (*harness, *fakeQuarantine) {
	t.Helper()
	hub := &fakeEC2{owners: map[string]string{instance(1): "alpha"}}
	a := &fakeEC2{owners: map[string]string{instance(2): "beta"}}
	b := &fakeEC2{owners: map[string]string{instance(3): "gamma"}}
	h := accountsHarness(t, hub, a, b, "alpha", "beta", "gamma")
	iamOf := map[string]sender.RoleGetter{
		account: roles{map[string]string{fwdName: idHubFwd, redriveName: idRedrive}, born},
		memberA: roles{map[string]string{fwdName: idAFwd}, born},
		memberB: roles{map[string]string{fwdName: idBFwd}, bBorn},
	}
	h.r.senders = sender.New(sender.Options{
		Hub: account, RedriveRole: redriveName,
		ForwarderRole: func(a string) string {
			if a == account || a == memberA || a == memberB {
				return "arn:aws:iam::" + a + ":role/" + fwdName
			}
			return ""
		},
		IAM:       func(a string) (sender.RoleGetter, error) { return iamOf[a], nil },
		CacheSize: 100, TTL: time.Hour, NegativeTTL: time.Minute, Now: h.r.now,
	})
	q := &fakeQuarantine{}
	h.r.quarantine = q
	h.seals = newSeals(t)
	h.r.seals = h.seals
	h.ledger = &fakeLedger{}
	h.r.ledger = h.ledger
	return h, q
}

// fakeLedger is the archive's ledger (archive.Archive's Claim and Delivered): a record's claim holds until its Until,
// its delivery is recorded once; err, when set, is what every claim answers instead, recordErr what every recording
// answers; stall, when set, is waited on by every call, until ctx ends.
type fakeLedger struct {
	mu        sync.Mutex
	claims    map[sealing.Record]archive.Claim
	delivered map[sealing.Record]archive.Delivery
	calls     int
	records   int
	err       error
	recordErr error
	stall     chan struct{}
}

func (f *fakeLedger) wait(ctx context.Context) error {
	if f.stall == nil {
		return nil
	}
	select {
	case <-f.stall:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeLedger) Claim(ctx context.Context, c archive.Claim) (*archive.Delivery, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	if before, ok := f.delivered[c.Record]; ok {
		return &before, nil
	}
	if held, ok := f.claims[c.Record]; ok && held.MessageID != c.MessageID && c.At.Before(held.Until) {
		return nil, fmt.Errorf("%w: message %s", archive.ErrClaimed, held.MessageID)
	}
	if f.claims == nil {
		f.claims = map[sealing.Record]archive.Claim{}
	}
	f.claims[c.Record] = c
	return nil, nil
}

func (f *fakeLedger) Delivered(ctx context.Context, d archive.Delivery) (*archive.Delivery, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records++
	if f.recordErr != nil {
		return nil, f.recordErr
	}
	if before, ok := f.delivered[d.Record]; ok {
		if before.MessageID == d.MessageID {
			return nil, nil
		}
		return &before, nil
	}
	if f.delivered == nil {
		f.delivered = map[sealing.Record]archive.Delivery{}
	}
	f.delivered[d.Record] = d
	return nil, nil
}

// record is a message of body sent by sender at sent, with message attributes attrs.
func record(body, from string, sent time.Time, attrs map[string]string) events.SQSMessage {
	rec := batch(body).Records[0]
	rec.Attributes[sender.Attribute] = from
	rec.Attributes[sender.SentAttribute] = strconv.FormatInt(sent.UnixMilli(), 10)
	rec.MessageAttributes = map[string]events.SQSMessageAttribute{}
	for k, v := range attrs {
		rec.MessageAttributes[k] = events.SQSMessageAttribute{DataType: "String", StringValue: aws.String(v)}
	}
	return rec
}
