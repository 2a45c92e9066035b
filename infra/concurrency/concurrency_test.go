package concurrency

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	// Two is the least the mapping takes: an account that can give two gives at most two, not none.
	if p := Problem(Account{Limit: 1000, Unreserved: 102}, 5, "x", "123456789012", "eu-west-1"); !strings.Contains(p, "can give it at most 2") {
		t.Errorf("an account that can give 2: %q", p)
	}
}

// identityStubs stand in for STS and Lambda on one loopback server, each answering for the account of the request's
// access key, as AWS answers for the caller's own account: a long-term key "AKIA<account>" is that account's;
// AssumeRole of a role ARN issues "ASIA<the role's account>" (STS's query protocol, XML; Lambda's REST, JSON). What
// STS does that the stub does not: check signatures, trust policies and external IDs (it records the external ID and
// session name it was given, to be checked), expire sessions.
type identityStubs struct {
	url                 string
	externalID, session string
	// webToken is the last AssumeRoleWithWebIdentity's token; tokens the session tokens requests were signed with;
	// stsRegions the regions STS requests were signed for.
	webToken   string
	tokens     []string
	stsRegions []string
	srv        *httptest.Server
}

func newIdentityStubs(t *testing.T) *identityStubs {
	t.Helper()
	return startIdentityStubs(t, false)
}

// startIdentityStubs is newIdentityStubs, over TLS when tls (its certificate authority: caFile).
func startIdentityStubs(t *testing.T, tls bool) *identityStubs {
	t.Helper()
	s := &identityStubs{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if tok := r.Header.Get("X-Amz-Security-Token"); tok != "" {
			s.tokens = append(s.tokens, tok)
		}
		i := strings.Index(auth, "Credential=")
		key := ""
		if i >= 0 {
			key, _, _ = strings.Cut(auth[i+len("Credential="):], "/")
		}
		account := strings.TrimPrefix(strings.TrimPrefix(key, "AKIA"), "ASIA")
		if r.Method == http.MethodGet && strings.TrimSuffix(r.URL.Path, "/") == "/2016-08-19/account-settings" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"AccountLimit":{"ConcurrentExecutions":1000,"UnreservedConcurrentExecutions":` + map[string]string{"111111111111": "900", "222222222222": "400", "333333333333": "300"}[account] + `}}`))
			return
		}
		if strings.HasSuffix(r.URL.Path, "/concurrency") {
			w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"Type":"User","Message":"Function not found"}`))
			return
		}
		_ = r.ParseForm()
		if scope := strings.Split(auth, "/"); len(scope) > 3 && scope[3] == "sts" {
			s.stsRegions = append(s.stsRegions, scope[2])
		}
		w.Header().Set("Content-Type", "text/xml")
		switch r.Form.Get("Action") {
		case "AssumeRoleWithWebIdentity":
			// Unsigned: the token is the caller's proof ("AssumeRoleWithWebIdentity").
			s.webToken, s.session = r.Form.Get("WebIdentityToken"), r.Form.Get("RoleSessionName")
			roleAccount := strings.Split(r.Form.Get("RoleArn"), ":")[4]
			_, _ = w.Write([]byte(`<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult><Credentials>` +
				`<AccessKeyId>ASIA` + roleAccount + `</AccessKeyId><SecretAccessKey>s</SecretAccessKey><SessionToken>web</SessionToken>` +
				`<Expiration>2099-01-01T00:00:00Z</Expiration></Credentials><AssumedRoleUser><Arn>` + r.Form.Get("RoleArn") + `/s</Arn>` +
				`<AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser></AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>3</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>`))
		case "GetCallerIdentity":
			_, _ = w.Write([]byte(`<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>` +
				`<Arn>arn:aws:iam::` + account + `:user/x</Arn><UserId>AIDA` + account + `</UserId><Account>` + account + `</Account>` +
				`</GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>`))
		case "AssumeRole":
			s.externalID, s.session = r.Form.Get("ExternalId"), r.Form.Get("RoleSessionName")
			roleAccount := strings.Split(r.Form.Get("RoleArn"), ":")[4]
			_, _ = w.Write([]byte(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>` +
				`<AccessKeyId>ASIA` + roleAccount + `</AccessKeyId><SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken>` +
				`<Expiration>2099-01-01T00:00:00Z</Expiration></Credentials><AssumedRoleUser><Arn>` + r.Form.Get("RoleArn") + `/s</Arn>` +
				`<AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>2</RequestId></ResponseMetadata></AssumeRoleResponse>`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			t.Errorf("unexpected request %s %s %v", r.Method, r.URL.Path, r.Form)
		}
	})
	if tls {
		s.srv = httptest.NewTLSServer(handler)
	} else {
		s.srv = httptest.NewServer(handler)
	}
	t.Cleanup(s.srv.Close)
	s.url = s.srv.URL
	return s
}

// caFile writes the stubs' certificate authority (a TLS stub's) as a PEM file, as aws:customCaBundle names one.
func (s *identityStubs) caFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// cleanEnvironment leaves the SDK only what the test gives it: no profile, files, metadata service, endpoints.
func cleanEnvironment(t *testing.T) {
	t.Helper()
	for k, v := range map[string]string{"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_PROFILE": "",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_ENDPOINT_URL_STS": "", "AWS_ENDPOINT_URL_LAMBDA": "", "AWS_ROLE_ARN": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_CA_BUNDLE": ""} {
		t.Setenv(k, v)
	}
}

// TestEverySignIn: the check reads Lambda as each way pulumi-aws signs in would, and names the account that was, never
// another: keys with a session token (aws:token signs every request); a web identity (aws:assumeRoleWithWebIdentity,
// its token given or in a file, CI's way), alone and under aws:assumeRole; the provider's own endpoints
// (aws:endpoints) with no endpoint in the environment; STS in another region (aws:stsRegion); a private certificate
// authority (aws:customCaBundle) for an endpoint over TLS. A key it does not follow makes it step aside, naming it.
func TestEverySignIn(t *testing.T) {
	cleanEnvironment(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("oidc-from-file"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := newIdentityStubs(t)
	secure := startIdentityStubs(t, true)
	endpoints := func(s *identityStubs) string { return `[{"sts":"` + s.url + `","lambda":"` + s.url + `"}]` }
	tests := []struct {
		name    string
		stubs   *identityStubs
		config  map[string]string
		account string
		check   func(t *testing.T, s *identityStubs)
	}{
		{"keys with a session token", plain, map[string]string{"aws:accessKey": "AKIA111111111111", "aws:secretKey": "s", "aws:token": "session-1",
			"aws:endpoints": endpoints(plain)}, "111111111111", func(t *testing.T, s *identityStubs) {
			if len(s.tokens) == 0 || s.tokens[len(s.tokens)-1] != "session-1" {
				t.Errorf("requests signed with session tokens %v, want aws:token's", s.tokens)
			}
		}},
		{"a web identity, its token given", plain, map[string]string{"aws:endpoints": endpoints(plain),
			"aws:assumeRoleWithWebIdentity": `{"roleArn":"arn:aws:iam::222222222222:role/ci","sessionName":"gh","webIdentityToken":"oidc-1"}`}, "222222222222",
			func(t *testing.T, s *identityStubs) {
				if s.webToken != "oidc-1" || s.session != "gh" {
					t.Errorf("AssumeRoleWithWebIdentity got token %q, session %q", s.webToken, s.session)
				}
			}},
		{"a web identity, its token in a file", plain, map[string]string{"aws:endpoints": endpoints(plain),
			"aws:assumeRoleWithWebIdentity": `{"roleArn":"arn:aws:iam::222222222222:role/ci","webIdentityTokenFile":"` + tokenFile + `"}`}, "222222222222",
			func(t *testing.T, s *identityStubs) {
				if s.webToken != "oidc-from-file" {
					t.Errorf("AssumeRoleWithWebIdentity got token %q, want the file's", s.webToken)
				}
			}},
		{"a web identity, then a role", plain, map[string]string{"aws:endpoints": endpoints(plain),
			"aws:assumeRoleWithWebIdentity": `{"roleArn":"arn:aws:iam::222222222222:role/ci","webIdentityToken":"oidc-2"}`,
			"aws:assumeRole":                `{"roleArn":"arn:aws:iam::333333333333:role/deploy","sessionName":"pulumi"}`}, "333333333333", nil},
		{"STS in another region", plain, map[string]string{"aws:accessKey": "AKIA111111111111", "aws:secretKey": "s", "aws:endpoints": endpoints(plain),
			"aws:stsRegion": "us-gov-west-1"}, "111111111111", func(t *testing.T, s *identityStubs) {
			if len(s.stsRegions) == 0 || s.stsRegions[len(s.stsRegions)-1] != "us-gov-west-1" {
				t.Errorf("STS signed for %v, want aws:stsRegion's", s.stsRegions)
			}
		}},
		{"a private certificate authority", secure, map[string]string{"aws:accessKey": "AKIA111111111111", "aws:secretKey": "s",
			"aws:endpoints": endpoints(secure), "aws:customCaBundle": "CA"}, "111111111111", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.config["aws:customCaBundle"] == "CA" {
				tt.config["aws:customCaBundle"] = tt.stubs.caFile(t)
			}
			id, err := IdentityOf(func(k string) (string, bool) { v, ok := tt.config[k]; return v, ok })
			if err != nil || len(id.Unfollowed) != 0 {
				t.Fatalf("%+v, %v", id, err)
			}
			a, err := FromEnvironment(context.Background(), "eu-west-1", id, "kib-prod-router")
			if err != nil || a.Caller != tt.account {
				t.Fatalf("read %+v, %v; want account %s", a, err, tt.account)
			}
			if tt.check != nil {
				tt.check(t, tt.stubs)
			}
		})
	}
	// Without its certificate authority, the TLS endpoint is refused: the bundle is what let it in.
	id, _ := IdentityOf(func(k string) (string, bool) {
		v, ok := map[string]string{"aws:accessKey": "AKIA111111111111", "aws:secretKey": "s", "aws:endpoints": endpoints(secure)}[k]
		return v, ok
	})
	if _, err := FromEnvironment(context.Background(), "eu-west-1", id, "kib-prod-router"); err == nil {
		t.Error("a TLS endpoint of a private authority was trusted without aws:customCaBundle")
	}
	for _, k := range []string{"httpProxy", "httpsProxy", "noProxy", "insecure", "useFipsEndpoint", "useDualstackEndpoint", "ec2MetadataServiceEndpoint",
		"ec2MetadataServiceEndpointMode"} {
		id, err := IdentityOf(func(key string) (string, bool) { return map[string]string{"aws:" + k: "true"}[key], key == "aws:"+k })
		if err != nil || len(id.Unfollowed) != 1 || id.Unfollowed[0] != "aws:"+k {
			t.Errorf("aws:%s: unfollowed %v, %v; want it named", k, id.Unfollowed, err)
		}
	}
	if id, _ := IdentityOf(func(key string) (string, bool) {
		return map[string]string{"aws:insecure": "false"}[key], key == "aws:insecure"
	}); len(id.Unfollowed) != 0 {
		t.Errorf("aws:insecure false counted as unfollowed: %v", id.Unfollowed)
	}
	for k, text := range map[string]string{"aws:assumeRoleWithWebIdentity": `{"roleArn":1}`, "aws:endpoints": `{"sts":"x"}`} {
		if _, err := IdentityOf(func(key string) (string, bool) { return map[string]string{k: text}[key], key == k }); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("a malformed %s: %v, want it named", k, err)
		}
	}
	if s := (Identity{WebIdentity: &WebIdentity{RoleARN: "arn:aws:iam::222222222222:role/ci"}}).String(); s != "aws:assumeRoleWithWebIdentity arn:aws:iam::222222222222:role/ci" {
		t.Errorf("the identity says %q", s)
	}
}

// TestReadsAsTheProvidersIdentity: the check reads Lambda as the stack's AWS provider would authenticate, its
// aws:assumeRole included (session name and external ID passed on), and says which account that was: the figures of
// the role's account, not of the environment's credentials.
func TestReadsAsTheProvidersIdentity(t *testing.T) {
	stubs := newIdentityStubs(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", stubs.url)
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", stubs.url)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIA111111111111")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	config := map[string]string{}
	get := func(k string) (string, bool) { v, ok := config[k]; return v, ok }

	id, err := IdentityOf(get)
	if err != nil {
		t.Fatal(err)
	}
	a, err := FromEnvironment(context.Background(), "eu-west-1", id, "kib-prod-router")
	if err != nil || a.Caller != "111111111111" || a.Unreserved != 900 {
		t.Fatalf("the environment's identity: %+v, %v; want account 111111111111's figures", a, err)
	}

	config["aws:assumeRole"] = `{"roleArn":"arn:aws:iam::222222222222:role/deploy","sessionName":"pulumi","externalId":"x-1"}`
	if id, err = IdentityOf(get); err != nil {
		t.Fatal(err)
	}
	a, err = FromEnvironment(context.Background(), "eu-west-1", id, "kib-prod-router")
	if err != nil || a.Caller != "222222222222" || a.Unreserved != 400 {
		t.Fatalf("with aws:assumeRole: %+v, %v; want the role's account, 222222222222, and its figures", a, err)
	}
	if stubs.externalID != "x-1" || stubs.session != "pulumi" {
		t.Errorf("AssumeRole got external ID %q and session %q, want the provider's", stubs.externalID, stubs.session)
	}
	if s := id.String(); !strings.Contains(s, "aws:assumeRole arn:aws:iam::222222222222:role/deploy") {
		t.Errorf("the identity says %q", s)
	}

	// A profile of the provider's own shared files, whose keys are another account's.
	dir := t.TempDir()
	creds, conf := dir+"/credentials", dir+"/config"
	// The credentials file's profile is one account's, the config file's another's: each read only from its file.
	if err := os.WriteFile(creds, []byte("[deploy]\naws_access_key_id = AKIA222222222222\naws_secret_access_key = s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[profile configured]\naws_access_key_id = AKIA333333333333\naws_secret_access_key = s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	profiled := map[string]string{"aws:profile": "deploy", "aws:sharedCredentialsFiles": `["` + creds + `"]`, "aws:sharedConfigFiles": `["` + conf + `"]`}
	id, err = IdentityOf(func(k string) (string, bool) { v, ok := profiled[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if a, err = FromEnvironment(context.Background(), "eu-west-1", id, "kib-prod-router"); err != nil || a.Caller != "222222222222" {
		t.Errorf("with aws:profile in the provider's shared files: %+v, %v; want the profile's account", a, err)
	}
	if s := id.String(); s != "aws:profile deploy" {
		t.Errorf("the identity says %q", s)
	}
	profiled["aws:profile"] = "configured"
	if id, err = IdentityOf(func(k string) (string, bool) { v, ok := profiled[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if a, err = FromEnvironment(context.Background(), "eu-west-1", id, "kib-prod-router"); err != nil || a.Caller != "333333333333" {
		t.Errorf("with aws:profile in the provider's shared config file: %+v, %v; want that profile's account", a, err)
	}
	if s := (Identity{AccessKey: "AKIA"}).String(); s != "aws:accessKey" {
		t.Errorf("the identity of a key says %q", s)
	}
	if s := (Identity{}).String(); s != "the environment's credentials" {
		t.Errorf("no identity says %q", s)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIA111111111111")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")

	config["aws:assumeRole"] = `{"roleArn": 7}`
	if _, err := IdentityOf(get); err == nil || !strings.Contains(err.Error(), "aws:assumeRole") {
		t.Errorf("a malformed aws:assumeRole: %v, want it named", err)
	}
	delete(config, "aws:assumeRole")
	config["aws:accessKey"], config["aws:secretKey"] = "AKIA222222222222", "s"
	if id, err = IdentityOf(get); err != nil {
		t.Fatal(err)
	}
	if a, err = FromEnvironment(context.Background(), "eu-west-1", id, "kib-prod-router"); err != nil || a.Caller != "222222222222" {
		t.Errorf("with aws:accessKey: %+v, %v; want its account", a, err)
	}
}
