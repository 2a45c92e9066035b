package preflight

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
)

// StackConfiguration reads the stack's configuration (the program's Input.Load) in env, through config.Load.
func StackConfiguration(ctx *pulumi.Context, env awsenv.Env) (config.Config, error) {
	values, err := stackValues(ctx)
	if err != nil {
		return config.Config{}, err
	}
	return config.Load(ctx.Stack(), env.Account, config.Values(values, config.Namespace))
}

// stackValues are the stack's configuration as the Pulumi SDK receives it ("<namespace>:<key>" to value), read
// whole so that keys the program does not know can be reported. The CLI's Go language host gives the whole
// configuration in PULUMI_CONFIG; the Automation API's inline programs get it only through the context, key by
// key (the SDK lists none), so every key the program knows is read from the context too: an inline program reads
// all it uses, though it cannot report a key it does not know.
func stackValues(ctx *pulumi.Context) (map[string]string, error) {
	values := map[string]string{}
	if raw := os.Getenv(pulumi.EnvConfig); raw != "" {
		if err := json.Unmarshal([]byte(raw), &values); err != nil {
			return nil, fmt.Errorf("reading the stack configuration from %s: %w", pulumi.EnvConfig, err)
		}
	}
	for _, k := range config.Keys() {
		key := config.Namespace + ":" + k
		if v, ok := ctx.GetConfig(key); ok {
			values[key] = v
		}
	}
	return values, nil
}
