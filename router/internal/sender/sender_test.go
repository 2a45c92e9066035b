package sender

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
)

const (
	hub, memberA, memberB = "111111111111", "222222222222", "333333333333"
	forwarder, redrive    = "kib-forward-eu-west-1", "kib-redrive-eu-west-1"
	idA, idB, idRedrive   = "AROAFORWARDERA000001", "AROAFORWARDERB000001", "AROAREDRIVE000000001"
	idHub                 = "AROAFORWARDERHUB0001"
)

// fakeIAM answers GetRole from a table per account, counting calls; errs per account replace the answer. Every role
// was created at created unless born says otherwise.
type fakeIAM struct {
	mu    sync.Mutex
	ids   map[string]string    // "<account>/<name>" -> role ID
	born  map[string]time.Time // "<account>/<name>" -> CreateDate
	errs  map[string]error     // account -> error
	calls map[string]int       // "<account>/<name>" -> GetRole calls
}

// created is when the fake's roles were created: before every message of the tests but those that say otherwise.
var created = time.Unix(0, 0)

func newIAM() *fakeIAM {
	return &fakeIAM{
		ids: map[string]string{
			memberA + "/" + forwarder: idA, memberB + "/" + forwarder: idB, hub + "/" + forwarder: idHub, hub + "/" + redrive: idRedrive,
		},
		born:  map[string]time.Time{},
		errs:  map[string]error{},
		calls: map[string]int{},
	}
}

type accountIAM struct {
	f       *fakeIAM
	account string
}

func (c accountIAM) GetRole(_ context.Context, in *iam.GetRoleInput, _ ...func(*iam.Options)) (*iam.GetRoleOutput, error) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	key := c.account + "/" + aws.ToString(in.RoleName)
	c.f.calls[key]++
	if err := c.f.errs[c.account]; err != nil {
		return nil, err
	}
	id, ok := c.f.ids[key]
	if !ok {
		return nil, &types.NoSuchEntityException{Message: aws.String("The role with name " + aws.ToString(in.RoleName) + " cannot be found.")}
	}
	born, ok := c.f.born[key]
	if !ok {
		born = created
	}
	return &iam.GetRoleOutput{Role: &types.Role{RoleId: aws.String(id), RoleName: in.RoleName, CreateDate: aws.Time(born)}}, nil
}

// set creates role key anew, at when.
func (f *fakeIAM) set(key, id string, when time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids[key], f.born[key] = id, when
}

func (f *fakeIAM) fail(account string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[account] = err
}

func (f *fakeIAM) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newChecker(f *fakeIAM, c *clock) *Checker {
	return New(Options{
		Hub: hub, RedriveRole: redrive,
		ForwarderRole: func(account string) string {
			if account == memberA || account == memberB || account == hub {
				return "arn:aws:iam::" + account + ":role/" + forwarder
			}
			return ""
		},
		IAM:       func(account string) (RoleGetter, error) { return accountIAM{f, account}, nil },
		CacheSize: 100, TTL: time.Hour, NegativeTTL: time.Minute, Now: c.now,
	})
}

func session(id string) string { return id + ":events-session" }

// check decides one message of sender naming account (on the bus), sent at sent.
func check(ch *Checker, account, sender string, sent time.Time) Result {
	return ch.Check(context.Background(), account, true, []Message{{Sender: sender, Sent: sent}})[0]
}

// TestCheck: each sender naming each account gets the verdict IAM's answers prove, in either mode of the hub's
// delivery.
func TestCheck(t *testing.T) {
	tests := []struct {
		name, account, sender string
		byPolicy              bool // the hub's rules deliver through the central queue's policy
		want                  Verdict
		why                   string // in the error
	}{
		{"a member's own forwarder", memberA, session(idA), false, Genuine, ""},
		{"another member's forwarder", memberB, session(idA), false, Forged, "its forwarder " + forwarder},
		{"a member's forwarder naming the hub", hub, session(idA), false, Forged, "may not speak for account " + hub},
		{"the hub's forwarder (its rules) naming the hub", hub, session(idHub), false, Genuine, ""},
		{"the hub's forwarder naming a member", memberA, session(idHub), false, Forged, "may not speak for account " + memberA},
		{"the redrive role, unsealed, naming the hub", hub, session(idRedrive), false, Unsealed, "carries no seal"},
		{"the redrive role, unsealed, naming a member", memberA, session(idRedrive), false, Unsealed, "carries no seal"},
		{"an unknown role naming a member", memberA, session("AROAUNKNOWN000000001"), false, Forged, "was " + idA},
		{"an unknown role naming an account without a forwarder", "444444444444", session("AROAUNKNOWN000000001"), false, Unattributable, "no role is account 444444444444's forwarder"},
		{"no sender", memberA, "", false, Unattributable, "no SenderId"},
		{"a sender that is no role naming the hub", hub, "AIDAEVENTBRIDGE00001", false, Forged, "its forwarder " + forwarder},
		{"a sender that is no role naming a member", memberA, "AIDAEVENTBRIDGE00001", false, Forged, "may not speak"},
		{"a role's ID without a session", memberA, idA, false, Forged, "may not speak"},
		{"a user-looking ID with a session", memberA, "AIDAUSER:x", false, Forged, "may not speak"},
		{"by policy: a sender that is no role naming the hub", hub, "AIDAEVENTBRIDGE00001", true, Genuine, ""},
		{"by policy: a sender that is no role naming a member", memberA, "AIDAEVENTBRIDGE00001", true, Forged, "may not speak"},
		{"by policy: the hub's forwarder, while it exists", hub, session(idHub), true, Genuine, ""},
		{"by policy: a member's forwarder naming the hub", hub, session(idA), true, Forged, "may not speak for account " + hub},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChecker(newIAM(), &clock{time.Unix(10, 0)}) // the roles were created at 0
			c.opts.HubByPolicy = tt.byPolicy
			res := c.Check(context.Background(), tt.account, true, []Message{{Sender: tt.sender}})[0]
			if res.Verdict != tt.want {
				t.Fatalf("verdict %d (%v), want %d", res.Verdict, res.Err, tt.want)
			}
			if tt.why != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tt.why)) {
				t.Errorf("error %v, want it to say %q", res.Err, tt.why)
			}
			if tt.want != Genuine && tt.sender != "" && !strings.Contains(res.Err.Error(), tt.sender) {
				t.Errorf("error %v does not name the sender %s", res.Err, tt.sender)
			}
			if redriven := tt.sender == session(idRedrive); res.Sender != tt.sender || res.Requeued != redriven {
				t.Errorf("judged sender %q (requeued %t), want the message's own, %q (requeued %t)", res.Sender, res.Requeued, tt.sender, redriven)
			}
		})
	}
}

// TestProvenOrUnattributable: a sender that differs from the account's forwarder is a proven forgery only when that
// forwarder, as IAM gives it now, was created before the message was sent; a message sent before it was created (by
// the role it replaced, or by anyone) is unattributable.
func TestProvenOrUnattributable(t *testing.T) {
	f, c := newIAM(), &clock{time.Unix(5000, 0)}
	const recreated = "AROAFORWARDERA000002"
	f.set(memberA+"/"+forwarder, recreated, time.Unix(4000, 0))
	ch := newChecker(f, c)
	for _, tt := range []struct {
		name   string
		sender string
		sent   time.Time
		want   Verdict
		why    string
	}{
		{"the old forwarder, before the new one was created", session(idA), time.Unix(3999, 0), Unattributable, "created 1970-01-01T01:06:40Z, after the message was sent"},
		{"the old forwarder, after the new one was created", session(idA), time.Unix(4001, 0), Forged, "was " + recreated + ", created 1970-01-01T01:06:40Z"},
		{"within the second the new one was created", session(idA), time.Unix(4000, 999e6), Unattributable, "after the message was sent"},
		{"the second after", session(idA), time.Unix(4001, 0), Forged, "was " + recreated},
		{"the new forwarder", session(recreated), time.Unix(4001, 0), Genuine, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := check(ch, memberA, tt.sender, tt.sent)
			if res.Verdict != tt.want || (tt.why != "" && !strings.Contains(res.Err.Error(), tt.why)) {
				t.Errorf("verdict %d, %v; want %d saying %q", res.Verdict, res.Err, tt.want, tt.why)
			}
		})
	}
}

// TestTiedToAnotherAccount: a forwarder's ID, once IAM gave it for its account, is that account's for good: naming
// another account (on the bus or not, its forwarder readable or not) is a proven forgery, even once the role is gone.
// A sender tied to no account, naming an account not on the bus, is kept as not on the bus.
func TestTiedToAnotherAccount(t *testing.T) {
	f, c := newIAM(), &clock{time.Unix(5000, 0)}
	ch := newChecker(f, c)
	const joining = "444444444444"
	unknown := ch.Check(context.Background(), joining, false, []Message{{Sender: session(idA), Sent: c.t}})[0]
	if unknown.Verdict != NotOnBus || !strings.Contains(unknown.Err.Error(), "not on the bus") {
		t.Fatalf("A's forwarder, not yet learned, naming an account not on the bus: verdict %d, %v; want not on the bus", unknown.Verdict, unknown.Err)
	}
	if r := check(ch, memberA, session(idA), c.t); r.Verdict != Genuine {
		t.Fatalf("A's own event: %v", r.Err)
	}
	f.mu.Lock()
	delete(f.ids, memberA+"/"+forwarder) // gone since: the tie holds
	f.mu.Unlock()
	for _, tt := range []struct {
		account string
		onBus   bool
	}{{joining, false}, {memberB, true}, {hub, true}} {
		r := ch.Check(context.Background(), tt.account, tt.onBus, []Message{{Sender: session(idA), Sent: c.t.Add(-time.Hour)}})[0]
		if r.Verdict != Forged || !strings.Contains(r.Err.Error(), "is account "+memberA+"'s forwarder") {
			t.Errorf("A's forwarder naming %s (on the bus %t): verdict %d, %v; want forged, tied to A", tt.account, tt.onBus, r.Verdict, r.Err)
		}
	}
	if r := ch.Check(context.Background(), joining, false, []Message{{Sender: session("AROAUNKNOWN000000001")}})[0]; r.Verdict != NotOnBus {
		t.Errorf("an unknown role naming an account not on the bus: verdict %d, %v; want not on the bus", r.Verdict, r.Err)
	}
}

// requeued is a message the redrive role sent back, sealed, kept for a reason one may vouch for, saying first sender
// first, sent at sent.
func requeued(first string, sent time.Time, fromDLQ bool, vouch string) Message {
	return Message{Sender: session(idRedrive), Sent: time.Unix(9000, 0), Requeue: Requeue{FirstSender: first, FirstSent: sent, FromDLQ: fromDLQ, Vouch: vouch,
		Sealed: true, Vouchable: true}}
}

// with is m with its Requeue changed by f.
func with(m Message, f func(r *Requeue)) Message {
	f(&m.Requeue)
	return m
}

// TestWhatIsSentBackIsJudgedByWhoFirstSentIt: a message the redrive role sent back is judged by the first sender it
// carries, never by the redrive role: genuine, delivered; a proven forgery, refused again, vouched for or not; an
// unattributable one, delivered only when vouched for; an event planted before its account joined is not that
// account's; what the dead-letter queue held is never proven forged, and one that is no role naming the hub is
// EventBridge's own delivery of the stack's rules.
func TestWhatIsSentBackIsJudgedByWhoFirstSentIt(t *testing.T) {
	const joining = "444444444444"
	old := time.Unix(100, 0)
	tests := []struct {
		name    string
		account string
		msg     Message
		want    Verdict
		vouched bool
		why     string
	}{
		{"a genuine first sender", memberA, requeued(session(idA), time.Unix(8000, 0), false, ""), Genuine, false, ""},
		{"a proven forgery", memberB, requeued(session(idA), time.Unix(8000, 0), false, ""), Forged, false, "its forwarder"},
		{"a proven forgery, vouched for", memberB, requeued(session(idA), time.Unix(8000, 0), false, contract.VouchEvent), Forged, false, "its forwarder"},
		{"the old forwarder, before the new one", memberA, requeued(session("AROAOLDA000000000001"), old, false, ""), Unattributable, false, "after the message was sent"},
		{"the old forwarder, vouched for by event", memberA, requeued(session("AROAOLDA000000000001"), old, false, contract.VouchEvent), Genuine, true, ""},
		{"the old forwarder, vouched for by sender", memberA, requeued(session("AROAOLDA000000000001"), old, false, contract.VouchSender), Genuine, true, ""},
		{"no first sender", memberA, requeued("", time.Time{}, false, ""), Unattributable, false, "no SenderId"},
		{"no first sender, vouched for", memberA, requeued("", time.Time{}, false, contract.VouchEvent), Genuine, true, ""},
		{"the redrive role as its own first sender", memberA, requeued(session(idRedrive), old, false, ""), Unsealed, false, "redrive role itself"},
		{"unsealed: a made-up first sender", memberB, with(requeued(session(idB), time.Unix(8000, 0), false, ""), func(r *Requeue) {
			r.Sealed, r.Unsealed = false, errors.New("its seal does not verify")
		}), Unsealed, false, "its seal does not verify"},
		{"unsealed, vouched for", memberA, with(requeued(session("AROAOLDA000000000001"), old, false, contract.VouchEvent), func(r *Requeue) { r.Sealed = false }),
			Unsealed, false, "carries no seal"},
		{"a seal that cannot be checked now", memberA, with(requeued(session(idA), time.Unix(8000, 0), false, ""), func(r *Requeue) {
			r.Sealed, r.Unverified = false, errors.New("kms:GetPublicKey throttled")
		}), Undecided, false, "throttled"},
		{"sealed for a reason no vouch applies to, vouched for", memberA, with(requeued(session("AROAOLDA000000000001"), old, false, contract.VouchEvent),
			func(r *Requeue) { r.Vouchable = false }), Unattributable, false, "after the message was sent"},
		{"no first send time", memberA, requeued(session("AROAOLDA000000000001"), time.Time{}, false, ""), Unattributable, false, "after the message was sent"},
		{"planted before its account joined", joining, requeued(session(idB), old, false, ""), Unattributable, false, "after the message was sent"},
		{"from the DLQ: no role, the hub's", hub, requeued("AIDAEVENTBRIDGE00001", time.Unix(8000, 0), true, ""), Genuine, false, ""},
		{"from the DLQ: no role, a member's", memberA, requeued("AIDAEVENTBRIDGE00001", time.Unix(8000, 0), true, ""), Unattributable, false, "dead-letter queue"},
		{"from the DLQ: another role", memberA, requeued(session("AROAOLDA000000000001"), time.Unix(8000, 0), true, ""), Unattributable, false, "dead-letter queue"},
		{"from the DLQ: the genuine forwarder", memberA, requeued(session(idA), time.Unix(8000, 0), true, ""), Genuine, false, ""},
		{"not from the DLQ: no role, the hub's", hub, requeued("AIDAEVENTBRIDGE00001", time.Unix(8000, 0), false, ""), Forged, false, "its forwarder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newIAM()
			f.set(memberA+"/"+forwarder, idA, time.Unix(1000, 0))                    // created after old
			f.set(joining+"/"+forwarder, "AROAJOINING000000001", time.Unix(1000, 0)) // the joining account's, created when it joined
			ch := newChecker(f, &clock{time.Unix(9000, 0)})
			ch.opts.ForwarderRole = func(account string) string { return "arn:aws:iam::" + account + ":role/" + forwarder }
			r := ch.Check(context.Background(), tt.account, true, []Message{tt.msg})[0]
			if r.Verdict != tt.want || r.Vouched != tt.vouched {
				t.Fatalf("verdict %d (vouched %t), %v; want %d (vouched %t)", r.Verdict, r.Vouched, r.Err, tt.want, tt.vouched)
			}
			if tt.why != "" && !strings.Contains(r.Err.Error(), tt.why) {
				t.Errorf("error %v, want it to say %q", r.Err, tt.why)
			}
			if !r.Requeued || r.FromDLQ != (tt.msg.Requeue.FromDLQ && tt.msg.Requeue.Sealed) {
				t.Errorf("requeued %t, from the DLQ %t; want true, %t", r.Requeued, r.FromDLQ, tt.msg.Requeue.FromDLQ)
			}
			if tt.msg.Requeue.Sealed && tt.msg.Requeue.FirstSender != "" && r.Sender != tt.msg.Requeue.FirstSender {
				t.Errorf("judged sender %q, want the first sender %q", r.Sender, tt.msg.Requeue.FirstSender)
			}
		})
	}
}

// TestFirstSenderIsHonouredOnlyFromTheRedriveRole: any sender may set message attributes: a first sender carried by
// a message that the redrive role did not send changes nothing.
func TestFirstSenderIsHonouredOnlyFromTheRedriveRole(t *testing.T) {
	ch := newChecker(newIAM(), &clock{time.Unix(9000, 0)})
	m := Message{Sender: session(idA), Sent: time.Unix(8000, 0), Requeue: Requeue{FirstSender: session(idB), FirstSent: time.Unix(8000, 0), Vouch: contract.VouchSender}}
	r := ch.Check(context.Background(), memberB, true, []Message{m})[0]
	if r.Verdict != Forged || r.Requeued || r.Sender != session(idA) {
		t.Errorf("A's forwarder claiming B's as first sender: verdict %d, requeued %t, sender %s; want forged, judged as A's", r.Verdict, r.Requeued, r.Sender)
	}
}

// TestRoleIDsAreCachedAndRelearned: a role ID is asked once; a sender that differs from it is refused on an answer
// IAM gave after the message was sent, and otherwise retried until IAM is asked again, at most once per Recheck:
// a forwarder created anew is learned without one of its messages refused, and forgeries cost at most one GetRole
// per Recheck.
func TestRoleIDsAreCachedAndRelearned(t *testing.T) {
	f, c := newIAM(), &clock{time.Unix(1000, 0)}
	ch := newChecker(f, c)
	keyA := memberA + "/" + forwarder
	for range 3 {
		if r := check(ch, memberA, session(idA), c.t); r.Verdict != Genuine {
			t.Fatalf("A's forwarder: %v", r.Err)
		}
	}
	if n := f.count(keyA); n != 1 {
		t.Fatalf("%d GetRole calls for three checks, want 1", n)
	}
	// Forgeries sent before the answer: refused on it, without another call.
	for range 5 {
		if r := check(ch, memberA, session(idB), c.t.Add(-time.Second)); r.Verdict != Forged {
			t.Fatalf("B's forwarder naming A, sent before the answer: verdict %d, %v", r.Verdict, r.Err)
		}
	}
	if n := f.count(keyA); n != 1 {
		t.Errorf("%d GetRole calls after forgeries older than the answer, want still 1", n)
	}
	// A's forwarder is deleted and created again: its first message, sent after the answer, is not refused but
	// retried until IAM may be asked again, then forwarded.
	const recreated = "AROAFORWARDERA000002"
	f.set(keyA, recreated, c.t.Add(time.Second))
	c.t = c.t.Add(2 * time.Second)
	if r := check(ch, memberA, session(recreated), c.t); r.Verdict != Undecided || !errors.Is(r.Err, errNotYet) {
		t.Fatalf("the re-created forwarder within %s of the answer: verdict %d, %v; want undecided, not yet", DefaultRecheck, r.Verdict, r.Err)
	}
	if n := f.count(keyA); n != 1 {
		t.Errorf("%d GetRole calls within %s of the answer, want still 1", n, DefaultRecheck)
	}
	sent := c.t
	c.t = c.t.Add(DefaultRecheck)
	if r := check(ch, memberA, session(recreated), sent); r.Verdict != Genuine {
		t.Fatalf("the re-created forwarder's message on redelivery: verdict %d, %v", r.Verdict, r.Err)
	}
	if n := f.count(keyA); n != 2 {
		t.Errorf("%d GetRole calls, want 2 (asked once more)", n)
	}
	// The old ID, sent before the new answer, is now a forgery; a forgery sent after it waits for a fresh answer.
	if r := check(ch, memberA, session(idA), sent); r.Verdict != Forged {
		t.Errorf("the deleted role's ID: verdict %d", r.Verdict)
	}
	c.t = c.t.Add(time.Second)
	if r := check(ch, memberA, session(idB), c.t); r.Verdict != Undecided {
		t.Errorf("a forgery sent after the answer, within %s of it: verdict %d, want undecided", DefaultRecheck, r.Verdict)
	}
	c.t = c.t.Add(DefaultRecheck)
	if r := check(ch, memberA, session(idB), c.t.Add(-DefaultRecheck)); r.Verdict != Forged {
		t.Errorf("the same forgery once IAM may be asked again: verdict %d, %v", r.Verdict, r.Err)
	}
	if n := f.count(keyA); n != 3 {
		t.Errorf("%d GetRole calls, want 3", n)
	}
}

func apiError(code string) error { return &smithy.GenericAPIError{Code: code, Message: "stub"} }

// TestFailuresAreNotForgeries: IAM or STS failing leaves the sender undecided (the message is retried), a reader
// role STS refuses takes the account off the bus (remembered), a missing forwarder makes every sender unattributable.
func TestFailuresAreNotForgeries(t *testing.T) {
	assumeDenied := &smithy.OperationError{ServiceID: "IAM", OperationName: "GetRole", Err: &smithy.OperationError{
		ServiceID: "STS", OperationName: "AssumeRole", Err: apiError("AccessDenied"),
	}}
	tests := []struct {
		name        string
		err         error
		drop        bool // the forwarder does not exist
		want        Verdict
		unknown     bool
		callsTwice  int // GetRole calls after two checks
		errContains string
	}{
		{"throttled", apiError("Throttling"), false, Undecided, false, 2, "Throttling"},
		{"the reader may not read the forwarder", apiError("AccessDenied"), false, Undecided, false, 2, "update the account's baseline"},
		{"the reader role refused", assumeDenied, false, NotOnBus, true, 1, "cannot be assumed"},
		{"no forwarder in the account", nil, true, Unattributable, false, 1, "has no forwarder role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newIAM()
			if tt.err != nil {
				f.fail(memberA, tt.err)
			}
			if tt.drop {
				delete(f.ids, memberA+"/"+forwarder)
			}
			ch := newChecker(f, &clock{time.Unix(0, 0)})
			var r Result
			for range 2 {
				r = check(ch, memberA, session(idA), time.Time{})
			}
			if r.Verdict != tt.want || errors.Is(r.Err, accounts.ErrUnknownAccount) != tt.unknown {
				t.Fatalf("verdict %d, error %v; want verdict %d, unknown account %t", r.Verdict, r.Err, tt.want, tt.unknown)
			}
			if !strings.Contains(r.Err.Error(), tt.errContains) {
				t.Errorf("error %v, want it to say %q", r.Err, tt.errContains)
			}
			if n := f.count(memberA + "/" + forwarder); n != tt.callsTwice {
				t.Errorf("%d GetRole calls after two checks, want %d", n, tt.callsTwice)
			}
		})
	}
}

// TestOneGetRolePerRoleAtOnce: concurrent checks of one account's senders ask IAM once.
func TestOneGetRolePerRoleAtOnce(t *testing.T) {
	f := newIAM()
	ch := newChecker(f, &clock{time.Unix(0, 0)})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { check(ch, memberA, session(idA), time.Time{}) })
	}
	wg.Wait()
	if n := f.count(memberA + "/" + forwarder); n != 1 {
		t.Errorf("%d GetRole calls for 20 concurrent checks, want 1", n)
	}
}

func TestRoleID(t *testing.T) {
	for sender, want := range map[string]string{
		"AROAIL6GAI2XEC672SWG2:awslambda_39": "AROAIL6GAI2XEC672SWG2", "AROAX:i-0123": "AROAX",
		"AIDAIT2UOQQY3AUEKVGXU": "", "AROAX": "", "AROA:x": "", "AROAX:": "", "": "", "123456789012": "",
	} {
		id, ok := RoleID(sender)
		if ok != (want != "") || (ok && id != want) {
			t.Errorf("RoleID(%q) = %q, %t; want %q", sender, id, ok, want)
		}
	}
}

// TestNegativeRecheckAsksAgainAtOnce: with a negative Recheck (observe mode), a sender that differs from an answer
// older than its message is decided at once on a new answer, never left undecided.
func TestNegativeRecheckAsksAgainAtOnce(t *testing.T) {
	f, c := newIAM(), &clock{time.Unix(1000, 0)}
	ch := newChecker(f, c)
	ch.opts.Recheck = -1
	if r := check(ch, memberA, session(idA), c.t); r.Verdict != Genuine {
		t.Fatalf("A's forwarder: %v", r.Err)
	}
	c.t = c.t.Add(time.Second)
	if r := check(ch, memberA, session(idB), c.t); r.Verdict != Forged {
		t.Errorf("a forgery sent after the answer: verdict %d, %v; want forged at once", r.Verdict, r.Err)
	}
	if n := f.count(memberA + "/" + forwarder); n != 2 {
		t.Errorf("%d GetRole calls, want 2", n)
	}
}

// TestEveryCandidateIsTried: a role that cannot be read now (IAM failing in the member) does not stop the redrive
// role, read in the hub, from being recognised: a message it sends back is judged by its first sender (undecided
// while A's forwarder cannot be read), and one with no seal is unsealed, not left undecided.
func TestEveryCandidateIsTried(t *testing.T) {
	f := newIAM()
	f.fail(memberA, apiError("ServiceUnavailable"))
	ch := newChecker(f, &clock{time.Unix(1000, 0)})
	if r := check(ch, memberA, session(idRedrive), time.Unix(999, 0)); r.Verdict != Unsealed || !r.Requeued {
		t.Errorf("the redrive role naming A, with no seal, while A's forwarder cannot be read: verdict %d, %v; want unsealed", r.Verdict, r.Err)
	}
	r := ch.Check(context.Background(), memberA, true, []Message{requeued(session(idA), time.Unix(900, 0), false, "")})[0]
	if r.Verdict != Undecided || !r.Requeued {
		t.Errorf("sent back, first sent by A's forwarder, which cannot be read: verdict %d, %v; want undecided", r.Verdict, r.Err)
	}
	if r := check(ch, memberA, session(idB), time.Unix(999, 0)); r.Verdict != Undecided {
		t.Errorf("another role naming A while A's forwarder cannot be read: verdict %d, %v; want undecided", r.Verdict, r.Err)
	}
}

// TestRecheckCountsFromIAMsAnswer: the least time between two GetRole calls runs from IAM's last answer, not from
// the message: a forwarder created anew whose first message comes half an hour after the cached answer is learned at
// once, its message forwarded, not retried for SENDER_ROLE_RECHECK.
func TestRecheckCountsFromIAMsAnswer(t *testing.T) {
	f, c := newIAM(), &clock{time.Unix(10000, 0)}
	ch := newChecker(f, c)
	if r := check(ch, memberA, session(idA), c.t); r.Verdict != Genuine {
		t.Fatalf("A's forwarder: %v", r.Err)
	}
	const recreated = "AROAFORWARDERA000002"
	f.set(memberA+"/"+forwarder, recreated, c.t.Add(time.Minute))
	c.t = c.t.Add(30 * time.Minute)
	if r := check(ch, memberA, session(recreated), c.t.Add(-time.Second)); r.Verdict != Genuine {
		t.Errorf("the re-created forwarder's message, sent a second ago, the answer 30 min old: verdict %d, %v; want genuine at once", r.Verdict, r.Err)
	}
}

// TestAMissingRoleForgetsItsID: a role IAM says is gone loses its remembered ID at once: its old ID no longer speaks
// for the account (nor does anyone: unattributable), and once it is created again its new ID does, as soon as IAM may be asked again.
func TestAMissingRoleForgetsItsID(t *testing.T) {
	f, c := newIAM(), &clock{time.Unix(10000, 0)}
	ch := newChecker(f, c)
	key := memberA + "/" + forwarder
	if r := check(ch, memberA, session(idA), c.t); r.Verdict != Genuine {
		t.Fatalf("A's forwarder: %v", r.Err)
	}
	// Deleted: a message of another role, sent after the answer, makes IAM be asked again, which says it is gone.
	f.mu.Lock()
	delete(f.ids, key)
	f.mu.Unlock()
	c.t = c.t.Add(DefaultRecheck)
	if r := check(ch, memberA, session(idB), c.t); r.Verdict != Unattributable || !strings.Contains(r.Err.Error(), "has no forwarder role") {
		t.Fatalf("another role once A's forwarder is gone: verdict %d, %v; want unattributable: nothing speaks for A", r.Verdict, r.Err)
	}
	gone := c.t
	c.t = c.t.Add(time.Second)
	if r := check(ch, memberA, session(idA), gone.Add(time.Millisecond)); r.Verdict == Genuine {
		t.Errorf("the deleted role's old ID, sent after IAM said it is gone, is still accepted")
	}
	// Created again, with a new ID: learned once IAM may be asked again.
	const recreated = "AROAFORWARDERA000002"
	f.set(key, recreated, c.t)
	c.t = c.t.Add(DefaultRecheck)
	if r := check(ch, memberA, session(recreated), c.t); r.Verdict != Genuine {
		t.Errorf("the re-created forwarder: verdict %d, %v; want genuine", r.Verdict, r.Err)
	}
}

// TestAFormerForwarderSpeaksForWhatItSentWhileItStood: an ID IAM once gave for the account's forwarder was that
// forwarder for the role's whole life: a message it sent before IAM last named it is genuine after the role was
// created anew; one it sent later, once the new forwarder stands, is proven forged (it cannot be the forwarder then).
func TestAFormerForwarderSpeaksForWhatItSentWhileItStood(t *testing.T) {
	f, c := newIAM(), &clock{time.Unix(5000, 0)}
	ch := newChecker(f, c)
	if r := check(ch, memberA, session(idA), time.Unix(4000, 0)); r.Verdict != Genuine {
		t.Fatalf("A's forwarder: %v", r.Err)
	}
	const recreated = "AROAFORWARDERA000002"
	f.set(memberA+"/"+forwarder, recreated, time.Unix(6000, 0))
	c.t = time.Unix(7000, 0)
	if r := check(ch, memberA, session(recreated), time.Unix(6500, 0)); r.Verdict != Genuine {
		t.Fatalf("the new forwarder: %v", r.Err)
	}
	if r := check(ch, memberA, session(idA), time.Unix(4500, 0)); r.Verdict != Genuine {
		t.Errorf("the former forwarder's message, sent before IAM last named it: verdict %d, %v; want genuine", r.Verdict, r.Err)
	}
	if r := check(ch, memberA, session(idA), time.Unix(6500, 0)); r.Verdict != Forged {
		t.Errorf("the former forwarder's message, sent once the new one stood: verdict %d, %v; want forged", r.Verdict, r.Err)
	}
	if r := ch.Check(context.Background(), memberA, false, []Message{{Sender: session(idA), Sent: time.Unix(4500, 0)}})[0]; r.Verdict != NotOnBus {
		t.Errorf("the account's own forwarder, the account off the bus: verdict %d, want not on the bus", r.Verdict)
	}
}

// TestARedriveRoleCreatedAnewIsLearned: the redrive role deleted and created again (a new ID) is learned once IAM may
// be asked again, and what it sends back is judged by its first sender, not taken for another role.
func TestARedriveRoleCreatedAnewIsLearned(t *testing.T) {
	f, c := newIAM(), &clock{time.Unix(5000, 0)}
	ch := newChecker(f, c)
	if r := ch.Check(context.Background(), memberA, true, []Message{requeued(session(idA), time.Unix(4000, 0), false, "")})[0]; r.Verdict != Genuine || !r.Requeued {
		t.Fatalf("sent back by the redrive role: %d, %v", r.Verdict, r.Err)
	}
	const fresh = "AROAREDRIVE000000002"
	f.set(hub+"/"+redrive, fresh, time.Unix(5500, 0))
	c.t = time.Unix(6000, 0)
	m := Message{Sender: session(fresh), Sent: time.Unix(5900, 0), Requeue: Requeue{FirstSender: session(idA), FirstSent: time.Unix(4000, 0), Sealed: true}}
	if r := ch.Check(context.Background(), memberA, true, []Message{m})[0]; r.Verdict != Genuine || !r.Requeued || r.Sender != session(idA) {
		t.Errorf("sent back by the redrive role created anew: verdict %d (requeued %t, sender %s), %v; want genuine, judged by its first sender", r.Verdict, r.Requeued, r.Sender, r.Err)
	}
}

// TestOnlyAccessDeniedBlamesTheBaseline: IAM refusing the reader role (AccessDenied, AccessDeniedException) says to
// update the account's baseline; any other failure does not.
func TestOnlyAccessDeniedBlamesTheBaseline(t *testing.T) {
	for code, blames := range map[string]bool{"AccessDenied": true, "AccessDeniedException": true, "Throttling": false, "ServiceUnavailable": false} {
		f := newIAM()
		f.fail(memberA, apiError(code))
		r := check(newChecker(f, &clock{time.Unix(10, 0)}), memberA, session(idA), time.Time{})
		if r.Verdict != Undecided || strings.Contains(r.Err.Error(), "update the account's baseline") != blames {
			t.Errorf("%s: verdict %d, %v; want undecided, blaming the baseline %t", code, r.Verdict, r.Err, blames)
		}
	}
}

// TestIsRedrive: only a session of the hub's redrive role, as IAM gives it, is the redrive role; a router with no
// redrive role has none; IAM failing is an error, not a no.
func TestIsRedrive(t *testing.T) {
	ctx := context.Background()
	ch := newChecker(newIAM(), &clock{time.Unix(9000, 0)})
	for s, want := range map[string]bool{session(idRedrive): true, session(idA): false, "AIDAUSER0000000000001": false, idRedrive: false} {
		if got, err := ch.IsRedrive(ctx, s, time.Unix(8000, 0)); got != want || err != nil {
			t.Errorf("%s: %t, %v; want %t", s, got, err, want)
		}
	}
	none := newChecker(newIAM(), &clock{time.Unix(9000, 0)})
	none.opts.RedriveRole = ""
	if got, _ := none.IsRedrive(ctx, session(idRedrive), time.Time{}); got {
		t.Error("a router with no redrive role took a sender for it")
	}
	f := newIAM()
	f.fail(hub, apiError("ServiceUnavailable"))
	if got, err := newChecker(f, &clock{time.Unix(9000, 0)}).IsRedrive(ctx, session(idRedrive), time.Time{}); got || err == nil {
		t.Errorf("IAM failing: %t, %v; want an error", got, err)
	}
}
