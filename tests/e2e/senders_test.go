package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/ec2stub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
)

// spotAs is spotIn with the event id eventID: a second event about the same instance.
func spotAs(account, instance, eventID string) string {
	return strings.Replace(spotIn(account, instance), `"id":"ev-`+instance+`"`, `"id":"`+eventID+`"`, 1)
}

// sendersBus is the router binary as a hub with members A (cluster beta) and B (cluster gamma), by list or by
// organization, its own cluster alpha, and one instance of each cluster.
func sendersBus(t *testing.T, org string, env map[string]string) *bus {
	t.Helper()
	return sendersBusOn(t, org, env, false)
}

// sendersBusOn is sendersBus with its archive in moto's S3 (moto) or the stand-in.
func sendersBusOn(t *testing.T, org string, env map[string]string, moto bool) *bus {
	t.Helper()
	env["SENDER_ROLE_RECHECK"] = "1s" // the least time between two GetRole calls of a role: a re-created role is learned after it
	b, stderr := routerBinaryWith(t, harness.Options{
		Clusters: []string{"alpha"}, Members: map[string][]string{memberA: {"beta"}, memberB: {"gamma"}}, Organization: org,
		RetryDelay: time.Second, Env: env, MotoS3: moto,
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router stderr: %s", stderr.String())
		}
	})
	owner := func(c string) map[string]string { return map[string]string{"eks:eks-cluster-name": c} }
	b.EC2.PutIn(ec2stub.Account, hubInstance, owner("alpha"))
	b.EC2.PutIn(memberA, aInstance, owner("beta"))
	b.EC2.PutIn(memberB, bInstance, owner("gamma"))
	return b
}

const hubInstance, aInstance, bInstance = "i-0a1b2c3d4e5f61001", "i-0a1b2c3d4e5f61002", "i-0a1b2c3d4e5f61003"

// TestOneAccountCannotSpeakForAnother makes the attack real, with a member list and with organization.id: member
// A's administrators send, through A's forwarder role, bodies naming member B's instance and the hub's; SQS stamps
// each message with its sender (the emulator, from the caller's credentials, as SQS does), and the router learns
// each forwarder's unique ID with iam:GetRole as that member's reader role. The forgeries reach no Karpenter and are
// counted as forged_sender, and kept in the quarantine, while every genuine event of the same run is delivered: each
// account's own (the hub's rules' as the hub's forwarder), a redriven message that kept its original sender, and A's
// events after its forwarder role is created anew (a new unique ID), learned without losing one. What the redrive
// role sends that the router did not seal speaks for no account: kept as unsealed, never delivered on the redrive
// role's word.
func TestOneAccountCannotSpeakForAnother(t *testing.T) {
	for _, org := range []string{"", "o-a1b2c3d4e5"} {
		t.Run(map[string]string{"": "members", "o-a1b2c3d4e5": "organization"}[org], func(t *testing.T) {
			b := sendersBus(t, org, map[string]string{})
			ctx := context.Background()
			genuine := map[string]string{"alpha": spotIn(sqsemu.Account, hubInstance), "beta": spotIn(memberA, aInstance), "gamma": spotIn(memberB, bInstance)}
			forgedB, forgedHub := spotAs(memberB, bInstance, "forged-b"), spotAs(sqsemu.Account, hubInstance, "forged-hub")
			// A redrive: SQS may keep a message's original sender (A's forwarder), or stamp the redrive role's.
			keptA := spotAs(memberA, aInstance, "redrive-kept")
			stampedB, stampedHub := spotAs(memberB, bInstance, "redrive-stamped"), spotAs(sqsemu.Account, hubInstance, "redrive-hub")

			b.publish(genuine["alpha"], genuine["beta"], genuine["gamma"])
			aForwarder := b.As(memberA, harness.ForwarderRoleName)
			redrive := b.As(sqsemu.Account, harness.RedriveRoleName)
			for _, p := range []struct {
				as     string
				bodies []string
			}{{"A's forwarder", []string{forgedB, forgedHub, keptA}}, {"the redrive role", []string{stampedB, stampedHub}}} {
				client := redrive
				if p.as == "A's forwarder" {
					client = aForwarder
				}
				if err := b.PublishAs(ctx, client, p.bodies...); err != nil {
					t.Fatalf("sending as %s: %v", p.as, err)
				}
			}
			b.drain()

			want := map[string][]string{
				"alpha": {genuine["alpha"]},
				"beta":  {genuine["beta"], keptA},
				"gamma": {genuine["gamma"]},
			}
			for c, bodies := range want {
				got := b.received(c)
				slices.Sort(bodies)
				if !slices.Equal(got, bodies) {
					t.Errorf("%s (account %s) received %q\nwant %q", c, b.AccountOf(harness.QueueOf(c)), got, bodies)
				}
				for _, body := range got {
					if p, err := karpenter.Parse(body); err != nil || p.Kind != "spot_interrupted" {
						t.Errorf("Karpenter reads %s's message as %+v, %v", c, p, err)
					}
				}
			}
			aRole := b.IAM.ID(memberA, harness.ForwarderRoleName)
			for _, ev := range []struct{ id, account string }{{"forged-b", memberB}, {"forged-hub", sqsemu.Account}} {
				d := b.Drops()[ev.id]
				if len(d) != 1 || d[0].Reason != string(contract.ReasonForgedSender) ||
					!strings.Contains(d[0].Error, aRole+":") || !strings.Contains(d[0].Error, "account "+ev.account) {
					t.Errorf("%s: drops %+v, want one forged_sender naming A's forwarder %s and account %s", ev.id, d, aRole, ev.account)
				}
			}
			if got := b.Metric(contract.MetricForgedSender, "", ""); got != 2 {
				t.Errorf("ForgedSender = %v, want 2", got)
			}
			if got := b.Metric(contract.MetricDropped, contract.DimReason, string(contract.ReasonForgedSender)); got != 2 {
				t.Errorf("Dropped{Reason=forged_sender} = %v, want 2", got)
			}
			if got := b.Metric(contract.MetricServiceSender, "", ""); got != 0 {
				t.Errorf("ServiceSender = %v, want 0: every rule delivers as its account's forwarder", got)
			}
			kept := b.quarantined(t)
			if len(kept) != 4 || kept["forged-b"].reason != string(contract.ReasonForgedSender) || kept["forged-hub"].account != sqsemu.Account ||
				!strings.HasPrefix(kept["forged-b"].sender, aRole+":") {
				t.Errorf("the quarantine holds %+v, want both forgeries with their reason, the account claimed and A's forwarder", kept)
			}
			for _, id := range []string{"redrive-stamped", "redrive-hub"} {
				if k := kept[id]; k.reason != string(contract.ReasonUnsealed) || !strings.Contains(k.err, "carries no seal") {
					t.Errorf("%s, sent by the redrive role with nothing the router sealed, kept as %+v; want unsealed", id, k)
				}
			}
			if got := b.Metric(contract.MetricUnsealed, "", ""); got != 2 {
				t.Errorf("Unsealed = %v, want the redrive role's 2", got)
			}
			// Each role learned once: A's and B's forwarders as their readers, the hub's and the redrive role as the router.
			for _, r := range []struct{ account, name string }{
				{memberA, harness.ForwarderRoleName}, {memberB, harness.ForwarderRoleName}, {sqsemu.Account, harness.RedriveRoleName},
				{sqsemu.Account, harness.ForwarderRoleName},
			} {
				if n := b.IAM.Calls(r.account, r.name); n != 1 {
					t.Errorf("GetRole of %s in %s: %d calls, want 1", r.name, r.account, n)
				}
			}
			for _, m := range []string{memberA, memberB} {
				if n := b.STS.Calls(harness.ReaderRole(m)); n != 1 {
					t.Errorf("AssumeRole of %s's reader: %d calls, want 1 (the lookup and the check share the session)", m, n)
				}
			}

			// A's forwarder role is deleted and created again (a new unique ID): its next event is delivered, retried
			// until the router asks IAM again, never refused.
			before := b.Metric(contract.MetricForgedSender, "", "")
			if old, fresh := aRole, b.IAM.Create(memberA, harness.ForwarderRoleName); old == fresh {
				t.Fatal("the re-created role has its old ID")
			}
			after := spotAs(memberA, aInstance, "after-recreate")
			b.publish(after)
			b.drain()
			if got := b.received("beta"); len(got) != 1 || got[0] != after {
				t.Errorf("beta received %q after A's forwarder was created anew, want its event", got)
			}
			if got := b.Metric(contract.MetricForgedSender, "", ""); got != before {
				t.Errorf("ForgedSender went from %v to %v: the re-created role's event was taken for a forgery", before, got)
			}
			if n := b.IAM.Calls(memberA, harness.ForwarderRoleName); n != 2 {
				t.Errorf("GetRole of A's forwarder: %d calls, want 2 (asked once more)", n)
			}
		})
	}
}

// TestSenderCheckObserves: with SENDER_CHECK=observe the same forgery is forwarded, logged and counted, not dropped;
// and a member whose reader role may not yet read its forwarder (a baseline older than the check) has its events
// retried in enforce mode, never refused, and forwarded in observe mode.
func TestSenderCheckObserves(t *testing.T) {
	for _, mode := range []string{contract.SenderEnforce, contract.SenderObserve} {
		t.Run(mode, func(t *testing.T) {
			b := sendersBus(t, "", map[string]string{contract.EnvSenderCheck: mode})
			// B's reader may not read its forwarder yet: B's genuine event is retried (enforce) or forwarded (observe).
			b.IAM.Deny(memberB, true)
			genuine := spotIn(memberB, bInstance)
			b.publish(genuine)
			res, err := b.ESM.PollOnce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			wantFailed := map[string]int{contract.SenderEnforce: 1, contract.SenderObserve: 0}[mode]
			if res.Failed != wantFailed {
				t.Errorf("with B's GetRole refused: %d messages retried, want %d", res.Failed, wantFailed)
			}
			b.IAM.Deny(memberB, false)
			b.drain()
			if got := b.received("gamma"); len(got) != 1 || got[0] != genuine {
				t.Errorf("gamma received %q, want its genuine event once (forwarded, or retried until GetRole answers)", got)
			}
			if got := b.Metric(contract.MetricForgedSender, "", ""); got != 0 {
				t.Errorf("ForgedSender = %v after a refused GetRole, want 0: a failure is not a forgery", got)
			}

			forgedB := spotAs(memberB, bInstance, "forged-b")
			if err := b.PublishAs(context.Background(), b.As(memberA, harness.ForwarderRoleName), forgedB); err != nil {
				t.Fatal(err)
			}
			b.drain()
			got := b.received("gamma")
			observed := 0
			for _, l := range b.Out.Lines() {
				if l["msg"] == contract.LogSenderObserved && l[contract.LogReason] == string(contract.ReasonForgedSender) && l["account"] == memberB {
					observed++
				}
			}
			dropped := b.Metric(contract.MetricDropped, contract.DimReason, string(contract.ReasonForgedSender))
			if mode == contract.SenderEnforce && (len(got) != 0 || dropped != 1 || observed != 0) {
				t.Errorf("enforce: gamma received %d, %v dropped, %d observed lines; want 0, 1, 0", len(got), dropped, observed)
			}
			if mode == contract.SenderObserve && (len(got) != 1 || got[0] != forgedB || dropped != 0 || observed != 1) {
				t.Errorf("observe: gamma received %q, %v dropped, %d observed lines; want the forgery, 0, 1", got, dropped, observed)
			}
			if got := b.Metric(contract.MetricForgedSender, "", ""); got != 1 {
				t.Errorf("ForgedSender = %v, want 1 in either mode", got)
				t.Logf("router: %s", strings.Join(b.Out.Text(), "\n"))
			}
		})
	}
}
