package bus

import (
	"fmt"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/kms"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/s3"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// What the router keeps of what it refuses is evidence (docs/security.md, "Sealed refusals", "The archive"): the seal
// key, whose signatures only the router can make, and the archive, a bucket whose records nobody deletes before their
// retention ends.

// SealKeyAlias names the seal key's alias.
func SealKeyAlias(namePrefix string) string { return "alias/" + namePrefix + "-seal" }

// SealKeyDeletionDays is the seal key's waiting period once its deletion is scheduled (pulumi destroy): KMS's longest,
// 30 days ("ScheduleKeyDeletion", PendingWindowInDays,
// https://docs.aws.amazon.com/kms/latest/APIReference/API_ScheduleKeyDeletion.html), to cancel a mistaken destroy. The
// archive keeps the key's public key, which checks every seal after the key is gone.
const SealKeyDeletionDays = 30

// sealKeyAdministration is what the account's principals may do with the seal key through their IAM policies: all
// of its administration, nothing that makes a seal (kms:Sign) nor gives another the right to (kms:CreateGrant). The
// administration stays with whoever deploys.
var sealKeyAdministration = []string{
	"kms:CancelKeyDeletion", "kms:CreateAlias", "kms:DeleteAlias", "kms:DescribeKey", "kms:DisableKey", "kms:EnableKey",
	"kms:GetKeyPolicy", "kms:GetPublicKey", "kms:ListAliases", "kms:ListGrants", "kms:ListKeyPolicies", "kms:ListResourceTags",
	"kms:PutKeyPolicy", "kms:RevokeGrant", "kms:ScheduleKeyDeletion", "kms:TagResource", "kms:UntagResource", "kms:UpdateAlias",
	"kms:UpdateKeyDescription", "kms:Verify",
}

// SealKeyPolicy is the seal key's policy: the account administers it through IAM (KMS refuses a policy that would lock
// its caller out, "Default key policy", https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html,
// and CreateKey's BypassPolicyLockoutSafetyCheck); kms:Sign is allowed to the router's role alone, by aws:PrincipalArn
// on the account (a role named as a principal must exist when the policy is set, and would be kept as its unique ID),
// and explicitly denied to every other principal, the key's administrators with kms:* included, whatever their IAM
// policies or a grant allow.
func SealKeyPolicy(env awsenv.Env, routerRoleARN string) policy.Document {
	root := map[string]any{"AWS": env.IAMARN("root")}
	onlyRouter := map[string]map[string]any{"ArnNotEquals": {"aws:PrincipalArn": routerRoleARN}}
	return policy.New(
		policy.Statement{Sid: "TheAccountAdministers", Effect: "Allow", Principal: root, Action: sealKeyAdministration, Resource: []string{"*"}},
		policy.Statement{Sid: "TheRouterSeals", Effect: "Allow", Principal: root, Action: []string{"kms:Sign"}, Resource: []string{"*"},
			Condition: map[string]map[string]any{"ArnEquals": {"aws:PrincipalArn": routerRoleARN}}},
		policy.Statement{Sid: "OnlyTheRouterSeals", Effect: "Deny", Principal: "*", Action: []string{"kms:Sign"}, Resource: []string{"*"}, Condition: onlyRouter},
	)
}

// ArchivePolicy is the archive bucket's policy: only the router writes records (aws:PrincipalArn), never over one (a
// PutObject without If-None-Match is denied: the s3:if-none-match condition key, "Enforce conditional writes on Amazon
// S3 buckets", https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes-enforce.html); nobody deletes a
// record, hides it behind a delete marker, bypasses governance retention or shortens a record's, nor sets a lifecycle
// rule that would expire what the lock lets go; and nothing but TLS. While the policy stands nobody erases a record,
// in either mode; in governance mode an administrator allowed s3:PutBucketPolicy can first change the policy (which
// CloudTrail records) and then delete a locked version with s3:BypassGovernanceRetention, to empty a test stack's
// archive; in compliance mode not even then, until the retention ends ("Object Lock", retention modes,
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html).
func ArchivePolicy(bucketARN, routerRoleARN string) policy.Document {
	objects := bucketARN + "/*"
	return policy.New(
		policy.Statement{Sid: "OnlyTheRouterArchives", Effect: "Deny", Principal: "*", Action: []string{"s3:PutObject"}, Resource: []string{objects},
			Condition: map[string]map[string]any{"ArnNotEquals": {"aws:PrincipalArn": routerRoleARN}}},
		policy.Statement{Sid: "NothingIsWrittenOver", Effect: "Deny", Principal: "*", Action: []string{"s3:PutObject"}, Resource: []string{objects},
			Condition: map[string]map[string]any{"Null": {"s3:if-none-match": "true"}}},
		policy.Statement{Sid: "NobodyDeletes", Effect: "Deny", Principal: "*", Resource: []string{objects}, Action: []string{
			"s3:DeleteObject", "s3:DeleteObjectVersion", "s3:BypassGovernanceRetention", "s3:PutObjectRetention", "s3:PutObjectLegalHold",
		}},
		policy.Statement{Sid: "NothingExpires", Effect: "Deny", Principal: "*", Action: []string{"s3:PutLifecycleConfiguration"}, Resource: []string{bucketARN}},
		policy.Statement{Sid: "DenyInsecureTransport", Effect: "Deny", Principal: "*", Action: []string{"s3:*"}, Resource: []string{bucketARN, objects},
			Condition: map[string]map[string]any{"Bool": {"aws:SecureTransport": "false"}}},
	)
}

// ArchiveBucketPrefix starts the archive bucket's name, which AWS completes with a unique suffix: bucket names are
// global to all of S3, and a bucket retained on destroy keeps its name, so a stack deployed again makes a new archive
// beside the old one, which keeps what it holds. S3 takes lowercase names only; the provider takes a prefix of at most
// 37 characters ("General purpose bucket naming rules",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
func ArchiveBucketPrefix(namePrefix string) string {
	const suffix, most = "-archive-", 37
	p := strings.ToLower(namePrefix)
	if len(p) > most-len(suffix) {
		p = strings.TrimRight(p[:most-len(suffix)], "-")
	}
	return p + suffix
}

// Evidence is what the bus declares to keep its refusals: the seal key and the archive bucket.
type Evidence struct {
	SealKeyARN, ArchiveBucket, ArchiveBucketARN pulumi.StringOutput
}

// EvidenceArgs shape the evidence.
type EvidenceArgs struct {
	NamePrefix    string
	RouterRoleARN string
	// Mode and RetentionDays are the archive's default retention (S3's GOVERNANCE or COMPLIANCE).
	Mode          string
	RetentionDays int
	Env           awsenv.Env
	Tags          pulumi.StringMap
}

// declareEvidence declares the seal key, its alias and the archive bucket with its versioning, Object Lock, encryption,
// public access block and policy. The bucket and its settings are retained on delete (pulumi destroy): a bucket with
// locked versions cannot be deleted before they expire, and its records must outlive the stack, with the settings
// that protect them.
func declareEvidence(ctx *pulumi.Context, name string, args EvidenceArgs, opts ...pulumi.ResourceOption) (Evidence, error) {
	env := args.Env
	key, err := kms.NewKey(ctx, name+"-seal", &kms.KeyArgs{
		Description:           pulumi.String("Seals what the interruption bus's router keeps of the messages it refuses (" + args.NamePrefix + ")"),
		CustomerMasterKeySpec: pulumi.String(contract.SealKeySpec),
		KeyUsage:              pulumi.String(contract.SealKeyUsage),
		Policy:                pulumi.String(SealKeyPolicy(env, args.RouterRoleARN).JSON()),
		DeletionWindowInDays:  pulumi.Int(SealKeyDeletionDays),
		Tags:                  args.Tags,
	}, opts...)
	if err != nil {
		return Evidence{}, fmt.Errorf("declaring the seal key: %w", err)
	}
	if _, err := kms.NewAlias(ctx, name+"-seal", &kms.AliasArgs{Name: pulumi.String(SealKeyAlias(args.NamePrefix)), TargetKeyId: key.KeyId}, opts...); err != nil {
		return Evidence{}, fmt.Errorf("declaring the seal key's alias: %w", err)
	}
	retain := append([]pulumi.ResourceOption{pulumi.RetainOnDelete(true)}, opts...)
	bucket, err := s3.NewBucketV2(ctx, name+"-archive", &s3.BucketV2Args{
		BucketPrefix:      pulumi.String(ArchiveBucketPrefix(args.NamePrefix)),
		ObjectLockEnabled: pulumi.Bool(true),
		Tags:              args.Tags,
	}, retain...)
	if err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive bucket: %w", err)
	}
	versioning, err := s3.NewBucketVersioningV2(ctx, name+"-archive", &s3.BucketVersioningV2Args{
		Bucket: bucket.ID(), VersioningConfiguration: &s3.BucketVersioningV2VersioningConfigurationArgs{Status: pulumi.String("Enabled")},
	}, retain...)
	if err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive's versioning: %w", err)
	}
	// Object Lock needs versioning ("Object Lock works only in buckets that have S3 Versioning enabled").
	if _, err := s3.NewBucketObjectLockConfigurationV2(ctx, name+"-archive", &s3.BucketObjectLockConfigurationV2Args{
		Bucket: bucket.ID(), ObjectLockEnabled: pulumi.String("Enabled"),
		Rule: &s3.BucketObjectLockConfigurationV2RuleArgs{DefaultRetention: &s3.BucketObjectLockConfigurationV2RuleDefaultRetentionArgs{
			Mode: pulumi.String(args.Mode), Days: pulumi.Int(args.RetentionDays),
		}},
	}, append(retain, pulumi.DependsOn([]pulumi.Resource{versioning}))...); err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive's Object Lock: %w", err)
	}
	if _, err := s3.NewBucketServerSideEncryptionConfigurationV2(ctx, name+"-archive", &s3.BucketServerSideEncryptionConfigurationV2Args{
		Bucket: bucket.ID(), Rules: s3.BucketServerSideEncryptionConfigurationV2RuleArray{&s3.BucketServerSideEncryptionConfigurationV2RuleArgs{
			ApplyServerSideEncryptionByDefault: &s3.BucketServerSideEncryptionConfigurationV2RuleApplyServerSideEncryptionByDefaultArgs{
				SseAlgorithm: pulumi.String("AES256"),
			},
		}},
	}, retain...); err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive's encryption: %w", err)
	}
	block, err := s3.NewBucketPublicAccessBlock(ctx, name+"-archive", &s3.BucketPublicAccessBlockArgs{
		Bucket: bucket.ID(), BlockPublicAcls: pulumi.Bool(true), BlockPublicPolicy: pulumi.Bool(true), IgnorePublicAcls: pulumi.Bool(true),
		RestrictPublicBuckets: pulumi.Bool(true),
	}, retain...)
	if err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive's public access block: %w", err)
	}
	routerRole := args.RouterRoleARN
	if _, err := s3.NewBucketPolicy(ctx, name+"-archive", &s3.BucketPolicyArgs{
		Bucket: bucket.ID(),
		Policy: bucket.Arn.ApplyT(func(arn string) string { return ArchivePolicy(arn, routerRole).JSON() }).(pulumi.StringOutput),
	}, append(retain, pulumi.DependsOn([]pulumi.Resource{block}))...); err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive's policy: %w", err)
	}
	return Evidence{SealKeyARN: key.Arn, ArchiveBucket: bucket.Bucket, ArchiveBucketARN: bucket.Arn}, nil
}

// ArchiveWrites are the keys the router writes in the archive bucket: its records and the seal key's public key.
func ArchiveWrites(bucketARN string) []string {
	return []string{bucketARN + "/" + contract.ArchiveRefusedPrefix + "*", bucketARN + "/" + contract.ArchiveKeysPrefix + "*"}
}
