package infra_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

const (
	oncall   = "arn:aws:iam::123456789012:role/platform-oncall"
	security = "arn:aws:iam::210987654321:user/security-lead"
)

// withRedrive is kv with the redrive role's principals.
func withRedrive(kv map[string]string, principals ...string) map[string]string {
	out := map[string]string{}
	for k, v := range kv {
		out[k] = v
	}
	out["redrive"] = fmt.Sprintf(`{"principals":["%s"]}`, strings.Join(principals, `","`))
	return out
}

// TestTheRedriveRoleIsHeldByNamedPrincipals: the redrive role's trust admits exactly the principals the stack names,
// by aws:PrincipalArn with their accounts as the principal (so a principal named before it exists, or created anew,
// works, and nobody else of those accounts does), each only with a source identity: a role's any (what it says), a
// user's its own name (${aws:username}), in a statement each; without the key no redrive role is declared, the router
// learns no such role, the central queue excepts none, and nobody may read the quarantine.
func TestTheRedriveRoleIsHeldByNamedPrincipals(t *testing.T) {
	r := mustRun(t, "dev", withRedrive(nil, oncall, security))
	trust := stacktest.Doc(t, r.resources.Named(t, "aws:iam/role:Role", "kib-dev-redrive"), "assumeRolePolicy")
	want := []string{
		"NamedRoles Allow map[AWS:arn:aws:iam::123456789012:root] [sts:AssumeRole sts:SetSourceIdentity] " +
			"map[ArnEquals:map[aws:PrincipalArn:" + oncall + "] StringLike:map[sts:SourceIdentity:*]]",
		"NamedUsers Allow map[AWS:arn:aws:iam::210987654321:root] [sts:AssumeRole sts:SetSourceIdentity] " +
			"map[ArnEquals:map[aws:PrincipalArn:" + security + "] StringEquals:map[sts:SourceIdentity:${aws:username}]]",
	}
	if len(trust.Statement) != len(want) {
		t.Fatalf("trust %+v, want %d statements", trust, len(want))
	}
	for i, st := range trust.Statement {
		if got := fmt.Sprint(st.Sid, " ", st.Effect, " ", st.Principal, " ", st.Action, " ", st.Condition); got != want[i] || st.Resource != nil {
			t.Errorf("trust statement %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
	for principals, sids := range map[string][]string{oncall: {"NamedRoles"}, security: {"NamedUsers"}} {
		trust := stacktest.Doc(t, mustRun(t, "dev", withRedrive(nil, principals)).resources.Named(t, "aws:iam/role:Role", "kib-dev-redrive"), "assumeRolePolicy")
		var got []string
		for _, st := range trust.Statement {
			got = append(got, st.Sid)
		}
		if !slices.Equal(got, sids) {
			t.Errorf("principals %s: statements %v, want %v", principals, got, sids)
		}
	}
	if got := r.outputs["redriveRoleArn"]; got != "arn:aws:iam::123456789012:role/kib-dev-redrive-us-east-1" {
		t.Errorf("output redriveRoleArn = %v", got)
	}
	if s := routerSettings(t, r.resources.One(t, "aws:lambda/function:Function")); s.RedriveRoleName != "kib-dev-redrive-us-east-1" {
		t.Errorf("the router learns the redrive role %q", s.RedriveRoleName)
	}
	policyDoc := stacktest.Doc(t, r.resources.Named(t, "aws:iam/rolePolicy:RolePolicy", "kib-dev-redrive"), "policy")
	for _, s := range policyDoc.Statement {
		for _, a := range s.Action {
			if strings.Contains(a, "MessageMoveTask") {
				t.Errorf("the redrive role may %s: a moved message's sender is undocumented, requeue is the way back", a)
			}
		}
	}

	none := mustRun(t, "dev", nil)
	if n := len(none.resources.Where(func(x mocks.Resource) bool { return strings.HasSuffix(x.Name, "-redrive") })); n != 0 {
		t.Errorf("%d redrive resources declared without redrive.principals, want none", n)
	}
	if got := none.outputs["redriveRoleArn"]; got != "" {
		t.Errorf("output redriveRoleArn = %q without a redrive role", got)
	}
	if s := routerSettings(t, none.resources.One(t, "aws:lambda/function:Function")); s.RedriveRoleName != "" {
		t.Errorf("the router learns the redrive role %q, which does not exist", s.RedriveRoleName)
	}
	central := stacktest.Statement(t, stacktest.Doc(t, none.resources.Named(t, "aws:sqs/queuePolicy:QueuePolicy", "kib-dev-central"), "policy"), "OnlyTheBusSends")
	if fmt.Sprint(central.Condition) != "map[ArnNotLike:map[aws:PrincipalArn:[arn:aws:iam::123456789012:role/kib-dev-forward-us-east-1]]]" {
		t.Errorf("without a redrive role the central queue excepts %v, want the forwarder only", central.Condition)
	}
	readers := stacktest.Statement(t, stacktest.Doc(t, none.resources.Named(t, "aws:sqs/queuePolicy:QueuePolicy", "kib-dev-quarantine"), "policy"), "OnlyTheRedriveRoleReads")
	if readers.Effect != "Deny" || readers.Condition != nil {
		t.Errorf("without a redrive role the quarantine's readers %+v, want everyone denied", readers)
	}
}

// TestTheQuarantineKeepsItsEvidence: only the router may send to the quarantine; only the redrive role may receive,
// delete or change a message's visibility there; nobody may purge it; neither it nor the central queue takes
// anyone's dead letters, and the DLQ takes the central queue's only.
func TestTheQuarantineKeepsItsEvidence(t *testing.T) {
	r := mustRun(t, "dev", withRedrive(nil, oncall))
	d := stacktest.Doc(t, r.resources.Named(t, "aws:sqs/queuePolicy:QueuePolicy", "kib-dev-quarantine"), "policy")
	redrive, router := "arn:aws:iam::123456789012:role/kib-dev-redrive-us-east-1", "arn:aws:iam::123456789012:role/kib-dev-router-us-east-1"
	for sid, want := range map[string]struct {
		actions   []string
		condition string
	}{
		"OnlyTheRouterKeeps":      {[]string{"sqs:SendMessage"}, "map[ArnNotEquals:map[aws:PrincipalArn:" + router + "]]"},
		"OnlyTheRedriveRoleReads": {[]string{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:ReceiveMessage"}, "map[ArnNotEquals:map[aws:PrincipalArn:" + redrive + "]]"},
		"NobodyPurges":            {[]string{"sqs:PurgeQueue"}, "map[]"},
	} {
		s := stacktest.Statement(t, d, sid)
		if s.Effect != "Deny" || s.Principal != "*" || !slices.Equal(sorted(s.Action), want.actions) || fmt.Sprint(s.Condition) != want.condition {
			t.Errorf("%s = %+v, want Deny %v to all %s", sid, s, want.actions, want.condition)
		}
	}
	for _, s := range d.Statement {
		if s.Effect == "Allow" {
			t.Errorf("the quarantine's policy allows %+v", s)
		}
	}
	for name, want := range map[string]string{
		"kib-dev-central":    `{"redrivePermission":"denyAll"}`,
		"kib-dev-quarantine": `{"redrivePermission":"denyAll"}`,
		"kib-dev-dlq":        `{"redrivePermission":"byQueue","sourceQueueArns":["` + arnPrefix + `kib-dev-central"]}`,
	} {
		if got := stacktest.Str(t, r.resources.Named(t, "aws:sqs/queue:Queue", name), "redriveAllowPolicy"); got != want {
			t.Errorf("%s's RedriveAllowPolicy = %s, want %s", name, got, want)
		}
	}
}

// TestHubDeliveryThroughTheQueuePolicy: with centralQueue.hubDelivery queuePolicy the hub's rules deliver with no
// execution role and no forwarder of the hub is declared; the central queue admits EventBridge for the stack's own
// rules only (aws:SourceArn), and its Deny excepts those rules and the bus's roles and nothing else; the router is
// told, and learns no forwarder of the hub.
func TestHubDeliveryThroughTheQueuePolicy(t *testing.T) {
	kv := map[string]string{"centralQueue": `{"hubDelivery":"queuePolicy"}`}
	r := mustRun(t, "dev", withRedrive(kv, oncall))
	var rules []any
	for _, rule := range r.resources.OfType("aws:cloudwatch/eventRule:EventRule") {
		rules = append(rules, "arn:aws:events:us-east-1:123456789012:rule/"+stacktest.Str(t, rule, "name"))
	}
	for _, target := range r.resources.OfType("aws:cloudwatch/eventTarget:EventTarget") {
		if _, ok := target.Inputs["roleArn"]; ok {
			t.Errorf("target %s delivers as %v, want no execution role", target.Name, target.Inputs["roleArn"])
		}
	}
	if n := len(r.resources.Where(func(x mocks.Resource) bool { return strings.HasSuffix(x.Name, "-forward") })); n != 0 {
		t.Errorf("%d forwarder resources of the hub declared, want none", n)
	}
	d := stacktest.Doc(t, r.resources.Named(t, "aws:sqs/queuePolicy:QueuePolicy", "kib-dev-central"), "policy")
	allow := stacktest.Statement(t, d, "TheHubsRules")
	// The rules are registered concurrently, so the mocks' order is not the program's: compare the ARNs as a set
	// (a condition's values are one to AWS).
	slices.SortFunc(rules, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	asSets := func(c map[string]map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for op, kv := range c {
			out[op] = map[string]any{}
			for k, v := range kv {
				vs, _ := v.([]any)
				vs = slices.Clone(vs)
				slices.SortFunc(vs, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
				out[op][k] = vs
			}
		}
		return out
	}
	if allow.Effect != "Allow" || fmt.Sprint(allow.Principal) != "map[Service:events.amazonaws.com]" || !slices.Equal(allow.Action, []string{"sqs:SendMessage"}) ||
		fmt.Sprint(asSets(allow.Condition)) != fmt.Sprint(map[string]map[string]any{"ArnEquals": {"aws:SourceArn": rules}}) {
		t.Errorf("the rules' Allow %+v, want events.amazonaws.com for exactly %v", allow, rules)
	}
	deny := stacktest.Statement(t, d, "OnlyTheBusSends")
	if fmt.Sprint(asSets(deny.Condition)) != fmt.Sprint(map[string]map[string]any{
		"ArnNotLike":   {"aws:PrincipalArn": []any{"arn:aws:iam::123456789012:role/kib-dev-redrive-us-east-1"}},
		"ArnNotEquals": {"aws:SourceArn": rules},
	}) {
		t.Errorf("the Deny's conditions %v, want the redrive role and the rules excepted", deny.Condition)
	}
	s := routerSettings(t, r.resources.One(t, "aws:lambda/function:Function"))
	if s.HubDelivery != contract.HubDeliveryQueuePolicy || s.ForwarderRole(s.Account) != "" {
		t.Errorf("the router's hub delivery %q, the hub's forwarder %q; want queuePolicy and none", s.HubDelivery, s.ForwarderRole(s.Account))
	}
	learn := stacktest.Statement(t, stacktest.Doc(t, r.resources.Named(t, "aws:iam/rolePolicy:RolePolicy", "kib-dev-router"), "policy"), "LearnTheSenderRoleIDs")
	if !slices.Equal(learn.Resource, []string{"arn:aws:iam::123456789012:role/kib-dev-redrive-us-east-1"}) {
		t.Errorf("the router may iam:GetRole %v, want the redrive role only", learn.Resource)
	}
	// The default: as the forwarder, which the queue's policy has no Allow for.
	def := stacktest.Doc(t, mustRun(t, "dev", nil).resources.Named(t, "aws:sqs/queuePolicy:QueuePolicy", "kib-dev-central"), "policy")
	for _, st := range def.Statement {
		if st.Effect == "Allow" {
			t.Errorf("by default the central queue allows %+v", st)
		}
	}
}

// TestRedriveAndDeliveryAreChecked: the redrive role's principals and the hub's delivery are validated before
// anything is declared, each mistake named by its path.
func TestRedriveAndDeliveryAreChecked(t *testing.T) {
	_, err := run(t, "dev", map[string]string{
		"redrive": `{"principals":["arn:aws:iam::123456789012:root","arn:aws:iam::123456789012:role/ops-*","arn:aws:s3:::bucket",` +
			`"arn:aws:iam::123456789012:role/Ops","arn:aws:iam::123456789012:role/ops"]}`,
		"centralQueue": `{"hubDelivery":"resourcePolicy"}`,
	})
	var cerr *config.Error
	if err == nil || !errors.As(err, &cerr) {
		t.Fatalf("error %v, want a configuration error", err)
	}
	for _, want := range []string{
		"redrive.principals[0]: \"arn:aws:iam::123456789012:root\" is an account's root",
		"redrive.principals[1]: \"arn:aws:iam::123456789012:role/ops-*\" has a wildcard",
		"redrive.principals[2]: \"arn:aws:s3:::bucket\" is not an IAM role or user ARN",
		"redrive.principals[4]: duplicate of redrive.principals[3]",
		"centralQueue.hubDelivery: \"resourcePolicy\" is not one of executionRole, queuePolicy",
	} {
		if !slices.ContainsFunc(cerr.Problems, func(p config.Problem) bool { return strings.HasPrefix(p.String(), want) }) {
			t.Errorf("problems %q\ndo not say %q", cerr.Problems, want)
		}
	}
}

// TestTheRedriveTrustFitsIAMsQuota: redrive.principals that would make the redrive role's trust policy longer than
// the account's quota (IAM's 2,048 characters by default, white space not counted; up to 4,096 once raised, which
// redrive.trustPolicyLimit says: "IAM and AWS STS quotas") are refused before anything is declared, naming the key; as
// many as fit are taken, twice as many with the quota raised to its most.
func TestTheRedriveTrustFitsIAMsQuota(t *testing.T) {
	principals := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("arn:aws:iam::123456789012:role/operators/platform-oncall-%03d", i))
		}
		return out
	}
	fitting := func(limit int) int {
		fits := 0
		for n := 1; n < 120; n++ {
			kv := withRedrive(nil, principals(n)...)
			if limit != 0 {
				kv["redrive"] = strings.TrimSuffix(kv["redrive"], "}") + fmt.Sprintf(`,"trustPolicyLimit":%d}`, limit)
			}
			if _, err := run(t, "dev", kv); err != nil {
				want := fmt.Sprintf("over the account's %d (redrive.trustPolicyLimit", max(limit, 2048))
				if !strings.Contains(err.Error(), "redrive.principals: ") || !strings.Contains(err.Error(), want) {
					t.Fatalf("%d principals: %v, want the trust's size refused naming the key and %q", n, err, want)
				}
				break
			}
			fits = n
		}
		return fits
	}
	fits, raised := fitting(0), fitting(4096)
	if fits < 20 || fits >= 59 || raised < 2*fits || raised > 2*fits+4 {
		t.Errorf("%d principals of about 60 characters fit, %d with the quota raised to 4,096; want some 25, and twice that", fits, raised)
	}
}

// TestConcurrencyIsReadInTheStacksAccount: the account's concurrency read as an identity of another account than the
// one the stack deploys into (an aws:assumeRole or aws:profile the check did not follow, say) is refused before
// anything is declared, naming both accounts.
func TestConcurrencyIsReadInTheStacksAccount(t *testing.T) {
	elsewhere := mocks.DefaultLambda
	elsewhere.Caller = "999999999999"
	_, err := runWith(t, &mocks.Mocks{Lambda: &elsewhere}, render.AnyCommand, "dev", nil)
	for _, want := range []string{"an identity of account 999999999999", "the stack deploys into account " + mocks.DefaultAccount, "aws:assumeRole"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}

// TestTheConcurrencyCheckStepsAsideFromWhatItCannotFollow: with a key of the AWS provider the check does not follow
// (a proxy, the metadata service's endpoint, FIPS endpoints), it does not read Lambda as some other identity and refuse
// the deploy as "another account": it steps aside (and warns, naming the key).
func TestTheConcurrencyCheckStepsAsideFromWhatItCannotFollow(t *testing.T) {
	elsewhere := mocks.DefaultLambda
	elsewhere.Caller = "999999999999"
	if _, err := runWith(t, &mocks.Mocks{Lambda: &elsewhere}, render.AnyCommand, "dev", map[string]string{"aws:httpsProxy": "http://proxy.corp:3128"}); err != nil {
		t.Errorf("with aws:httpsProxy: %v, want the check stepped aside", err)
	}
}

// TestTheRedrivePrincipalsAreOfTheStacksPartition: a principal of another partition, which IAM refuses only when the
// role is created or assumed, is refused before anything is declared, naming it and both partitions; the limit of
// the trust policy takes IAM's bounds only.
func TestTheRedrivePrincipalsAreOfTheStacksPartition(t *testing.T) {
	kv := withRedrive(nil, "arn:aws:iam::123456789012:role/oncall", "arn:aws-cn:iam::123456789012:role/oncall-cn")
	_, err := run(t, "dev", kv)
	if err == nil || !strings.Contains(err.Error(), `redrive.principals[1]: "arn:aws-cn:iam::123456789012:role/oncall-cn" is of partition aws-cn, and the stack deploys into aws`) {
		t.Errorf("%v, want the principal of another partition named", err)
	}
	if _, err := run(t, "dev", map[string]string{"aws:region": "cn-north-1", "redrive": `{"principals":["arn:aws-cn:iam::123456789012:role/oncall-cn"]}`}); err != nil {
		t.Errorf("a principal of the stack's own partition, aws-cn: %v", err)
	}
	for _, limit := range []string{"2047", "4097"} {
		if _, err := run(t, "dev", map[string]string{"redrive": `{"principals":["arn:aws:iam::123456789012:role/oncall"],"trustPolicyLimit":` + limit + `}`}); err == nil ||
			!strings.Contains(err.Error(), "redrive.trustPolicyLimit: "+limit+" is not between 2048") {
			t.Errorf("trustPolicyLimit %s: %v", limit, err)
		}
	}
}
