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
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/heldport"
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
			err := Kubernetes(token(tt.tok), DefaultTimeouts)(context.Background(), tt.t)
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
	got := All(context.Background(), probe, []Target{{Cluster: "up-0"}, {Cluster: "down-1"}, {Cluster: "up-2"}, {Cluster: "down-3"}}, 2, time.Minute)
	if len(got) != 2 || got[1] == nil || got[3] == nil {
		t.Errorf("unreachable %v, want 1 and 3", got)
	}
	if Always(context.Background(), Target{}) != nil {
		t.Error("Always reaches nothing")
	}
}

// quick are bounds short enough for a test: what is judged is that a probe ends, and says why, not how fast.
var quick = Timeouts{Token: 2 * time.Second, WaitDelay: 200 * time.Millisecond, Connect: 300 * time.Millisecond, All: 3 * time.Second}

// silent is an endpoint that accepts connections and never answers: no TLS handshake, no HTTP.
func silent(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "https://" + l.Addr().String()
}

// fullBacklog is an endpoint whose listen backlog is full and which never accepts: the kernel leaves further SYNs
// unanswered, as a firewall dropping packets does, so a connection is never made (loopback's black hole).
func fullBacklog(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	// Fill the backlog: the connections the kernel completes and queues for an accept that never comes.
	for i := 0; i < 8; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break // full: the next SYN is dropped
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	return "https://" + addr
}

// script is a token command that runs sh -c body, whatever the arguments.
func script(body string) func(ctx context.Context, name string, args ...string) *exec.Cmd {
	return func(ctx context.Context, _ string, _ ...string) *exec.Cmd {
		return exec.CommandContext(ctx, "sh", "-c", body)
	}
}

const credential = `echo '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","status":{"token":"tok-1"}}'`

// TestAProbeEnds: every way a cluster can fail to answer ends the probe with why: an API server that accepts and never
// answers, one whose listen backlog is full (its SYNs unanswered), a token command that hangs, one that exits leaving
// a child holding its output open (its token still read), one that exits 0 with no token, and an API server that
// answers anything but 2xx (a redirect, a 404, a 429, a 500) or refuses the token.
func TestAProbeEnds(t *testing.T) {
	endpoint, ca := apiServer(t, "tok-1")
	tests := []struct {
		name     string
		command  func(ctx context.Context, name string, args ...string) *exec.Cmd
		endpoint string
		want     string
	}{
		{"silent API server", script(credential), silent(t), "did not answer from here within 300ms"},
		{"full backlog", script(credential), fullBacklog(t), "did not answer from here within 300ms"},
		{"token command hangs", script("sleep 30"), endpoint, "did not finish within 2s"},
		{"token command leaves a child", script(credential + "; sleep 30 &"), endpoint, ""},
		{"token command gives no token", script(`echo '{"status":{}}'`), endpoint, "printed no ExecCredential with a token"},
		{"token command gives no JSON", script(`echo token`), endpoint, "printed no ExecCredential with a token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Kubernetes(tt.command, quick)(context.Background(), Target{Cluster: "c", Region: "eu-west-1", Endpoint: tt.endpoint, CAData: ca})
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("probe: %v, want %q", err, tt.want)
			}
		})
	}
	for _, code := range []int{http.StatusFound, http.StatusNotFound, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusForbidden} {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }))
		t.Cleanup(srv.Close)
		ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
		err := Kubernetes(script(credential), quick)(context.Background(), Target{Cluster: "c", Endpoint: srv.URL, CAData: ca})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprint(code)) {
			t.Errorf("HTTP %d: %v, want the cluster out of reach, naming the status", code, err)
		}
	}
}

// TestAllStopsAtItsBudget: a run's probes end with the budget, however many are out of reach and whatever a probe
// does with its context: those that had not answered, begun or not, are said late; those that answered keep their
// answer.
func TestAllStopsAtItsBudget(t *testing.T) {
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	probe := func(ctx context.Context, t Target) error {
		switch t.Cluster {
		case "up":
			return nil
		case "refused":
			return errors.New("connection refused")
		case "deaf": // ignores its context
			<-hang
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}
	targets := []Target{{Cluster: "up"}, {Cluster: "refused"}, {Cluster: "deaf"}, {Cluster: "waits"}, {Cluster: "waits"}, {Cluster: "waits"}}
	got := All(context.Background(), probe, targets, 3, 300*time.Millisecond)
	if got[0] != nil || got[1] == nil || strings.Contains(got[1].Error(), "did not answer") {
		t.Errorf("answered before the budget: %v, %v", got[0], got[1])
	}
	for i := 2; i < len(targets); i++ {
		if got[i] == nil || !strings.Contains(got[i].Error(), "did not answer within the 300ms all probes of a run may take") {
			t.Errorf("target %d (%s): %v, want it late", i, targets[i].Cluster, got[i])
		}
	}
}
