// Package reach tells, before anything is declared, whether the machine running pulumi can reach each cluster's
// Kubernetes API the way the stack's Kubernetes provider for it will: the kubeconfig's token command (`aws eks
// get-token`, as the deploying identity, or a member's deploy role), then the API server's /version over TLS, with
// the cluster's certificate authority and that token. A preview or an update then names every cluster it cannot
// reach, and why, as a warning, where pulumi-kubernetes says only that "the cluster is unreachable", or nothing at all
// (docs/deploying.md, "Clusters out of reach").
//
// What pulumi-kubernetes does with a cluster it cannot reach (measured with the real provider: tests/engine,
// TestAClusterOutOfReach): a preview goes on, silent (Check and Diff of a Helm release need no API server); an update
// that creates or changes the cluster's release fails on it ("can't update Helm Release with unreachable cluster"),
// and one that changes nothing of it completes. The program orders such a release after the rest of the update
// (infra.declareClusters), so that the failure comes once all that can be reached was done.
package reach

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Target is a cluster as its Kubernetes provider sees it: the token command's cluster, region and role, and the API
// server's endpoint and certificate authority (base64, as EKS gives it).
type Target struct {
	Cluster, Region, RoleARN string
	Endpoint, CAData         string
}

// TokenCommand is the kubeconfig's command for t (infra/component/cluster.Kubeconfig runs the same).
func (t Target) TokenCommand() []string {
	args := []string{"aws", "eks", "get-token", "--cluster-name", t.Cluster, "--region", t.Region, "--output", "json"}
	if t.RoleARN != "" {
		args = append(args, "--role-arn", t.RoleARN)
	}
	return args
}

// Probe returns why t cannot be reached from here, nil when it can.
type Probe func(ctx context.Context, t Target) error

// Always is a Probe for where nothing is reached (the offline render, the tests under mocks): every cluster can.
func Always(context.Context, Target) error { return nil }

// Timeouts bound each step: a token command that hangs (an SSO login waiting for a browser), an endpoint that
// drops packets (a private endpoint seen from outside its VPC).
const (
	TokenTimeout   = 30 * time.Second
	ConnectTimeout = 5 * time.Second
)

// Kubernetes is the Probe of a machine: the token command run as exec.CommandContext runs it (command), then
// GET /version.
func Kubernetes(command func(ctx context.Context, name string, args ...string) *exec.Cmd) Probe {
	return func(ctx context.Context, t Target) error {
		token, err := runToken(ctx, command, t)
		if err != nil {
			return err
		}
		return version(ctx, t, token)
	}
}

// Default is Kubernetes of this machine.
var Default = Kubernetes(exec.CommandContext)

func runToken(ctx context.Context, command func(ctx context.Context, name string, args ...string) *exec.Cmd, t Target) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, TokenTimeout)
	defer cancel()
	argv := t.TokenCommand()
	cmd := command(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		why := firstLine(stderr.String())
		if why == "" {
			why = err.Error()
		}
		return "", fmt.Errorf("its token command (%s) failed: %s", strings.Join(argv, " "), why)
	}
	// An ExecCredential ("client.authentication.k8s.io/v1beta1"): the token is status.token.
	var cred struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &cred); err != nil || cred.Status.Token == "" {
		return "", fmt.Errorf("its token command (%s) printed no ExecCredential with a token", strings.Join(argv, " "))
	}
	return cred.Status.Token, nil
}

func version(ctx context.Context, t Target, token string) error {
	pool := x509.NewCertPool()
	if ca, err := base64.StdEncoding.DecodeString(t.CAData); err != nil || !pool.AppendCertsFromPEM(ca) {
		return fmt.Errorf("its certificate authority, as EKS gives it, is no PEM certificate")
	}
	client := &http.Client{
		Timeout: 2 * ConnectTimeout,
		Transport: &http.Transport{
			Proxy: http.ProxyFromEnvironment, TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout: ConnectTimeout, ResponseHeaderTimeout: ConnectTimeout,
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(t.Endpoint, "/")+"/version", nil)
	if err != nil {
		return fmt.Errorf("its API server's endpoint %q: %w", t.Endpoint, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		var uerr interface{ Unwrap() error }
		if errors.As(err, &uerr) {
			err = uerr.Unwrap()
		}
		return fmt.Errorf("its API server %s cannot be reached from here: %w", t.Endpoint, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("its API server %s refuses the token of the identity running pulumi (HTTP %d): it needs an access entry there", t.Endpoint, resp.StatusCode)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("its API server %s answered HTTP %d", t.Endpoint, resp.StatusCode)
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// All probes every target at once (at most limit at a time) and returns why each one that cannot be reached cannot,
// by its index.
func All(ctx context.Context, probe Probe, targets []Target, limit int) map[int]error {
	out := map[int]error{}
	var mu sync.Mutex
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i, t := range targets {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := probe(ctx, t); err != nil {
				mu.Lock()
				out[i] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}
