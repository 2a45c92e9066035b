package docgen

import (
	"fmt"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/quota"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/fleet"
)

// Quotas is the table of AWS's create-time quotas against the worst figure of each sized stack (package fleet),
// as the quota judge measures them on the stacks' offline renders.
func Quotas() (string, error) {
	stacks := fleet.Stacks()
	worst := make([]map[string]quota.Figure, len(stacks))
	for i, s := range stacks {
		_, w, err := fleet.Measure(s)
		if err != nil {
			return "", err
		}
		worst[i] = w
	}
	var b strings.Builder
	b.WriteString("| quota | AWS's limit |")
	for _, s := range stacks {
		b.WriteString(" " + s.What + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(stacks)) + "\n")
	for _, q := range quota.All {
		fmt.Fprintf(&b, "| %s | [%d](%s) |", q.What, q.Limit, q.Doc)
		for i := range stacks {
			if f, ok := worst[i][q.Key]; ok {
				fmt.Fprintf(&b, " %d |", f.Value)
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
