package reach

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/offline/heldport"
)

// token is a stand-in for `aws eks get-token`: the shell prints an ExecCredential with tok, or fails as the AWS CLI
// does (its error on stderr, exit code 255) when tok is "".
func token(tok string) func(ctx context.Context, name string, args ...string) *exec.Cmd {
	return func(ctx context.Context, name string, args ...string) *exec.Cmd {
		if name != "aws" || strings.Join(args[:3], " ") != "eks get-token --cluster-name" {
			return exec.CommandContext(ctx, "false")
		}
		if tok == "" {
			return exec.CommandContext(ctx, "sh", "-c", `echo "An error occurred (AccessDeniedException) when calling the AssumeRole operation: denied" >&2; exit 255`)
		}
		return exec.CommandContext(ctx, "sh", "-c", `echo '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","status":{"token":"`+tok+`"}}'`)
	}
}

// apiServer is a TLS server answering /version as Kubernetes does, to the bearer token want only (401 otherwise),
// and its certificate authority as EKS gives it.
func apiServer(t *testing.T, want string) (endpoint, caData string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" || r.Header.Get("Authorization") != "Bearer "+want {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"major":"1","minor":"33"}`))
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return srv.URL, base64.StdEncoding.EncodeToString(ca)
}

// selfSigned is the PEM of a certificate authority of its own, as EKS gives it (base64): not the API server's.
func selfSigned(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// closedPort is an endpoint nothing listens on, held for the test: connections are refused.
func closedPort(t *testing.T) string {
	t.Helper()
	p, err := heldport.Reserve()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return "https://" + p.Addr
}

// TestProbe: a cluster is reached when its token command gives a token its API server takes; otherwise the probe says
// which step failed, and how: the token command (naming it, with the AWS CLI's error), the connection, the token
// refused, a certificate authority that is none.
func TestProbe(t *testing.T) {
	endpoint, ca := apiServer(t, "tok-1")
	otherCA := selfSigned(t)
	tests := []struct {
		name string
		tok  string
		t    Target
		want string // "" reached
	}{
		{"reached", "tok-1", Target{Cluster: "c", Region: "eu-west-1", Endpoint: endpoint, CAData: ca}, ""},
		{"token command fails", "", Target{Cluster: "c", Region: "eu-west-1", RoleARN: "arn:aws:iam::222222222222:role/deploy", Endpoint: endpoint, CAData: ca},
			"its token command (aws eks get-token --cluster-name c --region eu-west-1 --output json --role-arn arn:aws:iam::222222222222:role/deploy) failed: An error occurred (AccessDeniedException)"},
		{"connection refused", "tok-1", Target{Cluster: "c", Region: "eu-west-1", Endpoint: closedPort(t), CAData: ca}, "cannot be reached from here: dial tcp"},
		{"token refused", "tok-2", Target{Cluster: "c", Region: "eu-west-1", Endpoint: endpoint, CAData: ca}, "refuses the token of the identity running pulumi (HTTP 401)"},
		{"another authority's certificate", "tok-1", Target{Cluster: "c", Region: "eu-west-1", Endpoint: endpoint, CAData: otherCA}, "cannot be reached from here: tls: "},
		{"no authority", "tok-1", Target{Cluster: "c", Region: "eu-west-1", Endpoint: endpoint, CAData: "bm90IGEgY2VydA=="}, "no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Kubernetes(token(tt.tok))(context.Background(), tt.t)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("probe: %v, want %q", err, tt.want)
			}
		})
	}
}

// TestAll: every target is probed, and only those that cannot be reached are named, by their index.
func TestAll(t *testing.T) {
	probe := func(_ context.Context, t Target) error {
		if strings.HasPrefix(t.Cluster, "down") {
			return context.DeadlineExceeded
		}
		return nil
	}
	got := All(context.Background(), probe, []Target{{Cluster: "up-0"}, {Cluster: "down-1"}, {Cluster: "up-2"}, {Cluster: "down-3"}}, 2)
	if len(got) != 2 || got[1] == nil || got[3] == nil {
		t.Errorf("unreachable %v, want 1 and 3", got)
	}
	if Always(context.Background(), Target{}) != nil {
		t.Error("Always reaches nothing")
	}
}
