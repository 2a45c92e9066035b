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

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
)

const (
	hub, memberA, memberB = "111111111111", "222222222222", "333333333333"
	forwarder, redrive    = "kib-forward-eu-west-1", "kib-redrive-eu-west-1"
	idA, idB, idRedrive   = "AROAFORWARDERA000001", "AROAFORWARDERB000001", "AROAREDRIVE000000001"
	idHub                 = "AROAFORWARDERHUB0001"
)

// fakeIAM answers GetRole from a table per account, counting calls; errs per account replace the answer.
type fakeIAM struct {
	mu    sync.Mutex
	ids   map[string]string // "<account>/<name>" -> role ID
	errs  map[string]error  // account -> error
	calls map[string]int    // "<account>/<name>" -> GetRole calls
}

func newIAM() *fakeIAM {
	return &fakeIAM{
		ids: map[string]string{
			memberA + "/" + forwarder: idA, memberB + "/" + forwarder: idB, hub + "/" + forwarder: idHub, hub + "/" + redrive: idRedrive,
		},
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
	return &iam.GetRoleOutput{Role: &types.Role{RoleId: aws.String(id), RoleName: in.RoleName}}, nil
}

func (f *fakeIAM) set(key, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids[key] = id
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

// check decides one message of sender naming account, sent at sent.
func check(ch *Checker, account, sender string, sent time.Time) Result {
	return ch.Check(context.Background(), account, []Message{{Sender: sender, Sent: sent}})[0]
}

// TestCheck: each sender naming each account gets the verdict AWS's documentation makes of it.
func TestCheck(t *testing.T) {
	tests := []struct {
		name, account, sender string
		want                  Verdict
		why                   string // in the error, when forged
	}{
		{"a member's own forwarder", memberA, session(idA), Genuine, ""},
		{"another member's forwarder", memberB, session(idA), Forged, "may not speak for account " + memberB},
		{"a member's forwarder naming the hub", hub, session(idA), Forged, "only " + hub + "'s " + forwarder + " or " + hub + "'s " + redrive + " may"},
		{"the hub's forwarder (its rules) naming the hub", hub, session(idHub), Genuine, ""},
		{"the hub's forwarder naming a member", memberA, session(idHub), Forged, "may not speak for account " + memberA},
		{"the hub's redrive role naming the hub", hub, session(idRedrive), Genuine, ""},
		{"the hub's redrive role naming a member", memberA, session(idRedrive), Genuine, ""},
		{"an unknown role naming a member", memberA, session("AROAUNKNOWN000000001"), Forged, memberA + "'s " + forwarder + " or " + hub + "'s " + redrive},
		{"an unknown role naming an account without a forwarder", "444444444444", session("AROAUNKNOWN000000001"), Forged, redrive},
		{"no sender", memberA, "", Forged, "no SenderId"},
		{"a sender that is no role naming the hub", hub, "AIDAEVENTBRIDGE00001", Forged, "is not an IAM role"},
		{"a sender that is no role naming a member", memberA, "AIDAEVENTBRIDGE00001", Forged, "is not an IAM role"},
		{"a role's ID without a session", memberA, idA, Forged, "is not an IAM role"},
		{"a user-looking ID with a session", memberA, "AIDAUSER:x", Forged, "is not an IAM role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChecker(newIAM(), &clock{time.Unix(0, 0)})
			res := c.Check(context.Background(), tt.account, []Message{{Sender: tt.sender}})[0]
			if res.Verdict != tt.want {
				t.Fatalf("verdict %d (%v), want %d", res.Verdict, res.Err, tt.want)
			}
			if tt.why != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tt.why)) {
				t.Errorf("error %v, want it to say %q", res.Err, tt.why)
			}
			if tt.want == Forged && tt.sender != "" && !strings.Contains(res.Err.Error(), tt.sender) {
				t.Errorf("error %v does not name the sender %s", res.Err, tt.sender)
			}
		})
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
	f.set(keyA, recreated)
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
// role STS refuses marks the account unknown (remembered), a missing forwarder makes every role sender forged.
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
		{"the reader role refused", assumeDenied, false, Undecided, true, 1, "cannot be assumed"},
		{"no forwarder in the account", nil, true, Forged, false, 1, "may not speak"},
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

// TestEveryCandidateIsTried: a role that cannot be read now (IAM failing in the member) does not stop the next
// candidate from deciding: the redrive role, read in the hub, still speaks for the member, so a member's events
// sent back by the hub's administrators are forwarded while its forwarder cannot be read.
func TestEveryCandidateIsTried(t *testing.T) {
	f := newIAM()
	f.fail(memberA, apiError("ServiceUnavailable"))
	ch := newChecker(f, &clock{time.Unix(1000, 0)})
	if r := check(ch, memberA, session(idRedrive), time.Unix(999, 0)); r.Verdict != Genuine {
		t.Errorf("the redrive role naming A while A's forwarder cannot be read: verdict %d, %v; want genuine", r.Verdict, r.Err)
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
	f.set(memberA+"/"+forwarder, recreated)
	c.t = c.t.Add(30 * time.Minute)
	if r := check(ch, memberA, session(recreated), c.t.Add(-time.Second)); r.Verdict != Genuine {
		t.Errorf("the re-created forwarder's message, sent a second ago, the answer 30 min old: verdict %d, %v; want genuine at once", r.Verdict, r.Err)
	}
}

// TestAMissingRoleForgetsItsID: a role IAM says is gone loses its remembered ID at once: its old ID no longer speaks
// for the account, and once it is created again its new ID does, as soon as IAM may be asked again.
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
	if r := check(ch, memberA, session(idB), c.t); r.Verdict != Forged {
		t.Fatalf("another role once A's forwarder is gone: verdict %d, %v", r.Verdict, r.Err)
	}
	gone := c.t
	c.t = c.t.Add(time.Second)
	if r := check(ch, memberA, session(idA), gone.Add(time.Millisecond)); r.Verdict == Genuine {
		t.Errorf("the deleted role's old ID, sent after IAM said it is gone, is still accepted")
	}
	// Created again, with a new ID: learned once IAM may be asked again.
	const recreated = "AROAFORWARDERA000002"
	f.set(key, recreated)
	c.t = c.t.Add(DefaultRecheck)
	if r := check(ch, memberA, session(recreated), c.t); r.Verdict != Genuine {
		t.Errorf("the re-created forwarder: verdict %d, %v; want genuine", r.Verdict, r.Err)
	}
}
