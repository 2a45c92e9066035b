package docgen

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
)

// KarpenterVersions is the table of supported Karpenter versions: from each release on, the Kubernetes versions it
// runs on (router/karpenter's matrix, checked against each tested release's source), the event kinds it acts on
// beyond every version's, and what its controller policy grants beyond the previous row's (cluster.ControllerPolicy).
func KarpenterVersions() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The stack installs Karpenter **%s** unless `karpenter.version` says otherwise (`router/karpenter.Default`), "+
		"and supports **%s**.\n\n", karpenter.Default, karpenter.Range())
	b.WriteString("| from | Kubernetes | acts on, besides spot, rebalance, state change and scheduled change | controller policy adds |\n|---|---|---|---|\n")
	rows := karpenter.Minors()
	for _, c := range karpenter.Matrix() {
		if !slices.ContainsFunc(rows, func(v karpenter.Version) bool { return v.Compare(c.From) == 0 }) {
			rows = append(rows, c.From)
		}
	}
	slices.SortFunc(rows, karpenter.Version.Compare)
	var before map[string]bool
	for _, v := range rows {
		k8s, _ := v.Kubernetes()
		var acts []string
		for _, t := range contract.EventTypes {
			if karpenter.Acts(v, t.Kind) && !karpenter.Acts(karpenter.Oldest, t.Kind) {
				acts = append(acts, "`"+string(t.Kind)+"`")
			}
		}
		now := grants(v)
		var adds []string
		for _, a := range slices.Sorted(maps.Keys(now)) {
			if before != nil && !before[a] {
				adds = append(adds, "`"+a+"`")
			}
		}
		if before == nil {
			adds = []string{"its getting-started template's policies"}
		}
		fmt.Fprintf(&b, "| %s | 1.%d – 1.%d | %s | %s |\n", v, k8s.Min, k8s.Max, orDash(acts), orDash(adds))
		before = now
	}
	return b.String()
}

// grants are the action and resource pairs the controller policy grants for Karpenter v, as "action on resource
// type" for resources of a type the previous version was not granted the action on.
func grants(v karpenter.Version) map[string]bool {
	env := awsenv.Env{Partition: "aws", Region: "us-east-1", Account: "123456789012", Principals: map[string]string{"ec2": "ec2.amazonaws.com"}}
	doc := cluster.ControllerPolicy(env, "c", "arn:aws:iam::123456789012:role/n", "arn:aws:sqs:us-east-1:123456789012:q", v)
	out := map[string]bool{}
	for _, s := range doc.Statement {
		for _, a := range s.Action {
			for _, r := range s.Resource {
				out[a+" on "+resourceType(r)] = true
			}
		}
	}
	return out
}

// resourceType is an ARN's resource type ("placement-group/*" for arn:aws:ec2:...:placement-group/*), "*" for *.
func resourceType(arn string) string {
	if arn == "*" {
		return "*"
	}
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return arn
	}
	return parts[2] + ":" + parts[5]
}

func orDash(xs []string) string {
	if len(xs) == 0 {
		return "–"
	}
	return strings.Join(xs, ", ")
}

// KarpenterSupport is Karpenter's support policy as router/karpenter keeps it: each line the bus supports, when it
// was released, its kind, when its support ends and the patch the bus is tested against. No "supported now"
// column: the preview judges that on the day it runs.
func KarpenterSupport() string {
	var b strings.Builder
	b.WriteString("| line | released | kind | supported until | tested patch |\n|---|---|---|---|---|\n")
	ls := karpenter.Lines()
	for i := len(ls) - 1; i >= 0; i-- {
		l := ls[i]
		kind, until := "regular", fmt.Sprintf("%d.%d.0 is published", l.Major, l.Minor+1)
		if l.LTS {
			kind = "**LTS**"
		}
		if end, ok := l.End(); ok {
			until = end.Format(time.DateOnly)
			if !l.LTS {
				until += " (" + fmt.Sprintf("%d.%d.0", ls[i+1].Major, ls[i+1].Minor) + " published)"
			}
		}
		tested := "–"
		if l.Tested != (karpenter.Version{}) {
			tested = l.Tested.String()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", l, l.Released.Format(time.DateOnly), kind, until, tested)
	}
	return b.String()
}
