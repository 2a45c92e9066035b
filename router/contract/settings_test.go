package contract

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// attributable adds to env what the sender check in enforce mode needs to attribute anything (the router's account
// and partition, the forwarder's name), where env sets none of them.
func attributable(env map[string]string) map[string]string {
	for k, v := range map[string]string{EnvAccount: "111111111111", EnvPartition: "aws", EnvForwarderRoleName: "kib-forward"} {
		if _, set := env[k]; !set {
			env[k] = v
		}
	}
	return env
}

func TestLoadSettingsDefaults(t *testing.T) {
	s, err := LoadSettings(getenv(attributable(map[string]string{EnvClusterQueuePrefix: "kib_"})))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultSettings
	want.ClusterQueuePrefix = "kib_"
	want.Account, want.Partition, want.ForwarderRoleName = "111111111111", "aws", "kib-forward"
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("settings = %+v, want the defaults %+v", s, want)
	}
}

// TestSettingsRoundTrip: what the infrastructure renders is what the router reads, field for field, whether a
// field is set or left to its default.
func TestSettingsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
	}{
		{"required only", Settings{ClusterQueuePrefix: "kib-dev_", Account: "111111111111", Partition: "aws", ForwarderRoleName: "kib-dev-forward"}},
		{"observe, nothing to attribute with", Settings{ClusterQueuePrefix: "kib-dev_", SenderCheck: SenderObserve}},
		{"the hub's rules through the queue's policy, no member", Settings{ClusterQueuePrefix: "kib-dev_", Account: "111111111111", Partition: "aws",
			HubDelivery: HubDeliveryQueuePolicy}},
		{"every field", Settings{
			ClusterQueuePrefix: "kib-prod_", OwnerTagKeys: []string{"team/cluster", "cluster"}, CacheSize: 10,
			OwnerTTL: 2 * time.Hour, NoOwnerTTL: 30 * time.Second, QueueURLTTL: 5 * time.Minute,
			MissingQueueTTL: 10 * time.Second, SendConcurrency: 3, MetricsNamespace: "X", BusName: "kib-prod",
			LogLevel: "debug", BusQueues: []string{"kib-prod-central", "kib-prod-dlq"},
			CentralQueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/kib-prod-central",
			RetryDelay:      time.Second, RetryMaxDelay: 30 * time.Second,
			Account: "111111111111", MemberReaderRoles: []string{"arn:aws:iam::222222222222:role/kib-prod-reader", "arn:aws-cn:iam::333333333333:role/r"},
			CanaryInterval: 45 * time.Second, SenderCheck: SenderObserve, ForwarderRoleName: "kib-prod-forward", RedriveRoleName: "kib-prod-redrive",
			SenderRoleTTL: 10 * time.Minute, SenderRecheck: 3 * time.Second, HubDelivery: HubDeliveryQueuePolicy,
			SealKey: "arn:aws:kms:eu-west-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab", ArchiveBucket: "kib-prod-archive-20261127",
			DeadLetterQueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/kib-prod-dlq",
		}},
		{"organization", Settings{
			ClusterQueuePrefix: "kib-prod_", Account: "111111111111", OrganizationID: "o-a1b2c3d4e5", ReaderRoleName: "kib-prod-reader",
			Partition: "aws-cn", DeniedAccountTTL: time.Minute, ForwarderRoleName: "kib-prod-forward",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadSettings(getenv(tt.s.Environ()))
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.s.WithDefaults(); !reflect.DeepEqual(got, want) {
				t.Fatalf("read back %+v\nwant      %+v", got, want)
			}
		})
	}
}

// TestEnvironSetsEveryField fails when a field is added to Settings without its variable.
func TestEnvironSetsEveryField(t *testing.T) {
	s := Settings{
		ClusterQueuePrefix: "p_", OwnerTagKeys: []string{"k"}, CacheSize: 1, OwnerTTL: 1, NoOwnerTTL: 1, QueueURLTTL: 1,
		MissingQueueTTL: 1, SendConcurrency: 1, MetricsNamespace: "n", BusName: "b", LogLevel: "warn",
		BusQueues: []string{"q"}, CentralQueueURL: "u", RetryDelay: 1, RetryMaxDelay: 1,
		Account: "111111111111", MemberReaderRoles: []string{"arn:aws:iam::222222222222:role/r"}, CanaryInterval: 1,
		OrganizationID: "o-a1b2c3d4e5", ReaderRoleName: "r", Partition: "aws", DeniedAccountTTL: 1,
		SenderCheck: SenderObserve, ForwarderRoleName: "f", RedriveRoleName: "d", SenderRoleTTL: 1, SenderRecheck: 1,
		QuarantineQueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/kib-prod-quarantine", HubDelivery: HubDeliveryQueuePolicy,
		SealKey: "arn:aws:kms:eu-west-1:111111111111:key/k", ArchiveBucket: "b-archive", DeadLetterQueueURL: "d", Drain: 5,
	}
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test leaves %s zero: set it", v.Type().Field(i).Name)
		}
	}
	if got, want := len(s.Environ()), v.NumField(); got != want {
		t.Fatalf("Environ renders %d variables for %d fields", got, want)
	}
}

func TestLoadSettingsReportsEveryError(t *testing.T) {
	_, err := LoadSettings(getenv(map[string]string{
		EnvCacheSize: "0", EnvOwnerTTL: "forever", EnvLogLevel: "loud", EnvSendConcurrency: "x",
		EnvRetryDelay: "10s", EnvRetryMaxDelay: "5s",
	}))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{EnvClusterQueuePrefix + ": must not be empty", EnvCacheSize, EnvOwnerTTL, EnvLogLevel, EnvSendConcurrency, EnvRetryMaxDelay} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestLoadSettingsTrimsOwnerTagKeys(t *testing.T) {
	s, err := LoadSettings(getenv(attributable(map[string]string{EnvClusterQueuePrefix: "kib_", EnvOwnerTagKeys: " team/cluster, ,cluster "})))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.OwnerTagKeys, "|") != "team/cluster|cluster" {
		t.Fatalf("owner tag keys = %q", s.OwnerTagKeys)
	}
}

func TestLoadSettingsAccounts(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string // "" when valid
	}{
		{"hub with members", map[string]string{EnvAccount: "111111111111", EnvMemberReaderRoles: "arn:aws:iam::222222222222:role/r,arn:aws:iam::333333333333:role/r"}, ""},
		{"members without the hub's account", map[string]string{EnvMemberReaderRoles: "arn:aws:iam::222222222222:role/r"}, EnvMemberReaderRoles + ": needs " + EnvAccount},
		{"bad account", map[string]string{EnvAccount: "12345"}, EnvAccount + `: "12345" is not a 12-digit account ID`},
		{"not a role", map[string]string{EnvAccount: "111111111111", EnvMemberReaderRoles: "arn:aws:iam::222222222222:user/u"}, `is not an IAM role ARN`},
		{"the hub as a member", map[string]string{EnvAccount: "111111111111", EnvMemberReaderRoles: "arn:aws:iam::111111111111:role/r"}, "account 111111111111 appears twice, or is the router's own"},
		{"a member twice", map[string]string{EnvAccount: "111111111111", EnvMemberReaderRoles: "arn:aws:iam::222222222222:role/r,arn:aws:iam::222222222222:role/s"}, "account 222222222222 appears twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.env[EnvClusterQueuePrefix] = "kib_"
			tt.env[EnvForwarderRoleName] = "kib-forward"
			tt.env[EnvPartition] = "aws"
			s, err := LoadSettings(getenv(tt.env))
			if tt.want == "" {
				if err != nil || strings.Join(s.MemberAccounts(), ",") != "222222222222,333333333333" {
					t.Fatalf("settings %v, %v", s.MemberAccounts(), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestOrganizationSettings(t *testing.T) {
	_, err := LoadSettings(getenv(map[string]string{EnvClusterQueuePrefix: "kib_", EnvOrganizationID: "o-x"}))
	for _, want := range []string{EnvOrganizationID + `: "o-x" is not an AWS Organizations ID`, EnvOrganizationID + ": needs " + EnvAccount,
		EnvReaderRoleName + `: "" is not a role name`, EnvPartition + `: "" is not an AWS partition`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	s := Settings{Account: "111111111111", OrganizationID: "o-a1b2c3d4e5", ReaderRoleName: "kib-reader", Partition: "aws-us-gov",
		MemberReaderRoles: []string{"arn:aws-us-gov:iam::222222222222:role/named"}}
	for account, want := range map[string]string{
		"222222222222": "arn:aws-us-gov:iam::222222222222:role/named",
		"333333333333": "arn:aws-us-gov:iam::333333333333:role/kib-reader",
		"111111111111": "", "not-an-account": "",
	} {
		if got := s.ReaderRole(account); got != want {
			t.Errorf("ReaderRole(%s) = %q, want %q", account, got, want)
		}
	}
	s.OrganizationID = ""
	if got := s.ReaderRole("333333333333"); got != "" {
		t.Errorf("without an organization, an account not listed has the reader role %q", got)
	}
}

// TestSettingsPartitions: the router's partition setting takes every AWS partition, the isolated ones with more
// than one hyphen among them, and refuses anything else, naming the setting.
func TestSettingsPartitions(t *testing.T) {
	env := func(p string) map[string]string {
		return map[string]string{
			EnvClusterQueuePrefix: "kib_", EnvAccount: "111111111111", EnvOrganizationID: "o-a1b2c3d4e5", EnvReaderRoleName: "kib-reader", EnvPartition: p,
			EnvForwarderRoleName: "kib-forward",
		}
	}
	for _, p := range Partitions {
		s, err := LoadSettings(getenv(env(p)))
		if err != nil {
			t.Errorf("partition %s refused: %v", p, err)
			continue
		}
		if got, want := s.ReaderRole("222222222222"), "arn:"+p+":iam::222222222222:role/kib-reader"; got != want {
			t.Errorf("reader role in %s = %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"awsx", "aws-moon", "AWS", "aws-iso-", "aws--cn", " aws"} {
		if _, err := LoadSettings(getenv(env(p))); err == nil || !strings.Contains(err.Error(), EnvPartition+": ") {
			t.Errorf("partition %q: error %v, want one naming %s", p, err, EnvPartition)
		}
	}
}

// TestMemberRolesPartitions: a reader role ARN in MEMBER_READER_ROLES is a member only in a partition AWS has; one
// in a made-up partition that merely starts like one is refused, naming the variable.
func TestMemberRolesPartitions(t *testing.T) {
	env := func(arn string) map[string]string {
		return map[string]string{EnvClusterQueuePrefix: "kib_", EnvAccount: "111111111111", EnvMemberReaderRoles: arn, EnvForwarderRoleName: "kib-forward", EnvPartition: "aws"}
	}
	for _, p := range Partitions {
		arn := "arn:" + p + ":iam::222222222222:role/kib-reader"
		s, err := LoadSettings(getenv(env(arn)))
		if err != nil || s.ReaderRole("222222222222") != arn {
			t.Errorf("partition %s: reader role %q, %v", p, s.ReaderRole("222222222222"), err)
		}
	}
	for _, p := range []string{"aws-x", "aws-cnx", "awsx", "aws-iso-z", "AWS", "aws-us-gov-west"} {
		arn := "arn:" + p + ":iam::222222222222:role/kib-reader"
		if AccountOfRole(arn) != "" {
			t.Errorf("AccountOfRole(%q) = %q, want none", arn, AccountOfRole(arn))
		}
		_, err := LoadSettings(getenv(env(arn)))
		if err == nil || !strings.Contains(err.Error(), EnvMemberReaderRoles+": \""+arn+"\" is not an IAM role ARN") {
			t.Errorf("reader role %q: error %v, want it refused naming %s", arn, err, EnvMemberReaderRoles)
		}
	}
}

// TestRoleNamesAtIAMsLimit: role names reach the router up to IAM's 64 characters ("IAM and AWS STS quotas",
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html), and not one more.
func TestRoleNamesAtIAMsLimit(t *testing.T) {
	at, over := strings.Repeat("r", 64), strings.Repeat("r", 65)
	base := func() map[string]string {
		return map[string]string{
			EnvClusterQueuePrefix: "kib_", EnvAccount: "111111111111", EnvOrganizationID: "o-a1b2c3d4e5", EnvPartition: "aws",
			EnvReaderRoleName: "kib-reader", EnvForwarderRoleName: "kib-forward", EnvRedriveRoleName: "kib-redrive",
		}
	}
	for _, name := range []string{EnvReaderRoleName, EnvForwarderRoleName, EnvRedriveRoleName} {
		env := base()
		env[name] = at
		s, err := LoadSettings(getenv(env))
		if err != nil {
			t.Errorf("%s of 64 characters refused: %v", name, err)
			continue
		}
		if name == EnvReaderRoleName && s.ReaderRole("222222222222") != "arn:aws:iam::222222222222:role/"+at {
			t.Errorf("reader role = %q", s.ReaderRole("222222222222"))
		}
		if name == EnvForwarderRoleName && s.ForwarderRole("222222222222") != "arn:aws:iam::222222222222:role/"+at {
			t.Errorf("forwarder role = %q", s.ForwarderRole("222222222222"))
		}
		env[name] = over
		if _, err := LoadSettings(getenv(env)); err == nil || !strings.Contains(err.Error(), name+": ") {
			t.Errorf("%s of 65 characters: error %v, want it refused naming it", name, err)
		}
	}
	roles := map[string]string{EnvClusterQueuePrefix: "kib_", EnvAccount: "111111111111", EnvForwarderRoleName: "kib-forward",
		EnvMemberReaderRoles: "arn:aws:iam::222222222222:role/" + at, EnvPartition: "aws"}
	if s, err := LoadSettings(getenv(roles)); err != nil || s.ReaderRole("222222222222") == "" {
		t.Errorf("a member reader role named with 64 characters: %v", err)
	}
}

// TestSenderCheckSettings: enforce by default, observe on request, nothing else; members need the forwarder's name.
func TestSenderCheckSettings(t *testing.T) {
	s, err := LoadSettings(getenv(attributable(map[string]string{EnvClusterQueuePrefix: "kib_"})))
	if err != nil || s.SenderCheck != SenderEnforce {
		t.Fatalf("default sender check %q, %v; want %s", s.SenderCheck, err, SenderEnforce)
	}
	if s, err := LoadSettings(getenv(map[string]string{EnvClusterQueuePrefix: "kib_", EnvSenderCheck: "observe"})); err != nil || s.SenderCheck != SenderObserve {
		t.Errorf("observe: %q, %v", s.SenderCheck, err)
	}
	_, err = LoadSettings(getenv(map[string]string{EnvClusterQueuePrefix: "kib_", EnvSenderCheck: "off", EnvAccount: "111111111111",
		EnvMemberReaderRoles: "arn:aws:iam::222222222222:role/r"}))
	for _, want := range []string{EnvSenderCheck + `: "off" is not one of enforce, observe`, EnvForwarderRoleName + `: "" is not a role name`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	// The hub's own rules deliver as its forwarder too, named in the router's partition.
	s = Settings{Account: "111111111111", MemberReaderRoles: []string{"arn:aws-cn:iam::222222222222:role/kib-reader"}, ForwarderRoleName: "kib-forward",
		Partition: "aws-cn"}
	for account, want := range map[string]string{
		"222222222222": "arn:aws-cn:iam::222222222222:role/kib-forward", "111111111111": "arn:aws-cn:iam::111111111111:role/kib-forward", "333333333333": "",
	} {
		if got := s.ForwarderRole(account); got != want {
			t.Errorf("ForwarderRole(%s) = %q, want %q", account, got, want)
		}
	}
}

// TestRefusesToStartRefusingEverything: with the sender check enforcing (the default), a router that could attribute
// no message (an environment written before the check's variables existed) refuses to start, naming each variable
// missing; observe mode starts, and the hub's rules through the queue's policy need no forwarder on a bus of one
// account.
func TestRefusesToStartRefusingEverything(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string // variables named; none: starts
	}{
		{"an environment from before the check", map[string]string{}, []string{EnvAccount, EnvPartition, EnvForwarderRoleName}},
		{"no forwarder", map[string]string{EnvAccount: "111111111111", EnvPartition: "aws"}, []string{EnvForwarderRoleName}},
		{"no partition", map[string]string{EnvAccount: "111111111111", EnvForwarderRoleName: "f"}, []string{EnvPartition}},
		{"no account", map[string]string{EnvPartition: "aws", EnvForwarderRoleName: "f"}, []string{EnvAccount}},
		{"enforce, said", map[string]string{EnvSenderCheck: SenderEnforce, EnvAccount: "111111111111"}, []string{EnvPartition, EnvForwarderRoleName}},
		{"every one set", map[string]string{EnvAccount: "111111111111", EnvPartition: "aws", EnvForwarderRoleName: "f"}, nil},
		{"observe", map[string]string{EnvSenderCheck: SenderObserve}, nil},
		{"by the queue's policy, one account", map[string]string{EnvAccount: "111111111111", EnvPartition: "aws", EnvHubDelivery: HubDeliveryQueuePolicy}, nil},
		{"by the queue's policy, members", map[string]string{EnvAccount: "111111111111", EnvPartition: "aws", EnvHubDelivery: HubDeliveryQueuePolicy,
			EnvMemberReaderRoles: "arn:aws:iam::222222222222:role/r"}, []string{EnvForwarderRoleName}},
		{"a partition AWS does not have", map[string]string{EnvAccount: "111111111111", EnvPartition: "aws-moon", EnvForwarderRoleName: "f"}, []string{EnvPartition}},
		{"a delivery mode that is none", map[string]string{EnvAccount: "111111111111", EnvPartition: "aws", EnvForwarderRoleName: "f", EnvHubDelivery: "both"}, []string{EnvHubDelivery}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.env[EnvClusterQueuePrefix] = "kib_"
			_, err := LoadSettings(getenv(tt.env))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("started; want it refused naming %v", tt.want)
			}
			for _, v := range tt.want {
				if !strings.Contains(err.Error(), v+": ") {
					t.Errorf("error %v does not name %s", err, v)
				}
			}
			for _, v := range []string{EnvAccount, EnvPartition, EnvForwarderRoleName} {
				if !slices.Contains(tt.want, v) && strings.Contains(err.Error(), v+": ") {
					t.Errorf("error %v names %s, which is set", err, v)
				}
			}
		})
	}
}

// TestBoundaries: an account ID's digits include 0 and 9, and nothing beside them; a duration of zero is not
// positive; a retry delay alone, or equal to its most, is valid; with the hub's rules through the queue's policy, the
// hub has no forwarder but every member keeps its own.
func TestBoundaries(t *testing.T) {
	for a, want := range map[string]bool{"109999999990": true, "10999999999/": false, "10999999999:": false, "1099999999a0": false} {
		if IsAccount(a) != want {
			t.Errorf("IsAccount(%q) = %t, want %t", a, !want, want)
		}
	}
	base := func(kv ...string) map[string]string {
		env := attributable(map[string]string{EnvClusterQueuePrefix: "kib_"})
		for i := 0; i+1 < len(kv); i += 2 {
			env[kv[i]] = kv[i+1]
		}
		return env
	}
	for _, tt := range []struct {
		env  map[string]string
		want string // "" valid
	}{
		{base(EnvRetryDelay, "0s"), EnvRetryDelay + `: "0s" is not a positive duration`},
		{base(EnvRetryDelay, "10s"), ""},
		{base(EnvRetryMaxDelay, "1s"), ""},
		{base(EnvRetryDelay, "5s", EnvRetryMaxDelay, "5s"), ""},
		{base(EnvRetryDelay, "5s", EnvRetryMaxDelay, "4s"), EnvRetryMaxDelay + ": 4s is shorter than"},
	} {
		_, err := LoadSettings(getenv(tt.env))
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v: error %v, want %q", tt.env, err, tt.want)
		}
	}
	s := Settings{Account: "111111111111", Partition: "aws", ForwarderRoleName: "f", HubDelivery: HubDeliveryQueuePolicy,
		MemberReaderRoles: []string{"arn:aws:iam::222222222222:role/r"}}
	if got := s.ForwarderRole("111111111111"); got != "" {
		t.Errorf("the hub's forwarder by the queue's policy = %q, want none", got)
	}
	if got := s.ForwarderRole("222222222222"); got != "arn:aws:iam::222222222222:role/f" {
		t.Errorf("a member's forwarder by the queue's policy = %q, want its own", got)
	}
}

// TestTheSealKeyAndTheArchiveAreChecked: SEAL_KEY_ARN must be a KMS key ARN, ARCHIVE_BUCKET a bucket name S3 takes,
// and a seal key comes with an archive, whose ledger records each sealed record delivered.
func TestTheSealKeyAndTheArchiveAreChecked(t *testing.T) {
	base := map[string]string{EnvClusterQueuePrefix: "p_", EnvSenderCheck: SenderObserve}
	for _, tt := range []struct {
		name, key, value string
		ok               bool
	}{
		{"a key ARN", EnvSealKey, "arn:aws:kms:us-east-1:123456789012:key/mrk-1234abcd", true},
		{"an alias", EnvSealKey, "arn:aws:kms:us-east-1:123456789012:alias/kib-seal", false},
		{"a key ID", EnvSealKey, "1234abcd-12ab-34cd-56ef-1234567890ab", false},
		{"a bucket", EnvArchiveBucket, "kib-prod-archive-20261127123456789000000001", true},
		{"upper case", EnvArchiveBucket, "Kib-archive", false},
		{"an IP address", EnvArchiveBucket, "192.168.5.4", false},
		{"a reserved prefix", EnvArchiveBucket, "xn--kib-archive", false},
		{"a reserved suffix", EnvArchiveBucket, "kib-archive-s3alias", false},
		{"two dots", EnvArchiveBucket, "kib..archive", false},
		{"too long", EnvArchiveBucket, strings.Repeat("a", 64), false},
		{"at the limit", EnvArchiveBucket, strings.Repeat("a", 63), true},
		{"too short", EnvArchiveBucket, "ab", false},
		{"ending in a hyphen", EnvArchiveBucket, "kib-archive-", false},
		{"a key without an archive, for a ledger", EnvArchiveBucket, "", false},
	} {
		env := maps.Clone(base)
		if tt.key == EnvSealKey || tt.value == "" {
			env[EnvSealKey], env[EnvArchiveBucket] = "arn:aws:kms:us-east-1:123456789012:key/mrk-1234abcd", "kib-archive"
		}
		env[tt.key] = tt.value
		_, err := LoadSettings(getenv(env))
		if (err == nil) != tt.ok || err != nil && !strings.Contains(err.Error(), tt.key) {
			t.Errorf("%s (%s=%q): %v, want ok %t", tt.name, tt.key, tt.value, err, tt.ok)
		}
	}
}

// TestDrainOffAndDefault: DRAIN=0 turns the drain off (DrainOff, written back as 0), an unset one takes the default,
// and a number is kept; a negative or a word is refused, naming the variable.
func TestDrainOffAndDefault(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
	}{{"0", DrainOff}, {"", DefaultSettings.Drain}, {"250", 250}} {
		env := map[string]string{EnvClusterQueuePrefix: "kib_", EnvDrain: tc.v, EnvSenderCheck: SenderObserve}
		s, err := LoadSettings(func(k string) string { return env[k] })
		if err != nil || s.Drain != tc.want {
			t.Errorf("DRAIN=%q: %d (%v), want %d", tc.v, s.Drain, err, tc.want)
		}
		if tc.v != "" && s.Environ()[EnvDrain] != tc.v {
			t.Errorf("DRAIN=%q written back as %q", tc.v, s.Environ()[EnvDrain])
		}
	}
	for _, v := range []string{"-5", "many"} {
		env := map[string]string{EnvClusterQueuePrefix: "kib_", EnvDrain: v, EnvSenderCheck: SenderObserve}
		if _, err := LoadSettings(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), EnvDrain) {
			t.Errorf("DRAIN=%q: %v, want it refused by name", v, err)
		}
	}
}
