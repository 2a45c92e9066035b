package accounts

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
)

// fakeResolver answers every id with the same owner, counting calls.
type fakeResolver struct {
	mu    sync.Mutex
	owner owner.Owner
	calls int
}

func (f *fakeResolver) Resolve(_ context.Context, _ string, ids []string) map[string]owner.Owner {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	out := map[string]owner.Owner{}
	for _, id := range ids {
		out[id] = f.owner
	}
	return out
}

// stsRefusing is STS's AssumeRole, over its wire protocol, answering status and code (as AWS does when the role
// does not exist or does not trust the caller: 403 AccessDenied).
func stsRefusing(t *testing.T, status int, code string) *sts.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(status)
		fmt.Fprintf(w, `<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>no</Message></Error><RequestId>r</RequestId></ErrorResponse>`, code)
	}))
	t.Cleanup(srv.Close)
	return sts.New(sts.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
}

// TestAssumeRoleDeniedOnTheSDKsErrors: the error an EC2 call returns when STS refuses its credentials is told
// apart from a throttled or failing STS, and from EC2's own refusal.
func TestAssumeRoleDeniedOnTheSDKsErrors(t *testing.T) {
	ec2Srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>no</Message></Error></Errors><RequestID>r</RequestID></Response>`)
	}))
	t.Cleanup(ec2Srv.Close)
	cfg := aws.Config{Region: "us-east-1", RetryMaxAttempts: 1, BaseEndpoint: aws.String(ec2Srv.URL)}
	for _, tt := range []struct {
		status int
		code   string
		want   bool
	}{
		{http.StatusForbidden, "AccessDenied", true},
		{http.StatusBadRequest, "Throttling", false},
		{http.StatusServiceUnavailable, "ServiceUnavailable", false},
	} {
		client, err := MemberEC2(cfg, NewSessions(stsRefusing(t, tt.status, tt.code)), "arn:aws:iam::222222222222:role/reader")
		if err != nil {
			t.Fatal(err)
		}
		out := owner.New(client, owner.Options{CacheSize: 10, OwnerTTL: time.Hour, NoOwnerTTL: time.Hour}).Resolve(context.Background(), "us-east-1", []string{"i-0123456789abcdef0"})
		err = out["i-0123456789abcdef0"].Err
		if err == nil || AssumeRoleDenied(err) != tt.want {
			t.Errorf("STS %d %s: error %v, denied %t, want %t", tt.status, tt.code, err, AssumeRoleDenied(err), tt.want)
		}
	}
	// EC2 refusing the assumed role (no ec2:DescribeInstances) is not the account being unknown.
	if AssumeRoleDenied(errors.New("UnauthorizedOperation")) {
		t.Error("a plain error is a denied AssumeRole")
	}
}

func TestMembersFoundOnTheirFirstEvent(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	own := &fakeResolver{owner: owner.Owner{Cluster: "hub"}}
	resolvers := map[string]*fakeResolver{
		"arn:aws:iam::222222222222:role/reader": {owner: owner.Owner{Cluster: "a"}},
		"arn:aws:iam::333333333333:role/reader": {owner: owner.Owner{Err: fmt.Errorf("describing: %w", &smithy.OperationError{
			ServiceID: "STS", OperationName: "AssumeRole", Err: &smithy.GenericAPIError{Code: "AccessDenied"},
		})}},
	}
	made := map[string]int{}
	o := New(own, Options{
		ReaderRole: func(account string) string {
			if account == "111111111111" {
				return ""
			}
			return "arn:aws:iam::" + account + ":role/reader"
		},
		NewResolver: func(role string) (Resolver, error) { made[role]++; return resolvers[role], nil },
		DeniedTTL:   time.Minute, Now: func() time.Time { return now },
	})
	ids := []string{"i-1"}
	ctx := context.Background()
	if got := o.Resolve(ctx, "111111111111", "r", ids)["i-1"].Cluster; got != "hub" {
		t.Errorf("own account: %q", got)
	}
	for range 3 {
		if got := o.Resolve(ctx, "222222222222", "r", ids)["i-1"].Cluster; got != "a" {
			t.Errorf("member: %q", got)
		}
	}
	if made["arn:aws:iam::222222222222:role/reader"] != 1 {
		t.Errorf("member resolver made %d times, want once", made["arn:aws:iam::222222222222:role/reader"])
	}
	denied := resolvers["arn:aws:iam::333333333333:role/reader"]
	for i := range 3 {
		err := o.Resolve(ctx, "333333333333", "r", ids)["i-1"].Err
		if !errors.Is(err, ErrUnknownAccount) {
			t.Fatalf("call %d: %v, want ErrUnknownAccount", i, err)
		}
	}
	if denied.calls != 1 {
		t.Errorf("a refused account was looked up %d times in its TTL, want once", denied.calls)
	}
	now = now.Add(2 * time.Minute)
	_ = o.Resolve(ctx, "333333333333", "r", ids)
	if denied.calls != 2 || !strings.Contains(fmt.Sprint(denied.owner.Err), "AccessDenied") {
		t.Errorf("after its TTL a refused account is asked %d times in all, want 2", denied.calls)
	}
}
