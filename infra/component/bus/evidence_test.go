package bus

import (
	"fmt"
	"slices"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
)

// TestTheArchivePolicy: every statement of the archive's policy, whole: who it denies, what, where and on what
// condition. The IAM matrix (tests/iam) judges what they do; this holds what they are, so that a Deny dropped, an
// action left out, a condition inverted or a key misspelled fails here too.
func TestTheArchivePolicy(t *testing.T) {
	const bucket, router = "arn:aws:s3:::kib-dev-archive-123456789012-eu-west-1", "arn:aws:iam::123456789012:role/kib-dev-router-eu-west-1"
	want := []string{
		"OnlyTheRouterArchives Deny * [s3:PutObject] [" + bucket + "/*] map[ArnNotEquals:map[aws:PrincipalArn:" + router + "]]",
		"NothingIsWrittenOver Deny * [s3:PutObject] [" + bucket + "/*] map[Null:map[s3:if-none-match:true]]",
		"NobodyDeletes Deny * [s3:DeleteObject s3:DeleteObjectVersion s3:BypassGovernanceRetention s3:PutObjectRetention s3:PutObjectLegalHold] [" +
			bucket + "/*] map[]",
		"NothingExpires Deny * [s3:PutLifecycleConfiguration] [" + bucket + "] map[]",
		"DenyInsecureTransport Deny * [s3:*] [" + bucket + " " + bucket + "/*] map[Bool:map[aws:SecureTransport:false]]",
	}
	wholly(t, ArchivePolicy(bucket, router), want)
}

// wholly checks each statement of d against its line in want: its Sid, effect, principal, actions, resources and
// condition.
func wholly(t *testing.T, d policy.Document, want []string) {
	t.Helper()
	if len(d.Statement) != len(want) {
		t.Fatalf("%d statements, want %d: %+v", len(d.Statement), len(want), d.Statement)
	}
	for i, s := range d.Statement {
		if line := fmt.Sprint(s.Sid, " ", s.Effect, " ", s.Principal, " ", s.Action, " ", s.Resource, " ", s.Condition); line != want[i] {
			t.Errorf("statement %d:\n got %s\nwant %s", i, line, want[i])
		}
	}
}

// TestTheSealKeyPolicy: the seal key's policy, whole: the account administers it through IAM with every action
// pulumi-aws calls on a key (a read's kms:GetKeyRotationStatus among them: tests/iam, deployRows), never kms:Sign nor
// kms:CreateGrant; only the router's role signs, and everyone else is denied it.
func TestTheSealKeyPolicy(t *testing.T) {
	env := awsenv.Env{Partition: "aws", Region: "eu-west-1", Account: "123456789012"}
	const router = "arn:aws:iam::123456789012:role/kib-dev-router-eu-west-1"
	root := "map[AWS:arn:aws:iam::123456789012:root]"
	want := []string{
		"TheAccountAdministers Allow " + root + " [kms:CancelKeyDeletion kms:CreateAlias kms:DeleteAlias kms:DescribeKey kms:DisableKey kms:EnableKey " +
			"kms:GetKeyPolicy kms:GetKeyRotationStatus kms:GetPublicKey kms:ListAliases kms:ListGrants kms:ListKeyPolicies kms:ListResourceTags " +
			"kms:PutKeyPolicy kms:RevokeGrant kms:ScheduleKeyDeletion kms:TagResource kms:UntagResource kms:UpdateAlias kms:UpdateKeyDescription " +
			"kms:Verify] [*] map[]",
		"TheRouterSeals Allow " + root + " [kms:Sign] [*] map[ArnEquals:map[aws:PrincipalArn:" + router + "]]",
		"OnlyTheRouterSeals Deny * [kms:Sign] [*] map[ArnNotEquals:map[aws:PrincipalArn:" + router + "]]",
	}
	wholly(t, SealKeyPolicy(env, router), want)
}

// TestTheRedrivePolicy: the redrive role's policy, whole: its S3 statements each only in a bucket of the account
// (s3:ResourceAccount), listing versions and reading a version a delete marker hides; the archive the bus has named
// beside the archive prefix only when its name does not start with it (a name prefix longer than the archive prefix
// keeps of it).
func TestTheRedrivePolicy(t *testing.T) {
	const dlq, central, quarantine = "arn:aws:sqs:eu-west-1:123456789012:kib-dev-dlq", "arn:aws:sqs:eu-west-1:123456789012:kib-dev-central",
		"arn:aws:sqs:eu-west-1:123456789012:kib-dev-quarantine"
	const key, archives = "arn:aws:kms:eu-west-1:123456789012:key/k", "arn:aws:s3:::kib-dev-archive-"
	inAccount := "map[StringEquals:map[s3:ResourceAccount:123456789012]]"
	head := []string{
		"ListTheDeadLetterQueue Allow <nil> [sqs:ReceiveMessage sqs:ChangeMessageVisibility sqs:GetQueueAttributes] [" + dlq + "] map[]",
		"ReadTheQuarantine Allow <nil> [sqs:ReceiveMessage sqs:DeleteMessage sqs:ChangeMessageVisibility sqs:GetQueueAttributes] [" + quarantine + "] map[]",
		"SendToTheCentralQueue Allow <nil> [sqs:SendMessage sqs:GetQueueAttributes] [" + central + "] map[]",
		"CheckSeals Allow <nil> [kms:GetPublicKey] [" + key + "] map[]",
		"FindTheArchives Allow <nil> [s3:ListAllMyBuckets] [*] map[]",
	}
	for _, tt := range []struct{ archive, buckets, objects string }{
		{"arn:aws:s3:::kib-dev-archive-123456789012-eu-west-1", archives + "*", archives + "*/*"},
		{"arn:aws:s3:::kib-devs-archive-123456789012-eu-west-1", archives + "* arn:aws:s3:::kib-devs-archive-123456789012-eu-west-1",
			archives + "*/* arn:aws:s3:::kib-devs-archive-123456789012-eu-west-1/*"},
	} {
		wholly(t, RedrivePolicy(dlq, central, quarantine, key, archives, tt.archive, "123456789012"), append(slices.Clone(head),
			"ListTheArchives Allow <nil> [s3:ListBucket s3:ListBucketVersions] ["+tt.buckets+"] "+inAccount,
			"ReadTheArchives Allow <nil> [s3:GetObject s3:GetObjectVersion] ["+tt.objects+"] "+inAccount,
		))
	}
}

// TestTheRedriveTrust: the redrive role's trust, whole: the roles named may open a session with any source identity,
// the users named with their own name only; each statement there only when such principals are named.
func TestTheRedriveTrust(t *testing.T) {
	const role, role2 = "arn:aws:iam::123456789012:role/oncall", "arn:aws:iam::111122223333:role/team/ops"
	const user, user2 = "arn:aws:iam::210987654321:user/security-lead", "arn:aws:iam::210987654321:user/auditors/jo"
	roles := "NamedRoles Allow map[AWS:[arn:aws:iam::123456789012:root arn:aws:iam::111122223333:root]] [sts:AssumeRole sts:SetSourceIdentity] [] " +
		"map[ArnEquals:map[aws:PrincipalArn:[" + role + " " + role2 + "]] StringLike:map[sts:SourceIdentity:*]]"
	users := "NamedUsers Allow map[AWS:arn:aws:iam::210987654321:root] [sts:AssumeRole sts:SetSourceIdentity] [] " +
		"map[ArnEquals:map[aws:PrincipalArn:[" + user + " " + user2 + "]] StringEquals:map[sts:SourceIdentity:${aws:username}]]"
	wholly(t, RedriveTrust([]string{role, user, role2, user2}), []string{roles, users})
	wholly(t, RedriveTrust([]string{role, role2}), []string{roles})
	wholly(t, RedriveTrust([]string{user, user2}), []string{users})
}

// TestTheArchivesKeys: the router writes its records, the seal key's public keys and its ledger's entries, and reads
// back the ledger's alone; what a statement conditioned on the account names.
func TestTheArchivesKeys(t *testing.T) {
	const b = "arn:aws:s3:::kib-dev-archive-123456789012-eu-west-1"
	if got := ArchiveWrites(b); !slices.Equal(got, []string{b + "/refused/*", b + "/keys/*", b + "/delivered/*", b + "/claims/*"}) {
		t.Errorf("ArchiveWrites = %v", got)
	}
	if got := Ledger(b); !slices.Equal(got, []string{b + "/delivered/*", b + "/claims/*"}) {
		t.Errorf("Ledger = %v", got)
	}
	if got := fmt.Sprint(OfAccount("123456789012")); got != "map[StringEquals:map[s3:ResourceAccount:123456789012]]" {
		t.Errorf("OfAccount = %s", got)
	}
}

// TestWhatIsAdopted: a bucket S3 answered as the account's is adopted, none when nothing is to be (missing, or in state),
// without asking the provider.
func TestWhatIsAdopted(t *testing.T) {
	for a, want := range map[Adoption]bool{AdoptOwned: true, AdoptNothing: false} {
		if got, err := a.adopts(nil, "kib-dev-archive-123456789012-eu-west-1"); got != want || err != nil {
			t.Errorf("%v adopts %v (%v), want %v", a, got, err, want)
		}
	}
}
