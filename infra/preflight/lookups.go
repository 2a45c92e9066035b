package preflight

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/eks"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/spotrole"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
)

// PodIdentityAgent is the EKS add-on that EKS Pod Identity needs on the cluster.
const PodIdentityAgent = "eks-pod-identity-agent"

// IRSAAudience is the audience Karpenter's service account token is issued for, which the OIDC provider must
// list (IRSATrust checks it too).
const IRSAAudience = "sts.amazonaws.com"

// Cluster is what the lookups found of an existing EKS cluster.
type Cluster struct {
	ARN, Endpoint, CertificateAuthority, Version, OIDCIssuer string
}

// Report is what the lookups found, for the program to declare with.
type Report struct {
	// Clusters are the clusters of install and existing-role entries, by name.
	Clusters map[string]Cluster
	// SpotServiceLinkedRole tells, for each account where the stack installs Karpenter, whether the EC2 Spot
	// service-linked role exists there now.
	SpotServiceLinkedRole map[string]bool
	// Retained are the clusters whose Karpenter the stack installs, that its last update did not declare (or
	// declared without finishing their adoption: Last.Adopting), and whose controller role exists: what
	// an earlier deployment retained on delete (a cluster removed, or the stack destroyed), to adopt. Each has the ID
	// of its pod identity association ("" with IRSA).
	Retained map[string]string
	// Pending are the clusters a preview could not look up, their name or the resource they come from not there
	// yet (Unknowns): each has a stand-in entry in Clusters, whose values hold a mark, and the update looks them up.
	Pending map[string]bool
}

// Unknowns are what a component's preview does not know yet: the values standing for its inputs unknown there
// (Marks), and the known values that come from a resource of the program (FromResource), which this update may
// create. A lookup of the one is not made, of the other is made and, finding nothing, waits for the update; only
// at a preview. The zero value: everything is known.
type Unknowns struct {
	Marks        standin.Marks
	FromResource func(value string) bool
	// Say tells the preview of a lookup that waits for the update though its value is known (nil: nobody).
	Say func(msg string)
}

// say tells msg, when someone listens.
func (u Unknowns) say(msg string) {
	if u.Say != nil {
		u.Say(msg)
	}
}

// waits says whether, at this preview, a lookup of value waits for the update: value stands for an unknown, or,
// found is false and value comes from a resource of the program.
func (u Unknowns) waits(dryRun bool, value string, found bool) bool {
	if !dryRun {
		return false
	}
	return u.Marks.Holds(value) || !found && u.FromResource != nil && u.FromResource(value)
}

// standIn is the entry of a cluster whose lookup waits: its values hold a mark, so what is made of them is unknown.
func (u Unknowns) standIn() Cluster {
	m := u.Marks.Text
	return Cluster{ARN: m, Endpoint: "https://" + m, CertificateAuthority: m, OIDCIssuer: "https://" + m}
}

// Error lists every problem found, one per line.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	return fmt.Sprintf("preflight checks failed before anything was declared in AWS (%d problems):\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// lookups looks at what the stack's clusters need to exist in AWS and that no resource of the stack creates: the
// EKS cluster of each install and existing-role entry, in its account and region; for install, a Kubernetes version
// the entry's Karpenter runs on, access entries enabled, the EKS Pod Identity agent (pod-identity) or the cluster's
// own IAM OIDC provider (irsa); and, in every account where the stack installs Karpenter, whether the EC2 Spot
// service-linked role exists. invoke gives, for each account of the stack, the options that reach it (a member's
// provider; none for the stack's own). Each missing piece is one problem naming the cluster, what is missing and the
// fix; the error is a *Error listing them all, during preview and update alike (lookups run in both), so a first
// pulumi up fails in seconds instead of halfway.
func lookups(ctx *pulumi.Context, cfg config.Config, region string, invoke map[string][]pulumi.InvokeOption, last Last, u Unknowns) (Report, error) {
	r := Report{Clusters: map[string]Cluster{}, SpotServiceLinkedRole: map[string]bool{}, Retained: map[string]string{}, Pending: map[string]bool{}}
	var problems []string
	where := func(i int) string {
		cl := cfg.Clusters[i]
		return fmt.Sprintf("clusters[%d] (%s, account %s, %s)", i, cl.Name, cl.Account, region)
	}
	names := map[string][]string{} // account -> its EKS clusters, listed once
	var unlisted []string          // accounts whose clusters could not be listed
	for i, cl := range cfg.Clusters {
		if cl.Mode == config.ModeCreate {
			continue // the stack creates it
		}
		opts := invoke[cl.Account]
		if u.waits(ctx.DryRun(), cl.Name, true) {
			r.Clusters[cl.Name], r.Pending[cl.Name] = u.standIn(), true
			continue
		}
		listed, ok := names[cl.Account]
		if !ok {
			res, err := eks.GetClusters(ctx, opts...)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: listing the EKS clusters of account %s failed: %v. Fix: let the "+
					"deploying role call eks:ListClusters there", where(i), cl.Account, err))
				unlisted = append(unlisted, cl.Account)
			}
			if res != nil {
				listed = res.Names
			}
			names[cl.Account] = listed
		}
		if slices.Contains(unlisted, cl.Account) {
			continue // reported once, above
		}
		if !slices.Contains(listed, cl.Name) && u.waits(ctx.DryRun(), cl.Name, false) {
			r.Clusters[cl.Name], r.Pending[cl.Name] = u.standIn(), true // the update may create it
			u.say(fmt.Sprintf("no EKS cluster named %s exists at this preview, and its name comes from a resource of the program, "+
				"which this update may create: the update looks the cluster up and checks it before the cluster's first resource; this "+
				"preview shows the cluster's resources, what the lookup finds (its endpoint) unknown", cl.Name))
			continue
		}
		if !slices.Contains(listed, cl.Name) {
			if _, deployed := last.Deployed[cl.Name]; deployed {
				// Decommissioned: deleted before its entry was removed. Removing the entry is all it takes: its release
				// is retained on delete, so the update asks nothing of the API server that went with it.
				problems = append(problems, fmt.Sprintf("%s: no EKS cluster named %s exists there any more, and the last update deployed it: "+
					"if it was deleted, remove its entry (clusters[%d]) and run pulumi up, which deletes its queue as for any removed cluster "+
					"and forgets its Karpenter release without asking the deleted cluster (docs/deploying.md, \"Clusters out of reach\"); "+
					"else correct the entry's name or its account", where(i), cl.Name, i))
				continue
			}
			fix := fmt.Sprintf("correct the entry's name or its account (clusters[%d].account)", i)
			if !cfg.IsMember(cl.Account) {
				fix += ", or give it mode create to have the stack create it"
			}
			problems = append(problems, fmt.Sprintf("%s: no EKS cluster named %s exists there. Fix: %s", where(i), cl.Name, fix))
			continue
		}
		c, err := eks.LookupCluster(ctx, &eks.LookupClusterArgs{Name: cl.Name}, opts...)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: describing the cluster failed: %v. Fix: let the deploying role call "+
				"eks:DescribeCluster on it", where(i), err))
			continue
		}
		found := Cluster{ARN: c.Arn, Endpoint: c.Endpoint, Version: c.Version}
		if len(c.CertificateAuthorities) > 0 {
			found.CertificateAuthority = c.CertificateAuthorities[0].Data
		}
		if len(c.Identities) > 0 && len(c.Identities[0].Oidcs) > 0 {
			found.OIDCIssuer = c.Identities[0].Oidcs[0].Issuer
		}
		r.Clusters[cl.Name] = found
		if cl.Mode != config.ModeInstall {
			continue
		}
		problems = append(problems, installable(ctx, cl, c, found, where(i), opts, u)...)
	}
	for i, cl := range cfg.Clusters {
		if _, deployed := last.Deployed[cl.Name]; deployed && !last.Adopting[cl.Name] || last.Deployed == nil || !cl.Mode.InstallsKarpenter() {
			continue
		}
		name := cluster.ControllerRoleName(cl.Name, region)
		held, err := roleExists(ctx, name, invoke[cl.Account])
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: looking for the controller role %s failed: %v. Fix: let the deploying "+
				"role call iam:ListRoles there", where(i), name, err))
			continue
		case !held:
			continue
		}
		assoc := cmp.Or(cl.Karpenter.PodIdentityAssociationID, last.Retained[cl.Name])
		if cl.Mode == config.ModeInstall && cl.Identity == config.IdentityPodIdentity && assoc == "" {
			problems = append(problems, fmt.Sprintf("%s: what an earlier deployment of the cluster retained on delete exists (its "+
				"controller role %s among it), and the stack adopts it, but it does not know the ID of the pod identity association "+
				"that deployment left, which it must adopt too (EKS holds one per service account). Fix: pulumi config set --path "+
				"'clusters[%d].karpenter.podIdentityAssociationId' \"$(aws eks list-pod-identity-associations --cluster-name %s "+
				"--namespace %s --service-account %s --query 'associations[0].associationId' --output text)\" (docs/clusters.md, "+
				"\"Adding a cluster back, or deploying again after destroy\")", where(i), name, i, cl.Name, cl.Karpenter.Namespace,
				cl.Karpenter.ServiceAccount))
			continue
		}
		r.Retained[cl.Name] = assoc
	}
	for _, account := range InstallAccounts(cfg) {
		exists, err := spotrole.Exists(ctx, invoke[account]...)
		if err != nil {
			problems = append(problems, fmt.Sprintf("account %s: looking for the EC2 Spot service-linked role (%s) failed: %v. "+
				"Fix: let the deploying role call iam:ListRoles there", account, spotrole.RoleName, err))
			continue
		}
		r.SpotServiceLinkedRole[account] = exists
	}
	if len(problems) > 0 {
		return Report{}, &Error{Problems: problems}
	}
	return r, nil
}

// Last is what the stack's last update says of its clusters: those it declared (nil when it is not known, as in
// the component package, which adopts nothing), and, for those it removed that had a pod identity association,
// and those it adopted but could not finish adopting (their Kubernetes API out of reach), that association's ID.
type Last struct {
	Deployed map[string]config.Deployed
	Retained map[string]string
	// Adopting are the clusters the last update declared but could not finish adopting: it kept them in Retained.
	Adopting map[string]bool
}

// roleExists says whether the IAM role name exists in the account opts reach.
func roleExists(ctx *pulumi.Context, name string, opts []pulumi.InvokeOption) (bool, error) {
	re := "^" + regexp.QuoteMeta(name) + "$"
	res, err := iam.GetRoles(ctx, &iam.GetRolesArgs{NameRegex: &re}, opts...)
	if err != nil {
		return false, err
	}
	return slices.Contains(res.Names, name), nil
}

// installable lists what keeps the stack from installing Karpenter on the existing cluster c.
func installable(ctx *pulumi.Context, cl config.Cluster, c *eks.LookupClusterResult, found Cluster, where string, opts []pulumi.InvokeOption, u Unknowns) []string {
	var problems []string
	if c.Status != "ACTIVE" && c.Status != "UPDATING" {
		problems = append(problems, fmt.Sprintf("%s: the cluster is %s, not ACTIVE. Fix: wait until it is active, or remove "+
			"the entry", where, c.Status))
	}
	if v, err := karpenter.Parse(cl.Karpenter.Version); err == nil {
		if k8s, ok := v.Kubernetes(); ok {
			if in, err := k8s.Contains(c.Version); err != nil || !in {
				problems = append(problems, fmt.Sprintf("%s: it runs Kubernetes %s, which Karpenter %s does not run on (%s). "+
					"Fix: set karpenter.version to a release that runs on %s (docs/clusters.md, \"Karpenter versions\"), or upgrade the "+
					"cluster", where, c.Version, v, k8s, c.Version))
			}
		}
	}
	if len(c.AccessConfigs) == 0 || !strings.HasPrefix(c.AccessConfigs[0].AuthenticationMode, "API") {
		mode := ""
		if len(c.AccessConfigs) > 0 {
			mode = c.AccessConfigs[0].AuthenticationMode
		}
		problems = append(problems, fmt.Sprintf("%s: its authentication mode is %q, without access entries, which the stack "+
			"creates for Karpenter's nodes. Fix: aws eks update-cluster-config --name %s --access-config "+
			"authenticationMode=API_AND_CONFIG_MAP", where, mode, cl.Name))
	}
	switch cl.Identity {
	case config.IdentityPodIdentity:
		if _, err := eks.LookupAddon(ctx, &eks.LookupAddonArgs{ClusterName: cl.Name, AddonName: PodIdentityAgent}, opts...); err != nil {
			problems = append(problems, fmt.Sprintf("%s: the %s add-on was not found (%v), and EKS Pod Identity, the entry's "+
				"identity, needs it. Fix: aws eks create-addon --cluster-name %s --addon-name %s, or set identity: irsa",
				where, PodIdentityAgent, err, cl.Name, PodIdentityAgent))
		}
	case config.IdentityIRSA:
		problems = append(problems, oidcProvider(ctx, cl, found, where, opts, u)...)
	}
	return problems
}

// oidcProvider checks that the entry's OIDC provider exists and is the cluster's: its URL is the cluster's
// issuer, and it lists the audience of Karpenter's token.
func oidcProvider(ctx *pulumi.Context, cl config.Cluster, found Cluster, where string, opts []pulumi.InvokeOption, u Unknowns) []string {
	if u.waits(ctx.DryRun(), cl.OIDCProviderARN, true) {
		return nil
	}
	fix := fmt.Sprintf("Fix: eksctl utils associate-iam-oidc-provider --cluster %s --approve, and set oidcProviderArn to "+
		"the provider whose URL is the cluster's issuer (aws eks describe-cluster --name %s --query cluster.identity.oidc.issuer)",
		cl.Name, cl.Name)
	p, err := iam.LookupOpenIdConnectProvider(ctx, &iam.LookupOpenIdConnectProviderArgs{Arn: &cl.OIDCProviderARN}, opts...)
	if err != nil && u.waits(ctx.DryRun(), cl.OIDCProviderARN, false) {
		u.say(fmt.Sprintf("the OIDC provider %s was not found at this preview, and it comes from a resource of the program, which "+
			"this update may create: the update checks it before the cluster's first resource", cl.OIDCProviderARN))
		return nil
	}
	if err != nil {
		return []string{fmt.Sprintf("%s: the OIDC provider %s was not found (%v). %s", where, cl.OIDCProviderARN, err, fix)}
	}
	var problems []string
	if issuer := strings.TrimPrefix(found.OIDCIssuer, "https://"); p.Url != issuer {
		problems = append(problems, fmt.Sprintf("%s: the OIDC provider %s is for %s, not for the cluster's issuer %s. %s",
			where, cl.OIDCProviderARN, p.Url, issuer, fix))
	}
	if !slices.Contains(p.ClientIdLists, IRSAAudience) {
		problems = append(problems, fmt.Sprintf("%s: the OIDC provider %s does not list the audience %s, which IRSA tokens "+
			"carry. Fix: aws iam add-client-id-to-open-id-connect-provider --open-id-connect-provider-arn %s --client-id %s",
			where, cl.OIDCProviderARN, IRSAAudience, cl.OIDCProviderARN, IRSAAudience))
	}
	return problems
}

// InstallAccounts are the accounts where the stack installs Karpenter (install and create entries), sorted.
func InstallAccounts(cfg config.Config) []string {
	var out []string
	for _, cl := range cfg.Clusters {
		if cl.Mode.InstallsKarpenter() && !slices.Contains(out, cl.Account) {
			out = append(out, cl.Account)
		}
	}
	slices.Sort(out)
	return out
}
