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
	"net"
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

// Timeouts bound a probe's steps, and all of a run's probes together: a token command that hangs (an SSO login
// waiting for a browser) or that leaves a child holding its output open (a credential helper), an endpoint that drops
// packets (a private endpoint seen from outside its VPC) or that accepts and never answers.
type Timeouts struct {
	// Token bounds the token command, from its start to its output read; WaitDelay is how long its output is waited
	// for once it exited or was killed (exec.Cmd.WaitDelay): a child left holding it open is not waited for.
	Token, WaitDelay time.Duration
	// Connect bounds the API server's /version together: the connection, TLS, and the answer's headers.
	Connect time.Duration
	// All bounds every probe of a run (a preview, or each of an update's two runs of the program): a probe still
	// under way when it ends, or not begun, is said not to have answered.
	All time.Duration
}

// DefaultTimeouts are the bounds docs/deploying.md gives ("Clusters out of reach"): a probe takes at most 10 s for
// the token command (and 1 s more for its output) and 1 s for the API server (a /version's headers, a few round trips
// even from a distant runner), and all of a run's take at most 30 s, however many clusters are out of reach.
var DefaultTimeouts = Timeouts{Token: 10 * time.Second, WaitDelay: time.Second, Connect: time.Second, All: 30 * time.Second}

// Kubernetes is the Probe of a machine: the token command run as exec.CommandContext runs it (command), then
// GET /version, each bounded by timeouts.
func Kubernetes(command func(ctx context.Context, name string, args ...string) *exec.Cmd, timeouts Timeouts) Probe {
	return func(ctx context.Context, t Target) error {
		token, err := runToken(ctx, command, t, timeouts)
		if err != nil {
			return err
		}
		return version(ctx, t, token, timeouts.Connect)
	}
}

// Default is Kubernetes of this machine, with DefaultTimeouts.
var Default = Kubernetes(exec.CommandContext, DefaultTimeouts)

func runToken(ctx context.Context, command func(ctx context.Context, name string, args ...string) *exec.Cmd, t Target, timeouts Timeouts) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeouts.Token)
	defer cancel()
	argv := t.TokenCommand()
	cmd := command(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Without it Wait waits for the output's end, which a child of the command holding it open never gives.
	cmd.WaitDelay = timeouts.WaitDelay
	err := cmd.Run()
	switch {
	case errors.Is(err, exec.ErrWaitDelay):
		// It exited, successfully, leaving its output open: what it printed before is what it said.
	case err != nil && ctx.Err() != nil:
		return "", fmt.Errorf("its token command (%s) did not finish within %s: %w", strings.Join(argv, " "), timeouts.Token, ctx.Err())
	case err != nil:
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

func version(ctx context.Context, t Target, token string, timeout time.Duration) error {
	pool := x509.NewCertPool()
	if ca, err := base64.StdEncoding.DecodeString(t.CAData); err != nil || !pool.AppendCertsFromPEM(ca) {
		return fmt.Errorf("its certificate authority, as EKS gives it, is no PEM certificate")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{
		Timeout: timeout,
		// An API server does not redirect: a 3xx is some other server's answer, said as such.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			Proxy: http.ProxyFromEnvironment, TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
			TLSHandshakeTimeout: timeout, ResponseHeaderTimeout: timeout, DisableKeepAlives: true,
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
		var nerr net.Error
		if ctx.Err() != nil || errors.As(err, &nerr) && nerr.Timeout() {
			return fmt.Errorf("its API server %s did not answer from here within %s: %w", t.Endpoint, timeout, err)
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

// All probes every target (at most limit at a time), all of them within budget, and returns why each one that cannot
// be reached cannot, by its index: a probe that had not answered when the budget ended, or had not begun, is said so,
// and is not waited for (a probe that ignores its context holds up nothing).
func All(ctx context.Context, probe Probe, targets []Target, limit int, budget time.Duration) map[int]error {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	var mu sync.Mutex
	errs, answered := make([]error, len(targets)), make([]bool, len(targets))
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		sem := make(chan struct{}, max(limit, 1))
		var wg sync.WaitGroup
		defer wg.Wait()
		for i, t := range targets {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			wg.Go(func() {
				defer func() { <-sem }()
				err := probe(ctx, t)
				mu.Lock()
				defer mu.Unlock()
				errs[i], answered[i] = err, true
			})
		}
	}()
	select {
	case <-finished:
	case <-ctx.Done():
	}
	late := fmt.Errorf("it did not answer within the %s all probes of a run may take (docs/deploying.md, \"Clusters out of reach\")", budget)
	mu.Lock()
	defer mu.Unlock()
	out := map[int]error{}
	for i := range targets {
		switch err := errs[i]; {
		case !answered[i]:
			out[i] = late
		case err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
			out[i] = fmt.Errorf("%w: %w", late, err)
		case err != nil:
			out[i] = err
		}
	}
	return out
}
