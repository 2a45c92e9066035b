package infra_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// TestTheEvidence: the stack declares the seal key (ECC P-256 for signing, its deletion 30 days off, its alias) and the
// archive: a bucket of a lowercase prefix with Object Lock, versioning, SSE, every public access blocked, the default
// retention configured (governance and a year unless set), a policy that lets only the router write and nobody
// unlock; the bucket and what protects it retained on delete, the key not; the outputs name both.
func TestTheEvidence(t *testing.T) {
	for _, tt := range []struct {
		name    string
		archive string
		mode    string
		days    float64
	}{
		{"defaults", "", "GOVERNANCE", 365},
		{"compliance, ten years", `{"mode":"compliance","retentionDays":3650}`, "COMPLIANCE", 3650},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kv := devConfig(t)
			if tt.archive != "" {
				kv["archive"] = tt.archive
			}
			r := mustRun(t, "dev", kv)
			key := r.resources.One(t, "aws:kms/key:Key")
			if stacktest.Str(t, key, "customerMasterKeySpec") != "ECC_NIST_P256" || stacktest.Str(t, key, "keyUsage") != "SIGN_VERIFY" ||
				stacktest.Num(t, key, "deletionWindowInDays") != 30 || key.RetainOnDelete {
				t.Errorf("seal key %v", key.Inputs)
			}
			keyPolicy := stacktest.Doc(t, key, "policy")
			deny := stacktest.Statement(t, keyPolicy, "OnlyTheRouterSeals")
			if deny.Effect != "Deny" || deny.Principal != "*" || !slices.Equal(deny.Action, []string{"kms:Sign"}) ||
				fmt.Sprint(deny.Condition) != "map[ArnNotEquals:map[aws:PrincipalArn:arn:aws:iam::123456789012:role/kib-dev-router-eu-west-1]]" {
				t.Errorf("the key's Deny = %+v", deny)
			}
			if admin := stacktest.Statement(t, keyPolicy, "TheAccountAdministers"); slices.Contains(admin.Action, "kms:Sign") ||
				slices.Contains(admin.Action, "kms:CreateGrant") || !slices.Contains(admin.Action, "kms:PutKeyPolicy") || slices.ContainsFunc(admin.Action, wildcard) {
				t.Errorf("the account administers with %v: all its administration, no wildcard, no Sign, no CreateGrant", admin.Action)
			}
			if a := r.resources.One(t, "aws:kms/alias:Alias"); stacktest.Str(t, a, "name") != "alias/kib-dev-seal" {
				t.Errorf("alias %v", a.Inputs)
			}
			b := r.resources.One(t, "aws:s3/bucketV2:BucketV2")
			if stacktest.Str(t, b, "bucket") != "kib-dev-archive-123456789012-eu-west-1" || b.Inputs["objectLockEnabled"].BoolValue() != true ||
				!slices.Equal(b.IgnoreChanges, []string{"bucket", "bucketPrefix"}) {
				t.Errorf("bucket %v, ignoring changes of %v", b.Inputs, b.IgnoreChanges)
			}
			lock := stacktest.Plain(r.resources.One(t, "aws:s3/bucketObjectLockConfigurationV2:BucketObjectLockConfigurationV2"))
			if fmt.Sprint(lock["rule"]) != fmt.Sprintf("map[defaultRetention:map[days:%v mode:%s]]", tt.days, tt.mode) {
				t.Errorf("object lock %v", lock)
			}
			if v := stacktest.Plain(r.resources.One(t, "aws:s3/bucketVersioningV2:BucketVersioningV2")); fmt.Sprint(v["versioningConfiguration"]) != "map[status:Enabled]" {
				t.Errorf("versioning %v", v)
			}
			if sse := stacktest.Plain(r.resources.One(t, "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2")); !strings.Contains(fmt.Sprint(sse), "sseAlgorithm:AES256") {
				t.Errorf("encryption %v", sse)
			}
			pab := r.resources.One(t, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")
			for _, k := range []string{"blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"} {
				if !pab.Inputs[resource.PropertyKey(k)].BoolValue() {
					t.Errorf("public access block %s not set", k)
				}
			}
			for _, typ := range []string{"aws:s3/bucketV2:BucketV2", "aws:s3/bucketVersioningV2:BucketVersioningV2",
				"aws:s3/bucketObjectLockConfigurationV2:BucketObjectLockConfigurationV2", "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
				"aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "aws:s3/bucketPolicy:BucketPolicy"} {
				if !r.resources.One(t, typ).RetainOnDelete {
					t.Errorf("%s is not retained on delete", typ)
				}
			}
			bucket := r.outputs["archiveBucket"].(string)
			p := stacktest.Doc(t, r.resources.One(t, "aws:s3/bucketPolicy:BucketPolicy"), "policy")
			router := "arn:aws:iam::123456789012:role/kib-dev-router-eu-west-1"
			if s := stacktest.Statement(t, p, "OnlyTheRouterArchives"); s.Effect != "Deny" || fmt.Sprint(s.Condition) != "map[ArnNotEquals:map[aws:PrincipalArn:"+router+"]]" ||
				!slices.Equal(s.Resource, []string{"arn:aws:s3:::" + bucket + "/*"}) {
				t.Errorf("OnlyTheRouterArchives = %+v", s)
			}
			if s := stacktest.Statement(t, p, "NobodyDeletes"); s.Effect != "Deny" || s.Condition != nil || !slices.Contains(s.Action, "s3:BypassGovernanceRetention") ||
				!slices.Contains(s.Action, "s3:DeleteObject") || !slices.Contains(s.Action, "s3:DeleteObjectVersion") {
				t.Errorf("NobodyDeletes = %+v", s)
			}
			if arn, _ := r.outputs["sealKeyArn"].(string); !strings.HasPrefix(arn, "arn:aws:kms:eu-west-1:123456789012:key/") {
				t.Errorf("sealKeyArn = %v", r.outputs["sealKeyArn"])
			}
		})
	}
}

func wildcard(a string) bool { return strings.Contains(a, "*") }

// archiveTypes are the archive's resources: the bucket and what protects it.
var archiveTypes = []string{"aws:s3/bucketV2:BucketV2", "aws:s3/bucketVersioningV2:BucketVersioningV2",
	"aws:s3/bucketObjectLockConfigurationV2:BucketObjectLockConfigurationV2", "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
	"aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "aws:s3/bucketPolicy:BucketPolicy"}

// TestOneArchiveForTheLifeOfTheBus: the archive is named for the bus, its account and its region; a bucket of that
// name that the account owns (the bus's own archive, retained by a destroy: S3 answers it as the account's,
// ExpectedBucketOwner) is adopted with everything that protects it, under that name, never made anew beside it; one
// that does not exist is created; one the stack's state holds already (the last update had an archive: this one, or a
// release before 0.4.0's of another name) is never imported again, an import over another ID in state being a
// replacement. The redrive role may find and read every archive of the bus's prefix (those releases before 0.4.0
// made, one per deployment, among them), list their versions and read one a delete marker hides, each only as a
// bucket of the account; nothing else of S3.
func TestOneArchiveForTheLifeOfTheBus(t *testing.T) {
	const name = "kib-dev-archive-123456789012-eu-west-1"
	for _, tt := range []struct {
		name     string
		buckets  []string
		previous map[string]any
		adopted  bool
	}{
		{"a first deployment", nil, nil, false},
		{"deployed again after destroy", []string{name}, nil, true},
		{"another stack's archive beside it", []string{"kib-prod-archive-123456789012-eu-west-1"}, nil, false},
		{"updated, its archive in state", []string{name}, map[string]any{"archiveBucket": name}, false},
		{"updated, a release before 0.4.0's archive in state, a bucket of the new name beside it", []string{name, "kib-dev-archive-20261127123456789000000001"},
			map[string]any{"archiveBucket": "kib-dev-archive-20261127123456789000000001"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kv := withRedrive(devConfig(t), oncall)
			r, err := runWith(t, &mocks.Mocks{Region: kv["aws:region"], Buckets: tt.buckets, Previous: tt.previous}, render.AnyCommand, "dev", kv)
			if err != nil {
				t.Fatal(err)
			}
			for _, typ := range archiveTypes {
				x := r.resources.One(t, typ)
				if want := map[bool]string{true: name}[tt.adopted]; x.ImportID != want {
					t.Errorf("%s imports %q, want %q", typ, x.ImportID, want)
				}
			}
			if got := r.outputs["archiveBucket"]; got != name {
				t.Errorf("archiveBucket = %v, want %s", got, name)
			}
			if got := r.outputs["archiveBucketPrefix"]; got != "kib-dev-archive-" {
				t.Errorf("archiveBucketPrefix = %v", got)
			}
			p := stacktest.Doc(t, r.resources.Named(t, "aws:iam/rolePolicy:RolePolicy", "kib-dev-redrive"), "policy")
			inAccount := " if map[StringEquals:map[s3:ResourceAccount:123456789012]]"
			for sid, want := range map[string]string{
				"FindTheArchives": "[s3:ListAllMyBuckets] on [*] if map[]",
				"ListTheArchives": "[s3:ListBucket s3:ListBucketVersions] on [arn:aws:s3:::kib-dev-archive-*]" + inAccount,
				"ReadTheArchives": "[s3:GetObject s3:GetObjectVersion] on [arn:aws:s3:::kib-dev-archive-*/*]" + inAccount,
			} {
				if s := stacktest.Statement(t, p, sid); fmt.Sprint(s.Action, " on ", s.Resource, " if ", s.Condition) != want || s.Effect != "Allow" {
					t.Errorf("%s = %+v, want %s", sid, s, want)
				}
			}
		})
	}
}

// TestAnotherAccountsBucketIsNeverTheArchive: a bucket of the archive's name that another account holds (S3's names
// are global: made after a destroy, say, and letting anyone list it, so that the provider's lookup finds it as it would
// the account's own) stops the preview before anything is declared in AWS, naming the bucket and why; so does the
// archive the last update had, should S3 answer it as another's.
func TestAnotherAccountsBucketIsNeverTheArchive(t *testing.T) {
	const name = "kib-dev-archive-123456789012-eu-west-1"
	for _, tt := range []struct {
		name     string
		previous map[string]any
		want     string
	}{
		{"the archive's name", nil, "the name of the bus's archive"},
		{"the archive in state", map[string]any{"archiveBucket": name}, "the archive the stack's last update had"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kv := devConfig(t)
			r, err := runWith(t, &mocks.Mocks{Region: kv["aws:region"], ForeignBuckets: []string{name}, Previous: tt.previous}, render.AnyCommand, "dev", kv)
			for _, want := range []string{"archive: bucket " + name + ", " + tt.want, "is not account 123456789012's",
				"S3 refuses it as account 123456789012's (ExpectedBucketOwner) and answers it as another's", "Nothing was declared"} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want it to say %q", err, want)
				}
			}
			if aws := r.resources.Where(func(x mocks.Resource) bool { return strings.HasPrefix(x.Type, "aws:") }); len(aws) != 0 {
				t.Errorf("%d AWS resources declared before the refusal: %v", len(aws), aws)
			}
		})
	}
}

// TestTheArchiveOwnerCheckStepsAsideFromWhatItCannotFollow: with a key of the AWS provider the check does not follow (a
// proxy), S3 is not asked as some other identity: the check steps aside (and warns, naming the key), and the
// provider's lookup decides as before, which cannot tell whose a bucket it finds is (the warning says so): here a bucket
// another account holds, which the check would have refused, passes.
func TestTheArchiveOwnerCheckStepsAsideFromWhatItCannotFollow(t *testing.T) {
	const name = "kib-dev-archive-123456789012-eu-west-1"
	kv := devConfig(t)
	kv["aws:httpsProxy"] = "http://proxy.corp:3128"
	if _, err := runWith(t, &mocks.Mocks{Region: kv["aws:region"], ForeignBuckets: []string{name}}, render.AnyCommand, "dev", kv); err != nil {
		t.Errorf("with aws:httpsProxy: %v, want the check stepped aside", err)
	}
}

// TestTheArchiveIsWithinTheRedriveRolesGrant: whatever the name prefix's length, up to the longest the configuration
// takes, the archive's bucket is within what the redrive role may list and read: its name keeps more of a long prefix
// than the archive prefix does, so the role names it too.
func TestTheArchiveIsWithinTheRedriveRolesGrant(t *testing.T) {
	for _, np := range []string{"kib-dev", strings.Repeat("a", 28), strings.Repeat("a", 29), strings.Repeat("b", config.MaxNamePrefix)} {
		for _, region := range []string{"eu-west-1", "ap-southeast-5"} {
			kv := withRedrive(devConfig(t), oncall)
			kv["namePrefix"], kv["aws:region"] = np, region
			r, err := run(t, "dev", kv)
			if err != nil {
				t.Fatal(err)
			}
			bucket := "arn:aws:s3:::" + r.outputs["archiveBucket"].(string)
			p := stacktest.Doc(t, r.resources.Named(t, "aws:iam/rolePolicy:RolePolicy", np+"-redrive"), "policy")
			for sid, resource := range map[string]string{"ListTheArchives": bucket, "ReadTheArchives": bucket + "/refused/2026/11/27/m.forged_sender.json"} {
				if s := stacktest.Statement(t, p, sid); !slices.ContainsFunc(s.Resource, func(pattern string) bool { return globMatch(pattern, resource) }) {
					t.Errorf("namePrefix of %d characters, %s: %s = %v, which leaves out %s", len(np), region, sid, s.Resource, resource)
				}
			}
		}
	}
}

// globMatch reports whether an IAM resource pattern (* for any run of characters) matches s.
func globMatch(pattern, s string) bool {
	before, after, wild := strings.Cut(pattern, "*")
	if !wild {
		return pattern == s
	}
	if !strings.HasPrefix(s, before) {
		return false
	}
	rest := s[len(before):]
	for i := 0; i <= len(rest); i++ {
		if globMatch(after, rest[i:]) {
			return true
		}
	}
	return false
}

// TestTheArchiveBucketName: the archive's name is one S3 takes, at most 63 characters, the bus's archive prefix first
// whenever it fits, for any name prefix, account and region.
func TestTheArchiveBucketName(t *testing.T) {
	for _, tt := range []struct{ np, region, want string }{
		{"kib-dev", "eu-west-1", "kib-dev-archive-123456789012-eu-west-1"},
		{"Kib-Prod", "us-gov-west-1", "kib-prod-archive-123456789012-us-gov-west-1"},
		{strings.Repeat("a", 40), "ap-southeast-5", strings.Repeat("a", 27) + "-archive-123456789012-ap-southeast-5"},
		{strings.Repeat("a", 40), "us-isof-south-1", strings.Repeat("a", 26) + "-archive-123456789012-us-isof-south-1"},
	} {
		got := bus.ArchiveBucketName(tt.np, "123456789012", tt.region)
		if got != tt.want || len(got) > 63 || !contract.BucketName(got) {
			t.Errorf("%s in %s: %s (%d), want %s, a name S3 takes", tt.np, tt.region, got, len(got), tt.want)
		}
	}
}

// TestTheArchiveBucketPrefix: S3 takes a lowercase name, and the provider a prefix of at most 37 characters: the
// prefix of any name prefix the configuration takes fits, cut without a trailing hyphen.
func TestTheArchiveBucketPrefix(t *testing.T) {
	for np, want := range map[string]string{
		"kib-dev":               "kib-dev-archive-",
		"Kib-Prod":              "kib-prod-archive-",
		strings.Repeat("a", 40): strings.Repeat("a", 28) + "-archive-",
		strings.Repeat("a", 27) + "-" + "bcdefgh": strings.Repeat("a", 27) + "-archive-",
	} {
		got := bus.ArchiveBucketPrefix(np)
		if got != want || len(got) > 37 || !contract.BucketName(got+"20261127123456789000000001") {
			t.Errorf("%s: %s (%d), want %s, a prefix of a name S3 takes", np, got, len(got), want)
		}
	}
}

// TestTheArchiveConfiguration: archive.mode and archive.retentionDays are checked before anything is declared.
func TestTheArchiveConfiguration(t *testing.T) {
	for archive, want := range map[string]string{
		`{"mode":"legal-hold"}`:   "archive.mode",
		`{"retentionDays":0}`:     "archive.retentionDays",
		`{"retentionDays":36501}`: "archive.retentionDays",
		`{"retain":1}`:            `unknown key "retain"`,
	} {
		kv := devConfig(t)
		kv["archive"] = archive
		if _, err := run(t, "dev", kv); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it to name %s", archive, err, want)
		}
	}
}
