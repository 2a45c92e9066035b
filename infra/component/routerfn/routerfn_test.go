package routerfn

import (
	"fmt"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// TestThePolicy: the router's policy, whole, statement by statement: its queues, its seal key, its archive (every S3
// statement only in a bucket of the bus's account: s3:ResourceAccount; its ledger written, read back, its claims listed
// by version under their prefix alone; the bucket listed, without which S3 answers a missing ledger entry 403 instead
// of 404), instances in its region, its logs, and the roles its sender check learns. The IAM matrix (tests/iam) judges
// what they do; this holds what they are, so that a statement dropped, an action or key left out, or a condition
// inverted fails here too.
func TestThePolicy(t *testing.T) {
	env := awsenv.Env{Partition: "aws", Region: "eu-west-1", Account: "123456789012"}
	s := contract.Settings{Account: env.Account, Partition: env.Partition, ClusterQueuePrefix: "kib-dev_", ForwarderRoleName: "kib-dev-forward-eu-west-1",
		RedriveRoleName: "kib-dev-redrive-eu-west-1"}
	const central, quarantine, dlq = "arn:aws:sqs:eu-west-1:123456789012:kib-dev-central", "arn:aws:sqs:eu-west-1:123456789012:kib-dev-quarantine",
		"arn:aws:sqs:eu-west-1:123456789012:kib-dev-dlq"
	const key, b = "arn:aws:kms:eu-west-1:123456789012:key/k", "arn:aws:s3:::kib-dev-archive-123456789012-eu-west-1"
	inAccount := "map[StringEquals:map[s3:ResourceAccount:123456789012]]"
	want := []string{
		"ReadCentralQueue Allow [sqs:ReceiveMessage sqs:DeleteMessage sqs:ChangeMessageVisibility sqs:GetQueueAttributes] [" + central + "] map[]",
		"ForwardToClusterQueues Allow [sqs:SendMessage sqs:GetQueueUrl] [arn:aws:sqs:eu-west-1:123456789012:kib-dev_*] map[]",
		"KeepRefusedMessages Allow [sqs:SendMessage] [" + quarantine + "] map[]",
		"SealWhatItKeeps Allow [kms:Sign kms:GetPublicKey] [" + key + "] map[]",
		"ArchiveWhatItKeeps Allow [s3:PutObject] [" + b + "/refused/* " + b + "/keys/* " + b + "/delivered/* " + b + "/claims/*] " + inAccount,
		"ReadTheLedger Allow [s3:GetObject] [" + b + "/delivered/* " + b + "/claims/*] " + inAccount,
		"ListTheClaims Allow [s3:ListBucketVersions] [" + b + "] map[StringEquals:map[s3:ResourceAccount:123456789012] StringLike:map[s3:prefix:claims/*]]",
		"TellAMissingEntry Allow [s3:ListBucket] [" + b + "] " + inAccount,
		"TakeTheDeadLetterQueueIn Allow [sqs:ReceiveMessage sqs:DeleteMessage sqs:ChangeMessageVisibility] [" + dlq + "] map[]",
		"FindInstanceOwners Allow [ec2:DescribeInstances] [*] map[StringEquals:map[aws:RequestedRegion:eu-west-1]]",
		"WriteOwnLogs Allow [logs:CreateLogStream logs:PutLogEvents] [arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/kib-dev-router:log-stream:*] map[]",
		"LearnTheSenderRoleIDs Allow [iam:GetRole] [arn:aws:iam::123456789012:role/kib-dev-forward-eu-west-1 arn:aws:iam::123456789012:role/kib-dev-redrive-eu-west-1] map[]",
	}
	d := Policy(env, s, Queues{Central: central, Quarantine: quarantine, DLQ: dlq}, Evidence{SealKey: key, Archive: b}, "/aws/lambda/kib-dev-router")
	if len(d.Statement) != len(want) {
		t.Fatalf("%d statements, want %d: %+v", len(d.Statement), len(want), d.Statement)
	}
	for i, st := range d.Statement {
		if line := fmt.Sprint(st.Sid, " ", st.Effect, " ", st.Action, " ", st.Resource, " ", st.Condition); line != want[i] || st.Principal != nil {
			t.Errorf("statement %d:\n got %s\nwant %s", i, line, want[i])
		}
	}
}

// TestThePolicyOfAHubWithoutSenderRoles: a stack whose rules deliver through the central queue's policy and that has
// no redrive role learns no role's ID (no iam:GetRole at all); its archive's statements are the same.
func TestThePolicyOfAHubWithoutSenderRoles(t *testing.T) {
	env := awsenv.Env{Partition: "aws", Region: "eu-west-1", Account: "123456789012"}
	s := contract.Settings{Account: env.Account, Partition: env.Partition, ClusterQueuePrefix: "kib-dev_", ForwarderRoleName: "kib-dev-forward-eu-west-1",
		HubDelivery: contract.HubDeliveryQueuePolicy}
	d := Policy(env, s, Queues{Central: "c", Quarantine: "q", DLQ: "d"}, Evidence{SealKey: "k", Archive: "arn:aws:s3:::b"}, "/aws/lambda/kib-dev-router")
	var sids []string
	for _, st := range d.Statement {
		sids = append(sids, st.Sid)
	}
	want := "[ReadCentralQueue ForwardToClusterQueues KeepRefusedMessages SealWhatItKeeps ArchiveWhatItKeeps ReadTheLedger ListTheClaims " +
		"TellAMissingEntry TakeTheDeadLetterQueueIn FindInstanceOwners WriteOwnLogs]"
	if fmt.Sprint(sids) != want {
		t.Errorf("statements %v, want %s", sids, want)
	}
}
