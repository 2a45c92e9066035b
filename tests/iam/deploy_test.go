package iam

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// call is one AWS call pulumi-aws makes on a resource whose policy can refuse the deployer, the IAM action it needs,
// and where the Terraform provider it bundles makes it: pulumi-aws v6.83.2 bundles terraform-provider-aws v5.100.0
// (the last v5; its SDK has every resource 5.100.0 added and none of 6.x), paths relative to that repository.
type call struct {
	op, api, action, source string
}

// The operations: a create, a read (after the create and on every refresh: `pulumi refresh`, `pulumi up --refresh`),
// an update of what the stack may change, and a delete (pulumi destroy, or the resource removed from the program).
const (
	create, read, update, del = "create", "read", "update", "delete"
)

// keyCalls are the calls on the seal key and its alias (aws_kms_key, aws_kms_alias). CreateKey is not among them: it
// names no key, so no key policy decides it.
var keyCalls = []call{
	{create, "GetKeyPolicy", "kms:GetKeyPolicy", "internal/service/kms/key.go: resourceKeyCreate, waitKeyPolicyPropagated (5 reads alike)"},
	{create, "ListResourceTags", "kms:ListResourceTags", "internal/service/kms/tags_gen.go: waitTagsPropagated (tags set)"},
	{create, "CreateAlias", "kms:CreateAlias", "internal/service/kms/alias.go: resourceAliasCreate"},
	{read, "DescribeKey", "kms:DescribeKey", "internal/service/kms/key.go: findKeyInfo, findKeyByID"},
	{read, "GetKeyPolicy", "kms:GetKeyPolicy", "internal/service/kms/key.go: findKeyInfo, findKeyPolicyByTwoPartKey"},
	{read, "GetKeyRotationStatus", "kms:GetKeyRotationStatus", "internal/service/kms/key.go: findKeyInfo, findKeyRotationEnabledByKeyID (origin AWS_KMS, any key spec)"},
	{read, "ListResourceTags", "kms:ListResourceTags", "internal/service/kms/tags_gen.go: listTags"},
	{update, "PutKeyPolicy", "kms:PutKeyPolicy", "internal/service/kms/key.go: resourceKeyUpdate (policy changed)"},
	{update, "UpdateKeyDescription", "kms:UpdateKeyDescription", "internal/service/kms/key.go: resourceKeyUpdate (description changed)"},
	{update, "TagResource", "kms:TagResource", "internal/service/kms/tags_gen.go: updateTags"},
	{update, "UntagResource", "kms:UntagResource", "internal/service/kms/tags_gen.go: updateTags"},
	{update, "UpdateAlias", "kms:UpdateAlias", "internal/service/kms/alias.go: resourceAliasUpdate"},
	{del, "ScheduleKeyDeletion", "kms:ScheduleKeyDeletion", "internal/service/kms/key.go: resourceKeyDelete"},
	{del, "DescribeKey", "kms:DescribeKey", "internal/service/kms/key.go: resourceKeyDelete, waitKeyDeleted"},
	{del, "DeleteAlias", "kms:DeleteAlias", "internal/service/kms/alias.go: resourceAliasDelete"},
}

// bucketCalls are the calls on the archive bucket and the settings declared on it (aws_s3_bucket,
// aws_s3_bucket_versioning, aws_s3_bucket_object_lock_configuration, aws_s3_bucket_server_side_encryption_configuration,
// aws_s3_bucket_public_access_block, aws_s3_bucket_policy). Each is retained on delete, so the provider is never asked to
// delete them. CreateBucket names a bucket that has no policy yet.
var bucketCalls = []call{
	{create, "HeadBucket", "s3:ListBucket", "internal/service/s3/bucket.go: resourceBucketCreate, findBucket"},
	{create, "PutBucketTagging", "s3:PutBucketTagging", "internal/service/s3/tags.go: bucketCreateTags, bucketUpdateTags"},
	{create, "PutBucketVersioning", "s3:PutBucketVersioning", "internal/service/s3/bucket_versioning.go: resourceBucketVersioningCreate"},
	{create, "PutObjectLockConfiguration", "s3:PutBucketObjectLockConfiguration", "internal/service/s3/bucket_object_lock_configuration.go: resourceBucketObjectLockConfigurationCreate"},
	{create, "PutBucketEncryption", "s3:PutEncryptionConfiguration", "internal/service/s3/bucket_server_side_encryption_configuration.go: resourceBucketServerSideEncryptionConfigurationCreate"},
	{create, "PutPublicAccessBlock", "s3:PutBucketPublicAccessBlock", "internal/service/s3/bucket_public_access_block.go: resourceBucketPublicAccessBlockCreate"},
	{create, "GetPublicAccessBlock", "s3:GetBucketPublicAccessBlock", "internal/service/s3/bucket_public_access_block.go: resourceBucketPublicAccessBlockCreate (waits)"},
	{create, "PutBucketPolicy", "s3:PutBucketPolicy", "internal/service/s3/bucket_policy.go: resourceBucketPolicyPut"},
	{read, "HeadBucket", "s3:ListBucket", "internal/service/s3/bucket.go: resourceBucketRead, findBucket"},
	{read, "GetBucketPolicy", "s3:GetBucketPolicy", "internal/service/s3/bucket.go: resourceBucketRead, findBucketPolicy; bucket_policy.go: resourceBucketPolicyRead"},
	{read, "GetBucketAcl", "s3:GetBucketAcl", "internal/service/s3/bucket.go: resourceBucketRead, findBucketACL"},
	{read, "GetBucketCors", "s3:GetBucketCORS", "internal/service/s3/bucket.go: resourceBucketRead, findCORSRules"},
	{read, "GetBucketWebsite", "s3:GetBucketWebsite", "internal/service/s3/bucket.go: resourceBucketRead, findBucketWebsite"},
	{read, "GetBucketVersioning", "s3:GetBucketVersioning", "internal/service/s3/bucket.go: resourceBucketRead; bucket_versioning.go: waitForBucketVersioningStatus"},
	{read, "GetBucketAccelerateConfiguration", "s3:GetAccelerateConfiguration", "internal/service/s3/bucket.go: resourceBucketRead, findBucketAccelerateConfiguration"},
	{read, "GetBucketRequestPayment", "s3:GetBucketRequestPayment", "internal/service/s3/bucket.go: resourceBucketRead, findBucketRequestPayment"},
	{read, "GetBucketLogging", "s3:GetBucketLogging", "internal/service/s3/bucket.go: resourceBucketRead, findLoggingEnabled"},
	{read, "GetBucketLifecycleConfiguration", "s3:GetLifecycleConfiguration", "internal/service/s3/bucket.go: resourceBucketRead, findBucketLifecycleConfiguration"},
	{read, "GetBucketReplication", "s3:GetReplicationConfiguration", "internal/service/s3/bucket.go: resourceBucketRead, findReplicationConfiguration"},
	{read, "GetBucketEncryption", "s3:GetEncryptionConfiguration", "internal/service/s3/bucket.go: resourceBucketRead, findServerSideEncryptionConfiguration"},
	{read, "GetObjectLockConfiguration", "s3:GetBucketObjectLockConfiguration", "internal/service/s3/bucket.go: resourceBucketRead, findObjectLockConfiguration"},
	{read, "GetBucketTagging", "s3:GetBucketTagging", "internal/service/s3/tags.go: bucketListTags (the tags interceptor)"},
	{read, "GetPublicAccessBlock", "s3:GetBucketPublicAccessBlock", "internal/service/s3/bucket_public_access_block.go: resourceBucketPublicAccessBlockRead"},
	{update, "PutBucketTagging", "s3:PutBucketTagging", "internal/service/s3/tags.go: bucketUpdateTags"},
	{update, "PutObjectLockConfiguration", "s3:PutBucketObjectLockConfiguration", "internal/service/s3/bucket_object_lock_configuration.go: resourceBucketObjectLockConfigurationUpdate (mode, days)"},
	{update, "PutBucketEncryption", "s3:PutEncryptionConfiguration", "internal/service/s3/bucket_server_side_encryption_configuration.go: resourceBucketServerSideEncryptionConfigurationUpdate"},
	{update, "PutPublicAccessBlock", "s3:PutBucketPublicAccessBlock", "internal/service/s3/bucket_public_access_block.go: resourceBucketPublicAccessBlockUpdate"},
	{update, "PutBucketPolicy", "s3:PutBucketPolicy", "internal/service/s3/bucket_policy.go: resourceBucketPolicyPut"},
}

// queueCalls are the calls on a queue of the bus and its policy (aws_sqs_queue, aws_sqs_queue_policy).
var queueCalls = []call{
	{create, "GetQueueAttributes", "sqs:GetQueueAttributes", "internal/service/sqs/queue.go: resourceQueueCreate, waitQueueAttributesPropagated"},
	{create, "SetQueueAttributes", "sqs:SetQueueAttributes", "internal/service/sqs/attribute_funcs.go: queueAttributeHandler.Upsert (the policy)"},
	{read, "GetQueueAttributes", "sqs:GetQueueAttributes", "internal/service/sqs/queue.go: resourceQueueRead, findQueueAttributesByURL"},
	{read, "ListQueueTags", "sqs:ListQueueTags", "internal/service/sqs/tags_gen.go: listTags (the tags interceptor)"},
	{update, "SetQueueAttributes", "sqs:SetQueueAttributes", "internal/service/sqs/queue.go: resourceQueueUpdate; attribute_funcs.go: Upsert"},
	{update, "TagQueue", "sqs:TagQueue", "internal/service/sqs/tags_gen.go: updateTags"},
	{update, "UntagQueue", "sqs:UntagQueue", "internal/service/sqs/tags_gen.go: updateTags"},
	{del, "SetQueueAttributes", "sqs:SetQueueAttributes", "internal/service/sqs/attribute_funcs.go: queueAttributeHandler.Delete (the policy, emptied)"},
	{del, "DeleteQueue", "sqs:DeleteQueue", "internal/service/sqs/queue.go: resourceQueueDelete"},
	{del, "GetQueueAttributes", "sqs:GetQueueAttributes", "internal/service/sqs/queue.go: resourceQueueDelete, waitQueueDeleted"},
}

// deployer is who runs pulumi up: a role of the account with AdministratorAccess (every action on every resource), as
// AWS's managed policy of that name allows.
func (s *Stack) deployer() caller { return s.admin("*") }

// deployRows: the deployer may make every call pulumi-aws makes on the resources whose policy can refuse it (the seal
// key, the archive bucket, every queue of the bus and of its members): the stack is deployable, refreshable, updatable
// and destroyable under its own policies. AWS's default key policy for contrast is not needed: a row the key policy
// leaves out is denied, which a stack without kms:GetKeyRotationStatus among the key's administration showed.
func deployRows(t *testing.T, s *Stack) []row {
	t.Helper()
	who := s.deployer()
	var rows []row
	for _, c := range keyCalls {
		rows = append(rows, row{name: s.Name + ": the deployer's " + c.op + " calls " + c.api + " on the seal key (" + c.source + ")", who: who,
			action: c.action, resource: s.SealKey.ARN, resourceAcc: s.Account, resourcePolicy: s.SealKey.Policy, want: allowed})
	}
	for _, c := range bucketCalls {
		rows = append(rows, row{name: s.Name + ": the deployer's " + c.op + " calls " + c.api + " on the archive (" + c.source + ")", who: who,
			action: c.action, resource: s.Archive.ARN, resourceAcc: s.Account, resourcePolicy: s.Archive.Policy, want: allowed})
	}
	for _, st := range append([]*Stack{s}, s.memberStacks()...) {
		for _, q := range st.Queues {
			for _, c := range queueCalls {
				rows = append(rows, on(s.Name+": the deployer's "+c.op+" calls "+c.api+" on "+q.Name+" ("+c.source+")", st.deployer(), c.action, q, st.Account, allowed))
			}
		}
	}
	return rows
}

// memberStacks are the stacks of the hub's members, in order.
func (s *Stack) memberStacks() []*Stack {
	var out []*Stack
	for _, m := range slices.Sorted(maps.Keys(s.Members)) {
		out = append(out, s.Members[m])
	}
	return out
}

// TestWhatTheStackDeniesIsNoCallOfTheProvider: no Deny of the stack's resource policies (the seal key's, the archive's,
// every queue's) names an action pulumi-aws calls for what the stack declares, but those a condition the provider
// never meets confines (aws:SecureTransport false: the provider calls only https endpoints). What they deny is what
// the stack never asks: kms:Sign, s3:PutObject and the deletion of records, s3:PutLifecycleConfiguration (called only
// for a lifecycle rule, which the archive has none of), sqs:SendMessage and the reading of messages, sqs:PurgeQueue.
func TestWhatTheStackDeniesIsNoCallOfTheProvider(t *testing.T) {
	calls := map[string]bool{}
	for _, cs := range [][]call{keyCalls, bucketCalls, queueCalls} {
		for _, c := range cs {
			calls[c.action] = true
		}
	}
	for _, st := range []struct {
		name, text string
	}{{"dev", devStack}, {"org", orgStack}, {"policy", policyStack}} {
		s := load(t, st.name, account, "eu-west-1", render(t, st.name, st.text, account))
		policies := map[string]Policy{"the seal key": s.SealKey.Policy, "the archive": s.Archive.Policy}
		for _, x := range append([]*Stack{s}, s.memberStacks()...) {
			for _, q := range x.Queues {
				policies[q.Name] = q.Policy
			}
		}
		denies := 0
		for what, p := range policies {
			for _, stmt := range statements(p) {
				if stmt["Effect"] != "Deny" || onlyWithoutTLS(stmt) {
					continue
				}
				denies++
				for _, a := range actionsOf(stmt) {
					for c := range calls {
						if matches(a, c) {
							t.Errorf("%s: %s's statement %v denies %s, which pulumi-aws calls", s.Name, what, stmt["Sid"], c)
						}
					}
				}
			}
		}
		if denies == 0 {
			t.Fatalf("%s: no Deny read: the test reads nothing", s.Name)
		}
	}
}

// onlyWithoutTLS reports whether stmt's one condition is aws:SecureTransport false.
func onlyWithoutTLS(stmt map[string]any) bool {
	c, _ := stmt["Condition"].(map[string]any)
	b, _ := c["Bool"].(map[string]any)
	return len(c) == 1 && len(b) == 1 && b["aws:SecureTransport"] == "false"
}

func actionsOf(stmt map[string]any) []string {
	switch a := stmt["Action"].(type) {
	case string:
		return []string{a}
	case []any:
		var out []string
		for _, x := range a {
			out = append(out, x.(string))
		}
		return out
	}
	return nil
}

// matches reports whether the policy's action pattern (a service prefix and a name that may end in *) names action.
func matches(pattern, action string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(strings.ToLower(action), strings.ToLower(prefix))
	}
	return strings.EqualFold(pattern, action)
}
