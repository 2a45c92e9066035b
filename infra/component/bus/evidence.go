package bus

import (
	"fmt"
	"slices"
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
// administration stays with whoever deploys, and it holds every call pulumi-aws makes on the key: after CreateKey and
// on every refresh its Read calls DescribeKey, GetKeyPolicy, GetKeyRotationStatus (for any key of origin AWS_KMS,
// asymmetric ones included) and ListResourceTags, and fails the resource when one is refused (terraform-provider-aws
// v5.100.0, internal/service/kms/key.go, findKeyInfo); an update calls PutKeyPolicy, TagResource, UntagResource and
// UpdateKeyDescription, a delete ScheduleKeyDeletion (resourceKeyUpdate, resourceKeyDelete); the alias CreateAlias,
// UpdateAlias and DeleteAlias (alias.go). KMS authorizes through the key policy first ("Key policies in AWS KMS"): an
// action left out here is refused to an administrator whatever IAM allows (tests/iam, deployRows).
var sealKeyAdministration = []string{
	"kms:CancelKeyDeletion", "kms:CreateAlias", "kms:DeleteAlias", "kms:DescribeKey", "kms:DisableKey", "kms:EnableKey",
	"kms:GetKeyPolicy", "kms:GetKeyRotationStatus", "kms:GetPublicKey", "kms:ListAliases", "kms:ListGrants", "kms:ListKeyPolicies",
	"kms:ListResourceTags", "kms:PutKeyPolicy", "kms:RevokeGrant", "kms:ScheduleKeyDeletion", "kms:TagResource", "kms:UntagResource",
	"kms:UpdateAlias", "kms:UpdateKeyDescription", "kms:Verify",
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

// ArchiveBucketPrefix starts the name of every archive of the bus: the one it has (ArchiveBucketName), and those a
// release before 0.4.0 made, whose names S3 completed with a unique suffix of 26 digits (the provider took a prefix of
// at most 37 characters). S3 takes lowercase names only ("General purpose bucket naming rules",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
func ArchiveBucketPrefix(namePrefix string) string {
	const suffix, most = "-archive-", 37
	p := strings.ToLower(namePrefix)
	if len(p) > most-len(suffix) {
		p = strings.TrimRight(p[:most-len(suffix)], "-")
	}
	return p + suffix
}

// ArchiveBucketName is the archive's name: the bus's prefix, its account and its region, one name for the life of the
// bus. Bucket names are global to all of S3 and a bucket retained on destroy keeps its name, so a stack deployed again
// finds the archive it had and adopts it (Adoption), its locked records and the public key that verifies them with it,
// where a name S3 made unique would leave the first archive behind and start a second. The account in the name makes
// it unlikely to be another's, not impossible (anyone may take a free name): only a bucket S3 answers as the
// account's is adopted (the preflight, infra/bucketowner), and the roles' statements hold only in the account's
// buckets (OfAccount). S3 takes at most 63 characters (the prefix is cut to fit, keeping more of a long name prefix
// than ArchiveBucketPrefix does: RedrivePolicy names this bucket then).
func ArchiveBucketName(namePrefix, account, region string) string {
	const most, archive = 63, "-archive-"
	suffix := archive + account + "-" + region
	p := strings.ToLower(namePrefix)
	if len(p)+len(suffix) > most {
		p = strings.TrimRight(p[:most-len(suffix)], "-")
	}
	return p + suffix
}

// archiveExists reports whether the archive's bucket exists already: the archive of an earlier deployment of the bus,
// retained on destroy, or this stack's own. The provider's data source reads it with HeadBucket (s3:ListBucket) and
// fails with its not-found error for a bucket that is not there; any other failure (a bucket of that name in another
// account answers 403) stops the preview, naming the bucket. It cannot say who owns a bucket it finds: it decides only
// when the preflight could not ask S3 (AdoptIfFound).
func archiveExists(ctx *pulumi.Context, bucket string, opts ...pulumi.InvokeOption) (bool, error) {
	_, err := s3.LookupBucket(ctx, &s3.LookupBucketArgs{Bucket: bucket}, opts...)
	switch {
	case err == nil:
		return true, nil
	case strings.Contains(err.Error(), "couldn't find resource"), strings.Contains(err.Error(), "NotFound"), strings.Contains(err.Error(), "NoSuchBucket"):
		return false, nil
	}
	return false, fmt.Errorf("looking up the archive bucket %s (is it another account's? the archive's name is the bus's, its account's and its region's): %w", bucket, err)
}

// Adoption says whether the archive's bucket is adopted (imported with everything that protects it) or created.
type Adoption int

const (
	// AdoptIfFound adopts a bucket of the archive's name that the provider's lookup finds (archiveExists): what is left
	// when nothing could ask S3 who owns it (the preflight stepped aside from an identity it does not follow).
	AdoptIfFound Adoption = iota
	// AdoptOwned adopts it: S3 answered it as the stack's account's (HeadBucket with ExpectedBucketOwner, the preflight).
	AdoptOwned
	// AdoptNothing declares the bucket without an import: there is none of the archive's name, or the stack's last
	// update had an archive already, which its state holds (an import over another ID in state would replace it).
	AdoptNothing
)

// adopts says whether the archive's bucket, of name bucket, is to be imported.
func (a Adoption) adopts(ctx *pulumi.Context, bucket string, opts ...pulumi.InvokeOption) (bool, error) {
	switch a {
	case AdoptOwned:
		return true, nil
	case AdoptNothing:
		return false, nil
	}
	return archiveExists(ctx, bucket, opts...)
}

// OfAccount is the condition that keeps an S3 statement to the buckets of account (s3:ResourceAccount, "Filters access
// by the resource owner AWS account ID": "Actions, resources, and condition keys for Amazon S3",
// https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html): bucket names are global to
// all of S3, and a bucket of the archive's name that another account holds (made after a destroy, say) is refused
// whatever it invites, as every call the router and make requeue make names the account as the bucket's owner
// (ExpectedBucketOwner).
func OfAccount(account string) map[string]map[string]any {
	return map[string]map[string]any{"StringEquals": {"s3:ResourceAccount": account}}
}

// Evidence is what the bus declares to keep its refusals: the seal key and the archive bucket.
type Evidence struct {
	SealKeyARN, ArchiveBucket, ArchiveBucketARN pulumi.StringOutput
}

// EvidenceArgs shape the evidence.
type EvidenceArgs struct {
	NamePrefix    string
	RouterRoleARN string
	// Adoption says whether a bucket of the archive's name is adopted; Invoke is how it is looked up (AdoptIfFound):
	// with the bus's provider.
	Adoption Adoption
	Invoke   []pulumi.InvokeOption
	// Mode and RetentionDays are the archive's default retention (S3's GOVERNANCE or COMPLIANCE).
	Mode          string
	RetentionDays int
	Env           awsenv.Env
	Tags          pulumi.StringMap
}

// declareEvidence declares the seal key, its alias and the archive bucket with its versioning, Object Lock, encryption,
// public access block and policy. The bucket and its settings are retained on delete (pulumi destroy): a bucket with
// locked versions cannot be deleted before they expire, and its records must outlive the stack, with the settings
// that protect them. A bucket of the archive's name that exists already is adopted (imported) with its settings only
// when it is the account's own (args.Adoption): the bus's own archive, retained by a destroy; never when the stack's
// state holds an archive already. A stack made by a release before 0.4.0 keeps the archive it has, named from a
// prefix (the name is not an input to change).
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
	bucketName := ArchiveBucketName(args.NamePrefix, env.Account, env.Region)
	exists, err := args.Adoption.adopts(ctx, bucketName, args.Invoke...)
	if err != nil {
		return Evidence{}, err
	}
	retain := append([]pulumi.ResourceOption{pulumi.RetainOnDelete(true)}, opts...)
	adopt := func(o []pulumi.ResourceOption) []pulumi.ResourceOption {
		if !exists {
			return o
		}
		return append(slices.Clone(o), pulumi.Import(pulumi.ID(bucketName)))
	}
	bucket, err := s3.NewBucketV2(ctx, name+"-archive", &s3.BucketV2Args{
		Bucket:            pulumi.String(bucketName),
		ObjectLockEnabled: pulumi.Bool(true),
		Tags:              args.Tags,
	}, append(adopt(retain), pulumi.IgnoreChanges([]string{"bucket", "bucketPrefix"}))...)
	if err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive bucket: %w", err)
	}
	versioning, err := s3.NewBucketVersioningV2(ctx, name+"-archive", &s3.BucketVersioningV2Args{
		Bucket: bucket.ID(), VersioningConfiguration: &s3.BucketVersioningV2VersioningConfigurationArgs{Status: pulumi.String("Enabled")},
	}, adopt(retain)...)
	if err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive's versioning: %w", err)
	}
	// Object Lock needs versioning ("Object Lock works only in buckets that have S3 Versioning enabled").
	if _, err := s3.NewBucketObjectLockConfigurationV2(ctx, name+"-archive", &s3.BucketObjectLockConfigurationV2Args{
		Bucket: bucket.ID(), ObjectLockEnabled: pulumi.String("Enabled"),
		Rule: &s3.BucketObjectLockConfigurationV2RuleArgs{DefaultRetention: &s3.BucketObjectLockConfigurationV2RuleDefaultRetentionArgs{
			Mode: pulumi.String(args.Mode), Days: pulumi.Int(args.RetentionDays),
		}},
	}, append(adopt(retain), pulumi.DependsOn([]pulumi.Resource{versioning}))...); err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive's Object Lock: %w", err)
	}
	if _, err := s3.NewBucketServerSideEncryptionConfigurationV2(ctx, name+"-archive", &s3.BucketServerSideEncryptionConfigurationV2Args{
		Bucket: bucket.ID(), Rules: s3.BucketServerSideEncryptionConfigurationV2RuleArray{&s3.BucketServerSideEncryptionConfigurationV2RuleArgs{
			ApplyServerSideEncryptionByDefault: &s3.BucketServerSideEncryptionConfigurationV2RuleApplyServerSideEncryptionByDefaultArgs{
				SseAlgorithm: pulumi.String("AES256"),
			},
		}},
	}, adopt(retain)...); err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive's encryption: %w", err)
	}
	block, err := s3.NewBucketPublicAccessBlock(ctx, name+"-archive", &s3.BucketPublicAccessBlockArgs{
		Bucket: bucket.ID(), BlockPublicAcls: pulumi.Bool(true), BlockPublicPolicy: pulumi.Bool(true), IgnorePublicAcls: pulumi.Bool(true),
		RestrictPublicBuckets: pulumi.Bool(true),
	}, adopt(retain)...)
	if err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive's public access block: %w", err)
	}
	routerRole := args.RouterRoleARN
	if _, err := s3.NewBucketPolicy(ctx, name+"-archive", &s3.BucketPolicyArgs{
		Bucket: bucket.ID(),
		Policy: bucket.Arn.ApplyT(func(arn string) string { return ArchivePolicy(arn, routerRole).JSON() }).(pulumi.StringOutput),
	}, append(adopt(retain), pulumi.DependsOn([]pulumi.Resource{block}))...); err != nil {
		return Evidence{}, fmt.Errorf("declaring the archive's policy: %w", err)
	}
	return Evidence{SealKeyARN: key.Arn, ArchiveBucket: bucket.Bucket, ArchiveBucketARN: bucket.Arn}, nil
}

// ArchiveWrites are the keys the router writes in the archive bucket: its records, the seal key's public key, and the
// ledger of the sealed records it delivers (claims, then deliveries).
func ArchiveWrites(bucketARN string) []string {
	return append([]string{bucketARN + "/" + contract.ArchiveRefusedPrefix + "*", bucketARN + "/" + contract.ArchiveKeysPrefix + "*"}, Ledger(bucketARN)...)
}

// Ledger is the keys of the ledger of the sealed records the router delivers, which it reads back: the deliveries and
// the claims (router/archive, ledger.go).
func Ledger(bucketARN string) []string {
	return []string{bucketARN + "/" + contract.ArchiveDeliveredPrefix + "*", bucketARN + "/" + contract.ArchiveClaimsPrefix + "*"}
}
