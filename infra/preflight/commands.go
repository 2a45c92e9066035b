package preflight

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
)

// commandUse is why the stack needs a command where pulumi up runs.
var commandUse = map[string]string{
	"aws":     "the Kubernetes provider signs in to the cluster with `aws eks get-token`",
	"kubectl": "pulumi-eks calls it to create the cluster",
}

// commands reports, before any resource is declared, the commands the clusters' modes need that lookPath
// cannot find.
func commands(cfg config.Config, lookPath func(string) (string, error)) error {
	needed := map[string][]string{} // command -> the entries needing it
	for i, cl := range cfg.Clusters {
		entry := fmt.Sprintf("clusters[%d] (%s, mode %s)", i, cl.Name, cl.Mode)
		switch cl.Mode {
		case config.ModeInstall:
			needed["aws"] = append(needed["aws"], entry)
		case config.ModeCreate:
			needed["aws"] = append(needed["aws"], entry)
			needed["kubectl"] = append(needed["kubectl"], entry)
		}
	}
	var missing []string
	for _, cmd := range slices.Sorted(maps.Keys(needed)) {
		if _, err := lookPath(cmd); err != nil {
			missing = append(missing, fmt.Sprintf("%s: not found (%v); %s need it: %s", cmd, err, strings.Join(needed[cmd], ", "), commandUse[cmd]))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("commands missing where pulumi runs (docs/deploying.md, \"Deploying the stack\"):\n  %s", strings.Join(missing, "\n  "))
	}
	return nil
}
