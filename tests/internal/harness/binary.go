package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/lambdaesm"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/lambdaruntime"
)

// BuildRouter compiles the router's main package (routerDir: the router module) into dir for this machine, with
// the Lambda build tag and otherwise the settings of a test build, so it reuses the packages that build compiled
// (the deployed build, static and for arm64, is infra/routerbuild's, tested there). It returns the binary.
func BuildRouter(routerDir, dir string) (string, error) {
	bin := filepath.Join(dir, "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bin, "./cmd/router")
	cmd.Dir = routerDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the router: %w\n%s", err, out)
	}
	return bin, nil
}

// NewWithBinary starts a Bus whose router is bin, the real bootstrap, run as Lambda runs it: polling the Runtime
// API, configured only by environment variables (the SDK's AWS_ENDPOINT_URL_SQS and AWS_ENDPOINT_URL_EC2 among
// them). Its stdout is the Bus's Out; its stderr is Stderr. Close stops it. opts.Handler is ignored.
func NewWithBinary(ctx context.Context, opts Options, bin string) (*Bus, error) {
	return NewWithBinaries(ctx, opts, bin, 1)
}

// NewWithBinaries is NewWithBinary with n execution environments, as Lambda runs n concurrent invocations: n
// processes of bin, each behind its own Runtime API, each with its own caches. Environments holds their
// handlers (ESM's is the first) and process IDs.
func NewWithBinaries(ctx context.Context, opts Options, bin string, n int) (*Bus, error) {
	runtimes := make([]*lambdaruntime.Runtime, n)
	handlers := make([]lambdaesm.Handler, n)
	for i := range n {
		rt := lambdaruntime.Start()
		runtimes[i] = rt
		handlers[i] = func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
			payload, err := json.Marshal(batch)
			if err != nil {
				return events.SQSEventResponse{}, err
			}
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			body, err := rt.Invoke(ctx, payload)
			if err != nil {
				return events.SQSEventResponse{}, err
			}
			var resp events.SQSEventResponse
			return resp, json.Unmarshal(body, &resp)
		}
	}
	closeRuntimes := func() {
		for _, rt := range runtimes {
			rt.Close()
		}
	}
	opts.Handler = handlers[0]
	b, err := New(ctx, opts)
	if err != nil {
		closeRuntimes()
		return nil, err
	}
	b.Stderr = &SyncBuffer{}
	// The router writes its metrics and logs to stdout before it answers an invocation: to a file, they are in Out
	// once the invocation returned (a test reads them right after a drain).
	stdout, err := b.Out.Direct()
	if err != nil {
		b.Close()
		closeRuntimes()
		return nil, fmt.Errorf("the router's stdout: %w", err)
	}
	var cmds []*exec.Cmd
	b.stop = func() {
		for _, cmd := range cmds {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		closeRuntimes()
		_ = stdout.Close()
		b.Out.Detach()
	}
	for i, rt := range runtimes {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "AWS_LAMBDA_RUNTIME_API="+rt.Addr)
		for k, v := range b.RouterEnv() {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stdout, cmd.Stderr = stdout, b.Stderr
		if err := cmd.Start(); err != nil {
			b.Close()
			return nil, fmt.Errorf("starting the router: %w", err)
		}
		cmds = append(cmds, cmd)
		b.Environments = append(b.Environments, Environment{Handler: handlers[i], PID: cmd.Process.Pid})
	}
	return b, nil
}

// Environment is one of the router's execution environments (a process of its bootstrap).
type Environment struct {
	Handler lambdaesm.Handler
	PID     int
}

// PeakRSS is the most resident memory the environment's process has used so far, in bytes (Linux's VmHWM).
func (e Environment) PeakRSS() (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.PID))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", e.PID)
}

// StderrText is what the router binary wrote to stderr, for failure messages ("" for a router in this process).
func (b *Bus) StderrText() string {
	if b.Stderr == nil {
		return ""
	}
	return b.Stderr.String()
}
