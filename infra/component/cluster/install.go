package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/eks"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
)

// Chart is Karpenter's Helm chart.
const Chart = "oci://public.ecr.aws/karpenter/karpenter"

// nodePolicies are the AWS managed policies of Karpenter's node role, as in its getting-started template (nodes
// only pull images: AmazonEC2ContainerRegistryPullOnly, not ReadOnly).
var nodePolicies = []string{"AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryPullOnly", "AmazonSSMManagedInstanceCore"}

// target is what installing Karpenter needs of its EKS cluster.
type target struct {
	// kubeconfig reaches the cluster's API.
	kubeconfig pulumi.StringOutput
	// oidcProviderARN is the cluster's IAM OIDC provider, for IRSA: the trust's principal, and, derived from
	// it, its condition keys.
	oidcProviderARN pulumi.StringOutput
	// ready orders the installation after the cluster exists (create mode).
	ready []pulumi.Resource
	// after orders the release after the rest of the update (Args.After).
	after []pulumi.Resource
}

// existingCluster is the target of install mode: a cluster that exists, as found (e), or read with a lookup.
func (s scope) existingCluster(cl config.Cluster, e *Existing) target {
	t := target{oidcProviderARN: pulumi.String(cl.OIDCProviderARN).ToStringOutput()}
	if e != nil {
		t.kubeconfig = Kubeconfig(cl.Name, s.env.Region, s.deployRole, pulumi.String(e.Endpoint).ToStringOutput(),
			pulumi.String(e.CertificateAuthority).ToStringOutput())
		return t
	}
	c := eks.LookupClusterOutput(s.ctx, eks.LookupClusterOutputArgs{Name: pulumi.String(cl.Name)}, s.parent)
	t.kubeconfig = Kubeconfig(cl.Name, s.env.Region, s.deployRole, c.Endpoint(), c.CertificateAuthorities().Index(pulumi.Int(0)).Data())
	return t
}

// install wires a Karpenter installed by this stack on t: node role and access entry, controller role with its
// identity, and the Helm release. The release and the identities it runs with are retained on delete: taking a
// cluster off the bus never uninstalls Karpenter from a live cluster (docs/clusters.md, "Removing a cluster").
func (s scope) install(cl config.Cluster, t target, queueName pulumi.StringOutput, queueARN string) (wiring, error) {
	env := s.env
	version, err := karpenter.Parse(cl.Karpenter.Version)
	if err != nil {
		return wiring{}, fmt.Errorf("cluster %s: %w", cl.Name, err) // config validation rules this out
	}
	// Karpenter's own support policy, told where the version is chosen: a preview names the end date and the
	// supported lines' newest patches (docs/clusters.md, "Karpenter support").
	if w := karpenter.SupportWarning(version, s.today); w != "" {
		if err := s.ctx.Log.Warn(fmt.Sprintf("cluster %s, karpenter.version %s: %s", cl.Name, cl.Karpenter.Version, w), &pulumi.LogArgs{Resource: s.self}); err != nil {
			return wiring{}, fmt.Errorf("cluster %s: warning of its Karpenter's support: %w", cl.Name, err)
		}
	}
	retain := pulumi.RetainOnDelete(true)

	nodeName, controllerName := NodeRoleName(cl.Name, env.Region), ControllerRoleName(cl.Name, env.Region)
	nodeRole, err := iam.NewRole(s.ctx, s.name("node-role"), &iam.RoleArgs{
		Name:             pulumi.String(nodeName),
		Description:      pulumi.String("Nodes Karpenter launches for cluster " + cl.Name),
		AssumeRolePolicy: pulumi.String(policy.AssumableBy(env.Principal("ec2"), nil).JSON()),
		Tags:             s.tags,
	}, append([]pulumi.ResourceOption{s.parent, retain}, s.adopting(nodeName)...)...)
	if err != nil {
		return wiring{}, fmt.Errorf("declaring the node role of %s: %w", cl.Name, err)
	}
	for _, p := range nodePolicies {
		if _, err := iam.NewRolePolicyAttachment(s.ctx, s.name("node-"+p), &iam.RolePolicyAttachmentArgs{
			Role: nodeRole.Name, PolicyArn: pulumi.String(env.AWSManagedPolicyARN(p)),
		}, append([]pulumi.ResourceOption{s.parent, retain}, s.adopting(nodeName+"/"+env.AWSManagedPolicyARN(p))...)...); err != nil {
			return wiring{}, fmt.Errorf("attaching %s to the node role of %s: %w", p, cl.Name, err)
		}
	}
	access, err := eks.NewAccessEntry(s.ctx, s.name("node-access"), &eks.AccessEntryArgs{
		ClusterName: pulumi.String(cl.Name), PrincipalArn: nodeRole.Arn, Type: pulumi.String("EC2_LINUX"), Tags: s.tags,
	}, append([]pulumi.ResourceOption{s.parent, retain, pulumi.DependsOn(t.ready)}, s.adoptingInCluster(cl.Name+":"+env.IAMARN("role/"+nodeName))...)...)
	if err != nil {
		return wiring{}, fmt.Errorf("declaring the node access entry of %s: %w", cl.Name, err)
	}

	controllerRole, err := iam.NewRole(s.ctx, s.name("controller-role"), &iam.RoleArgs{
		Name:             pulumi.String(controllerName),
		Description:      pulumi.String("Karpenter's controller on cluster " + cl.Name),
		AssumeRolePolicy: s.controllerTrust(cl, t),
		Tags:             s.tags,
	}, append([]pulumi.ResourceOption{s.parent, retain}, s.adopting(controllerName)...)...)
	if err != nil {
		return wiring{}, fmt.Errorf("declaring the controller role of %s: %w", cl.Name, err)
	}
	controllerPolicy, err := iam.NewRolePolicy(s.ctx, s.name("controller-policy"), &iam.RolePolicyArgs{
		Name: pulumi.String("karpenter-controller"),
		Role: controllerRole.Name,
		Policy: nodeRole.Arn.ApplyT(func(nodeARN string) string {
			return ControllerPolicy(env, cl.Name, nodeARN, queueARN, version).JSON()
		}).(pulumi.StringOutput),
	}, append([]pulumi.ResourceOption{s.parent, retain}, s.adopting(controllerName+":karpenter-controller")...)...)
	if err != nil {
		return wiring{}, fmt.Errorf("declaring the controller policy of %s: %w", cl.Name, err)
	}
	deps := []pulumi.Resource{controllerPolicy, access}
	association := pulumi.String("").ToStringOutput()
	if cl.Identity == config.IdentityPodIdentity {
		var adoptAssoc []pulumi.ResourceOption
		if s.adopt != nil {
			adoptAssoc = s.adoptingInCluster(cl.Name + "," + s.adopt.PodIdentityAssociationID)
		}
		assoc, err := eks.NewPodIdentityAssociation(s.ctx, s.name("pod-identity"), &eks.PodIdentityAssociationArgs{
			ClusterName: pulumi.String(cl.Name), Namespace: pulumi.String(cl.Karpenter.Namespace),
			ServiceAccount: pulumi.String(cl.Karpenter.ServiceAccount), RoleArn: controllerRole.Arn, Tags: s.tags,
		}, append([]pulumi.ResourceOption{s.parent, retain, pulumi.DependsOn(t.ready)}, adoptAssoc...)...)
		if err != nil {
			return wiring{}, fmt.Errorf("declaring the pod identity association of %s: %w", cl.Name, err)
		}
		deps = append(deps, assoc)
		association = assoc.AssociationId
	}

	// A secret, as the component's kubeconfig output is: pulumi-kubernetes's SDK does not mark its provider's
	// kubeconfig secret, and the checkpoint would hold it in plaintext (the engine test reads the checkpoint).
	// Made secret once known: the SDK's mocks cannot carry a secret whose value is unknown.
	kubeconfig := t.kubeconfig.ApplyT(func(k string) pulumi.StringOutput {
		return pulumi.ToSecret(pulumi.String(k)).(pulumi.StringOutput)
	}).(pulumi.StringOutput)
	// The provider hangs from the stack, not from the component (its parent before shards, which the alias keeps, so
	// an existing stack sees the same provider): pulumi state move copies a moved resource's providers into the
	// destination ahead of the resources, so a provider under the moved component would come before its parent
	// there, which the CLI refuses as a broken snapshot (docs/deploying.md, "One stack or shards").
	aliases := []pulumi.Alias{{Parent: s.self}}
	if s.former != "" { // named after the cluster before components were named after their own
		aliases = append(aliases, pulumi.Alias{Name: pulumi.String(KubernetesProviderName(s.former))},
			pulumi.Alias{Name: pulumi.String(KubernetesProviderName(s.former)), Parent: s.self})
	}
	k8s, err := kubernetes.NewProvider(s.ctx, KubernetesProviderName(s.logical), &kubernetes.ProviderArgs{
		Kubeconfig: kubeconfig,
		// Each request to the API server, client-go's discovery's included, within KubernetesRequestTimeout, not the
		// provider's default 32 s: a cluster whose endpoint never answers costs a preview two of them. The same for
		// every cluster, in reach or not: a provider's configuration changed only while a cluster is out of reach would
		// be a provider update shown then, and again when it answers (its DiffConfig ignores no key).
		KubeClientSettings: &kubernetes.KubeClientSettingsArgs{Timeout: pulumi.Int(KubernetesRequestTimeout)},
	},
		pulumi.Aliases(aliases), pulumi.DependsOn(t.ready))
	if err != nil {
		return wiring{}, fmt.Errorf("declaring the Kubernetes provider of %s: %w", cl.Name, err)
	}
	releaseOpts := append([]pulumi.ResourceOption{s.parent, pulumi.Provider(k8s), retain, pulumi.DependsOn(append(deps, t.after...))},
		s.adoptingInCluster(cl.Karpenter.Namespace+"/karpenter")...)
	if cl.Karpenter.ReplaceRelease {
		// The old release was uninstalled by hand (config.CheckReleases): forget it before installing anew.
		releaseOpts = append(releaseOpts, pulumi.DeleteBeforeReplace(true))
	}
	values := Values(cl, queueName, controllerRole.Arn)
	if err := release(s.ctx, ReleaseName(s.logical), &releaseArgs{
		Name:      pulumi.String("karpenter"),
		Chart:     pulumi.String(Chart),
		Version:   pulumi.String(cl.Karpenter.Version),
		Namespace: pulumi.String(cl.Karpenter.Namespace),
		// Karpenter's chart has no Namespace of its own: Helm creates the release's, as --create-namespace does.
		CreateNamespace: pulumi.Bool(true),
		Values:          values,
	}, releaseOpts...); err != nil {
		return wiring{}, fmt.Errorf("declaring the Karpenter release of %s: %w", cl.Name, err)
	}
	return wiring{
		controllerRoleARN: controllerRole.Arn, nodeRoleName: nodeRole.Name, association: association,
		releaseDigest: ReleaseDigest(cl.Karpenter.Version, cl.Karpenter.Namespace, values),
	}, nil
}

// KubernetesRequestTimeout bounds, in seconds, each request the Kubernetes provider makes of a cluster's API server
// (its kubeClientSettings.timeout, whole seconds): a silent API server costs a preview two of them, which the
// provider's Configure makes one after the other (GET /version, then GET /openapi/v2), and the engine configures the
// providers one at a time. 2 s holds what an API server that answers takes: the OpenAPI v2 document of a large
// cluster, fetched from a distant runner, is measured within it (docs/performance.md, "Clusters out of reach"); Helm
// waits for a release's readiness by polling, each poll a request of its own.
const KubernetesRequestTimeout = 2

// ReleaseDigest digests what the stack asks of a cluster's Karpenter release: the chart, its version, the namespace
// and the values, once known. Two updates asking the same digest ask the same
// release; the program records it (the clusters output) to say, of a cluster out of reach, whether an update changes
// its release.
func ReleaseDigest(version, namespace string, values pulumi.MapOutput) pulumi.StringOutput {
	return values.ApplyT(func(v map[string]any) (string, error) {
		b, err := json.Marshal(map[string]any{"chart": Chart, "version": version, "namespace": namespace, "values": v})
		if err != nil {
			return "", fmt.Errorf("digesting the Karpenter release: %w", err)
		}
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:]), nil
	}).(pulumi.StringOutput)
}

// controllerTrust lets only Karpenter's service account take the controller role: through EKS Pod Identity, or
// through the cluster's OIDC provider (IRSA).
func (s scope) controllerTrust(cl config.Cluster, t target) pulumi.StringOutput {
	if cl.Identity == config.IdentityPodIdentity {
		return pulumi.String(PodIdentityTrust(s.env, cl.Name, cl.Karpenter.Namespace, cl.Karpenter.ServiceAccount).JSON()).ToStringOutput()
	}
	return t.oidcProviderARN.ApplyT(func(providerARN string) string {
		return IRSATrust(providerARN, cl.Karpenter.Namespace, cl.Karpenter.ServiceAccount).JSON()
	}).(pulumi.StringOutput)
}

// PodIdentityTrust lets EKS Pod Identity assume the role for one service account of one cluster of this
// account: the session tags EKS Pod Identity sets (EKS user guide, "Create IAM role with trust policy required
// by EKS Pod Identity") must name the cluster, the namespace and the service account.
func PodIdentityTrust(env awsenv.Env, cluster, namespace, serviceAccount string) policy.Document {
	return policy.AssumableBy(env.Principal("pods.eks"), map[string]map[string]any{"StringEquals": {
		"aws:SourceAccount":                         env.Account,
		"aws:RequestTag/eks-cluster-arn":            env.ARN("eks", "cluster/"+cluster),
		"aws:RequestTag/kubernetes-namespace":       namespace,
		"aws:RequestTag/kubernetes-service-account": serviceAccount,
	}}, "sts:AssumeRole", "sts:TagSession")
}

// IRSATrust lets the service account namespace/serviceAccount assume a role through the OIDC provider
// providerARN. The condition keys are the provider's issuer, taken from its ARN, so the two cannot disagree.
func IRSATrust(providerARN, namespace, serviceAccount string) policy.Document {
	_, host, _ := strings.Cut(providerARN, ":oidc-provider/")
	return policy.New(policy.Statement{
		Effect: "Allow", Principal: map[string]string{"Federated": providerARN}, Action: []string{"sts:AssumeRoleWithWebIdentity"},
		Condition: map[string]map[string]any{"StringEquals": {
			host + ":sub": "system:serviceaccount:" + namespace + ":" + serviceAccount,
			host + ":aud": "sts.amazonaws.com",
		}},
	})
}

// Values are the chart values: the configured extras, then what the bus sets (which they may not override):
// the cluster, its queue, the service account and, for IRSA, its role annotation.
func Values(cl config.Cluster, queueName, controllerRoleARN pulumi.StringInput) pulumi.MapOutput {
	return pulumi.All(queueName, controllerRoleARN).ApplyT(func(v []any) map[string]any {
		out := deepCopy(cl.Karpenter.Values)
		// An object given that is not one (the configuration refuses it) is the component's stand-in for an object
		// unknown at a preview: kept as it is, so that the preview shows it unknown rather than the bus's keys alone.
		settings, ok := config.ObjectAt(out, "settings")
		if !ok {
			return out
		}
		settings["clusterName"] = cl.Name
		settings["interruptionQueue"] = v[0].(string)
		out["settings"] = settings
		sa, ok := config.ObjectAt(out, "serviceAccount")
		if !ok {
			return out
		}
		sa["create"] = true
		sa["name"] = cl.Karpenter.ServiceAccount
		if cl.Identity == config.IdentityIRSA {
			ann, ok := config.ObjectAt(sa, "annotations")
			if !ok {
				return out
			}
			ann["eks.amazonaws.com/role-arn"] = v[1].(string)
			sa["annotations"] = ann
		}
		out["serviceAccount"] = sa
		return out
	}).(pulumi.MapOutput)
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	b, _ := json.Marshal(m) // plain configuration data
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}
