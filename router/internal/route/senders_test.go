package route

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// fakeSenders decides senders by a table.
type fakeSenders struct {
	results map[string]sender.Result // sender -> result, whatever the account
}

func (f *fakeSenders) IsRedrive(context.Context, string, time.Time) (bool, error) { return false, nil }

func (f *fakeSenders) Check(_ context.Context, _ string, _ bool, msgs []sender.Message) []sender.Result {
	out := make([]sender.Result, len(msgs))
	for i, m := range msgs {
		out[i] = f.results[m.Sender]
	}
	return out
}

// TestSenderCheck: in enforce mode a forged sender's message is dropped as forged_sender, named in its log line
// and counted, before any lookup in the account it names; an undecided one is retried; a sender whose account's
// reader role is refused drops the message as unknown_account; a sender that is no role is refused (forged), counted
// as such, and logged once. In observe mode the forged and undecided ones are forwarded too, logged and counted.
func TestSenderCheck(t *testing.T) {
	for _, observe := range []bool{false, true} {
		t.Run(map[bool]string{false: "enforce", true: "observe"}[observe], func(t *testing.T) {
			hub := &fakeEC2{owners: map[string]string{instance(1): "alpha"}}
			a := &fakeEC2{owners: map[string]string{instance(2): "beta", instance(5): "beta"}}
			b := &fakeEC2{owners: map[string]string{instance(3): "gamma", instance(4): "gamma"}}
			h := accountsHarness(t, hub, a, b, "alpha", "beta", "gamma")
			senders := &fakeSenders{results: map[string]sender.Result{
				"AROAA:s":  {Verdict: sender.Genuine},
				"AROAX:s":  {Verdict: sender.Forged, Err: errors.New("sender AROAX:s may not speak for account " + memberB)},
				"AROAU:s":  {Verdict: sender.Undecided, Err: errors.New("iam:GetRole throttled")},
				"AROAD:s":  {Verdict: sender.NotOnBus, Err: fmt.Errorf("%w: refused", accounts.ErrUnknownAccount)},
				"AIDASVC1": {Verdict: sender.Forged, Err: errors.New("sender AIDASVC1 is not an IAM role")},
			}}
			h.r.senders, h.r.observe = senders, observe
			bodies := []string{spotIn(memberA, instance(2)), spotIn(memberB, instance(3)), spotIn(memberB, instance(4)),
				spotIn(account, instance(1)), spotIn(memberA, instance(5)), spotIn(account, instance(1))}
			from := []string{"AROAA:s", "AROAX:s", "AROAU:s", "AIDASVC1", "AROAD:s", "AIDASVC1"}
			in := batch(bodies...)
			for i := range in.Records {
				in.Records[i].Attributes[sender.Attribute] = from[i]
			}
			resp, err := h.r.Handle(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			forged := string(contract.ReasonForgedSender)
			wantRetried, wantDrops := []string{"m2"}, map[string][]string{
				"m1": {forged}, "m3": {forged}, "m4": {string(contract.ReasonUnknownAccount)}, "m5": {forged},
			}
			wantGamma, wantAlpha := []string(nil), 0
			if observe {
				wantRetried, wantDrops = nil, map[string][]string{"m4": {string(contract.ReasonUnknownAccount)}}
				wantGamma, wantAlpha = []string{bodies[1], bodies[2]}, 2
			}
			if got := failedIDs(resp); fmt.Sprint(got) != fmt.Sprint(wantRetried) {
				t.Errorf("retried %v, want %v", got, wantRetried)
			}
			if got := h.dropLogs(t); fmt.Sprint(got) != fmt.Sprint(wantDrops) {
				t.Errorf("drops %v, want %v", got, wantDrops)
			}
			if got := h.sqs.byURL["https://sqs/"+memberB+"/"+queuename.For(qprefix, "gamma")]; fmt.Sprint(got) != fmt.Sprint(wantGamma) {
				t.Errorf("gamma (member B) received %q, want %q", got, wantGamma)
			}
			if got := h.sqs.byURL["https://sqs/"+memberA+"/"+queuename.For(qprefix, "beta")]; len(got) != 1 || got[0] != bodies[0] {
				t.Errorf("beta (member A) received %q, want its genuine event only", got)
			}
			if got := h.sqs.byURL["https://sqs/"+account+"/"+queuename.For(qprefix, "alpha")]; len(got) != wantAlpha {
				t.Errorf("alpha (the hub) received %d messages sent by no role, want %d", len(got), wantAlpha)
			}
			if !observe && b.calls != 0 {
				t.Errorf("member B's EC2 answered %d calls: a forged or undecided message was looked up", b.calls)
			}
			if got := h.metric(t, "", "", contract.MetricForgedSender); got != 3 {
				t.Errorf("ForgedSender = %v, want 3", got)
			}
			if got := h.metric(t, "", "", contract.MetricServiceSender); got != 2 {
				t.Errorf("ServiceSender = %v, want 2", got)
			}
			if !observe {
				if got := h.metric(t, contract.DimReason, string(contract.ReasonForgedSender), contract.MetricDropped); got != 3 {
					t.Errorf("Dropped{Reason=forged_sender} = %v, want 3", got)
				}
				named := h.logsOf(t, contract.LogMessageDropped, "messageId", contract.LogSender)["m1"]
				if fmt.Sprint(named) != "[AROAX:s]" {
					t.Errorf("the forged_sender drop names sender %v, want AROAX:s", named)
				}
				if acct := h.logsOf(t, contract.LogMessageDropped, "messageId", "account")["m1"]; fmt.Sprint(acct) != "["+memberB+"]" {
					t.Errorf("the forged_sender drop names account %v, want %s", acct, memberB)
				}
			} else {
				observed := h.logsOf(t, contract.LogSenderObserved, "eventId", contract.LogSender)
				if fmt.Sprint(observed) != fmt.Sprint(map[string][]string{"ev-" + instance(1): {"AIDASVC1", "AIDASVC1"}, "ev-" + instance(3): {"AROAX:s"}, "ev-" + instance(4): {"AROAU:s"}}) {
					t.Errorf("observed lines %v, want the forged, the no-role and the undecided messages", observed)
				}
			}
			if got := h.logsOf(t, contract.LogServiceSender, contract.LogSender, "account"); len(got["AIDASVC1"]) != 1 {
				t.Errorf("a sender that is no role logged %d times, want once", len(got["AIDASVC1"]))
			}
		})
	}
}

// TestRuleOnSender: each verdict of the sender check, with what a record's seal says it was kept for, in each mode.
// The evidence rules: what the router kept as evidence (forged_sender, canary_forbidden, unsealed) is refused again
// for that reason whatever its first sender is now, unless the check could not decide; nothing else is.
func TestRuleOnSender(t *testing.T) {
	why := errors.New("why")
	res := func(v sender.Verdict, requeued, vouched bool) sender.Result {
		return sender.Result{Verdict: v, Err: why, Sender: "AROAFIRST:s", Requeued: requeued, Vouched: vouched}
	}
	unknown := fmt.Errorf("%w: its reader role is refused", accounts.ErrUnknownAccount)
	const (
		forged, unat, unsealed = contract.ReasonForgedSender, contract.ReasonUnattributable, contract.ReasonUnsealed
		canaryForbidden, unk   = contract.ReasonCanaryForbidden, contract.ReasonUnknownAccount
	)
	type want struct {
		v                                        verdict
		reason                                   contract.Reason
		observed, forged, unsealed, vouched, rrr bool
	}
	for _, c := range []struct {
		name    string
		res     sender.Result
		sealed  contract.Reason
		enforce want
		observe want
	}{
		{"genuine", res(sender.Genuine, false, false), "", want{}, want{}},
		{"genuine on a vouch", res(sender.Genuine, true, true), unat, want{vouched: true}, want{vouched: true}},
		{"forged", res(sender.Forged, false, false), "", want{v: dropped, reason: forged, forged: true},
			want{reason: forged, observed: true, forged: true}},
		{"unsealed", res(sender.Unsealed, true, false), "", want{v: dropped, reason: unsealed, unsealed: true},
			want{reason: unsealed, observed: true, unsealed: true}},
		{"unattributable", res(sender.Unattributable, false, false), "", want{v: dropped, reason: unat}, want{reason: unat, observed: true}},
		{"not on the bus", res(sender.NotOnBus, false, false), "", want{v: dropped, reason: unk}, want{v: dropped, reason: unk}},
		{"not on the bus, its reader role refused", sender.Result{Verdict: sender.NotOnBus, Err: unknown}, "",
			want{v: dropped, reason: unk, rrr: true}, want{v: dropped, reason: unk, rrr: true}},
		{"undecided", res(sender.Undecided, false, false), "", want{v: retried}, want{observed: true}},
		{"no verdict", sender.Result{}, "", want{v: retried}, want{v: retried}},
		// The evidence rules.
		{"a sealed forgery sent back, its first sender genuine now", res(sender.Genuine, true, false), forged,
			want{v: dropped, reason: forged, forged: true}, want{reason: forged, observed: true, forged: true}},
		{"a sealed forgery sent back and vouched for", res(sender.Genuine, true, true), forged,
			want{v: dropped, reason: forged, forged: true}, want{reason: forged, observed: true, forged: true}},
		{"a sealed canary_forbidden sent back, its first sender unattributable now", res(sender.Unattributable, true, false), canaryForbidden,
			want{v: dropped, reason: canaryForbidden}, want{reason: canaryForbidden, observed: true}},
		{"a sealed canary_forbidden sent back, its first sender genuine now", res(sender.Genuine, true, false), canaryForbidden,
			want{v: dropped, reason: canaryForbidden}, want{reason: canaryForbidden, observed: true}},
		{"a sealed unsealed record sent back, vouched for", res(sender.Genuine, true, true), unsealed,
			want{v: dropped, reason: unsealed, unsealed: true}, want{reason: unsealed, observed: true, unsealed: true}},
		{"a sealed forgery sent back whose check is undecided", res(sender.Undecided, true, false), forged, want{v: retried}, want{observed: true}},
		{"a sealed forgery not sent back (its own sender genuine)", res(sender.Genuine, false, false), forged, want{}, want{}},
		{"a sealed unattributable record sent back, still unattributable", res(sender.Unattributable, true, false), unat,
			want{v: dropped, reason: unat}, want{reason: unat, observed: true}},
	} {
		for mode, w := range map[bool]want{false: c.enforce, true: c.observe} {
			t.Run(fmt.Sprintf("%s/observe=%v", c.name, mode), func(t *testing.T) {
				r := ruleOnSender(c.res, c.sealed, mode)
				got := want{v: r.out.verdict, reason: r.reason, observed: r.observed, forged: r.forged, unsealed: r.unsealed,
					vouched: r.vouched, rrr: r.readerRefused}
				if w.v == dropped && r.out.reason != w.reason {
					t.Errorf("dropped as %s, want %s", r.out.reason, w.reason)
				}
				if w.v == retried && w.reason == "" {
					got.reason = "" // a retry names no reason, whatever it says of why
				}
				if got != w {
					t.Errorf("ruled %+v, want %+v", got, w)
				}
				if (r.observed || r.out.verdict != pending) && r.err == nil {
					t.Error("no error says why")
				}
			})
		}
	}
}

// TestSentBackOf: what a record sent back says of itself is believed (Sealed, and the reason and first ID it was
// sealed with) only when its seal verifies; no seal, no key or a broken seal speak for no account; a seal that could
// not be checked is for later; a vouch counts only on a reason one may vouch for.
func TestSentBackOf(t *testing.T) {
	rec := sealing.Record{Reason: string(contract.ReasonUnattributable), FirstSender: "AROAOLD:s", FirstSent: "1763726400000", Origin: contract.OriginDLQ,
		MessageID: "m-first"}
	dead := rec
	dead.Reason = string(contract.ReasonDeadLettered)
	unreadable := errors.New("kms:GetPublicKey throttled")
	for _, c := range []struct {
		name               string
		rec                sealing.Record
		seal               string
		hasKey             bool
		verified           error
		sealed, vouchable  bool
		unsealed, unverify error
	}{
		{"sealed", rec, "c2VhbA==", true, nil, true, true, nil, nil},
		{"sealed, no vouch applies", dead, "c2VhbA==", true, nil, true, false, nil, nil},
		{"no seal", rec, "", true, nil, false, false, sealing.ErrNoSeal, nil},
		{"no key", rec, "c2VhbA==", false, nil, false, false, errNoSealKey, nil},
		{"broken", rec, "c2VhbA==", true, sealing.ErrBroken, false, false, sealing.ErrBroken, nil},
		{"a verifier that finds none", rec, "c2VhbA==", true, sealing.ErrNoSeal, false, false, sealing.ErrNoSeal, nil},
		{"not checked now", rec, "c2VhbA==", true, unreadable, false, false, nil, unreadable},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := sentBackOf(c.rec, c.seal, contract.VouchEvent, c.hasKey, c.verified)
			if b.req.Sealed != c.sealed || b.req.Vouchable != c.vouchable || !errors.Is(b.req.Unsealed, c.unsealed) ||
				!errors.Is(b.req.Unverified, c.unverify) || (c.unsealed == nil) != (b.req.Unsealed == nil) || (c.unverify == nil) != (b.req.Unverified == nil) {
				t.Errorf("%+v", b.req)
			}
			if sealedAs := contract.Reason(c.rec.Reason); c.sealed != (b.sealed == sealedAs && b.first == "m-first") || !c.sealed && (b.sealed != "" || b.first != "") {
				t.Errorf("sealed %q first %q", b.sealed, b.first)
			}
			if b.req.FirstSender != "AROAOLD:s" || b.req.FirstSent.UnixMilli() != 1763726400000 || !b.req.FromDLQ || b.req.Vouch != contract.VouchEvent {
				t.Errorf("what it says of its first sending: %+v", b.req)
			}
		})
	}
}
