package concurrency

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// lambdaStub answers Lambda's REST protocol for the two calls the check makes, as Lambda does ("GetAccountSettings",
// GET /2016-08-19/account-settings/; "GetFunctionConcurrency", GET /2019-09-30/functions/{name}/concurrency, a 404
// ResourceNotFoundException for a function that does not exist). What Lambda does that it does not: sign-check the
// request and answer for the caller's own account only; it serves one account.
func lambdaStub(t *testing.T, functions map[string]int) *lambda.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && strings.TrimSuffix(r.URL.Path, "/") == "/2016-08-19/account-settings":
			_, _ = w.Write([]byte(`{"AccountLimit":{"ConcurrentExecutions":1000,"UnreservedConcurrentExecutions":250,"CodeSizeUnzipped":262144000},"AccountUsage":{"FunctionCount":3}}`))
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/2019-09-30/functions/") && strings.HasSuffix(r.URL.Path, "/concurrency"):
			name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/2019-09-30/functions/"), "/concurrency")
			n, ok := functions[name]
			if !ok {
				w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"Type":"User","Message":"Function not found: ` + name + `"}`))
				return
			}
			if n == 0 {
				_, _ = w.Write([]byte(`{}`))
				return
			}
			_, _ = w.Write([]byte(`{"ReservedConcurrentExecutions":` + strconv.Itoa(n) + `}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		}
	}))
	t.Cleanup(srv.Close)
	return lambda.New(lambda.Options{
		Region: "eu-west-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIA", SecretAccessKey: "s"}, nil
		}),
	})
}

// TestRead: the account's figures and the function's own reservation, through the AWS SDK's Lambda client; a
// function not created yet holds none.
func TestRead(t *testing.T) {
	client := lambdaStub(t, map[string]int{"kib-prod-router": 150, "plain": 0})
	for fn, want := range map[string]Account{
		"kib-prod-router": {Limit: 1000, Unreserved: 250, Current: 150},
		"plain":           {Limit: 1000, Unreserved: 250},
		"kib-new-router":  {Limit: 1000, Unreserved: 250},
	} {
		got, err := Read(context.Background(), client, fn)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", fn, got, err, want)
		}
		if fn == "kib-prod-router" && got.Reservable() != 300 {
			t.Errorf("reservable %d, want 250 + 150 - 100", got.Reservable())
		}
	}
}

// TestProblem: a reservation within what the account can give passes; above it, the message names both figures,
// where they come from and the fix; nothing to give says so.
func TestProblem(t *testing.T) {
	a := Account{Limit: 1000, Unreserved: 250, Current: 150}
	if p := Problem(a, 300, "router.reservedConcurrency 300", "123456789012", "eu-west-1"); p != "" {
		t.Errorf("300 of 300: %s", p)
	}
	p := Problem(a, 301, "router.reservedConcurrency 301", "123456789012", "eu-west-1")
	for _, w := range []string{"would reserve 301", "can give it at most 300", "250 unreserved of the account's 1000, plus the 150", "Fix: set router.reservedConcurrency to at most 300"} {
		if !strings.Contains(p, w) {
			t.Errorf("%q does not say %q", p, w)
		}
	}
	if p := Problem(Account{Limit: 50, Unreserved: 50}, 20, "x", "123456789012", "eu-west-1"); !strings.Contains(p, "can give it none") {
		t.Errorf("an account of 50: %q", p)
	}
}
