package queuename

import (
	"regexp"
	"strings"
	"testing"
)

var sqsName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// The expected hashes were computed independently: printf %s "<full name>" | sha256sum | cut -c1-8.
func TestFor(t *testing.T) {
	long := strings.Repeat("c", 100)
	tests := []struct {
		name, prefix, cluster, want string
	}{
		{"short", "kib_", "prod", "kib_prod"},
		{"exactly 80", "kib_", strings.Repeat("a", 76), "kib_" + strings.Repeat("a", 76)},
		{"81 is shortened", "kib_", strings.Repeat("a", 77), "kib_" + strings.Repeat("a", 67) + "-9521de49"},
		{"100-char cluster", "kib-dev_", long, "kib-dev_" + strings.Repeat("c", 63) + "-08b835c7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := For(tt.prefix, tt.cluster)
			if got != tt.want {
				t.Errorf("For(%q, %q) = %q, want %q", tt.prefix, tt.cluster, got, tt.want)
			}
			if !sqsName.MatchString(got) {
				t.Errorf("For(%q, %q) = %q is not a valid SQS queue name", tt.prefix, tt.cluster, got)
			}
			if !strings.HasPrefix(got, tt.prefix) {
				t.Errorf("For(%q, %q) = %q lost its prefix", tt.prefix, tt.cluster, got)
			}
		})
	}
}

func TestForKeepsLongNamesDistinct(t *testing.T) {
	prefix := Prefix(strings.Repeat("p", MaxPrefixLen-1))
	a := For(prefix, strings.Repeat("x", 99)+"a")
	b := For(prefix, strings.Repeat("x", 99)+"b")
	if a == b {
		t.Fatalf("two clusters differing in their last character share the queue name %q", a)
	}
	if len(a) != MaxLen || !strings.HasPrefix(a, prefix) {
		t.Fatalf("shortened name %q: want %d characters starting with the prefix", a, MaxLen)
	}
}

func TestValidatePrefix(t *testing.T) {
	tests := []struct {
		prefix  string
		wantErr string
	}{
		{"kib_", ""},
		{"Karpenter-Bus-1_", ""},
		{Prefix(strings.Repeat("p", 40)), ""},
		{"", "must not be empty"},
		{strings.Repeat("p", MaxPrefixLen+1), "at most 41"},
		{"kib-", `followed by "_"`},
		{"kib_dev_", `followed by "_"`},
		{"_", `followed by "_"`},
		{"bad.prefix_", `followed by "_"`},
		{"bad prefix_", `followed by "_"`},
	}
	for _, tt := range tests {
		err := ValidatePrefix(tt.prefix)
		checkErr(t, "ValidatePrefix("+tt.prefix+")", err, tt.wantErr)
	}
}

// TestClusterQueuesNeverCollide: whatever a cluster is called, its queue is neither a shared queue of any stack
// nor under another stack's cluster queue prefix, even for stacks whose name prefixes extend one another.
func TestClusterQueuesNeverCollide(t *testing.T) {
	stacks := []string{"kib-dev", "kib-dev-2", "kib", "k", "kib-dev-central"}
	clusters := []string{"central", "dlq", "2", "2-central", "dev", "dev-central", "dev_x", "x_central", "_", strings.Repeat("c", 100)}
	for _, a := range stacks {
		for _, c := range clusters {
			q := For(Prefix(a), c)
			for _, b := range stacks {
				for _, shared := range []string{b + "-central", b + "-dlq"} {
					if q == shared {
						t.Errorf("cluster %q of stack %s has the queue %s, a shared queue of stack %s", c, a, q, b)
					}
				}
				if b != a && strings.HasPrefix(q, Prefix(b)) {
					t.Errorf("cluster %q of stack %s has the queue %s, under stack %s's prefix %s", c, a, q, b, Prefix(b))
				}
			}
		}
	}
}

func TestValidateCluster(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{"prod", ""},
		{"0prod_eu-west-1", ""},
		{strings.Repeat("c", MaxClusterLen), ""},
		{"", "must not be empty"},
		{strings.Repeat("c", MaxClusterLen+1), "at most 100"},
		{"-leading-dash", "must start with"},
		{"has.dot", "must start with"},
	}
	for _, tt := range tests {
		checkErr(t, "ValidateCluster("+tt.name+")", ValidateCluster(tt.name), tt.wantErr)
	}
}

func checkErr(t *testing.T, call string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: unexpected error %v", call, err)
	case want != "" && err == nil:
		t.Errorf("%s: want error containing %q, got nil", call, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%s: error %q does not contain %q", call, err, want)
	}
}
