package bus

import (
	"fmt"
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
