package cluster

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/eks"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	helmv3 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/helm/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// Chart is Karpenter's Helm chart.
const Chart = "oci://public.ecr.aws/karpenter/karpenter"

// maxRoleName is IAM's limit.
const maxRoleName = 64

// nodePolicies are the AWS managed policies of Karpenter's node role, as in its getting-started template.
var nodePolicies = []string{"AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly", "AmazonSSMManagedInstanceCore"}

// eksInfo is what the Kubernetes provider and IRSA need of the EKS cluster.
type eksInfo struct {
	endpoint, caData, oidcIssuer, clusterSG pulumi.StringOutput
	// ready orders the installation after the cluster exists (create mode).
	ready []pulumi.Resource
}

// lookupCluster reads an existing cluster, once deps (a cluster created here) exist.
func (d *declarer) lookupCluster(deps []pulumi.Resource) eksInfo {
	c := eks.LookupClusterOutput(d.ctx, eks.LookupClusterOutputArgs{Name: pulumi.String(d.args.Cluster.Name)}, pulumi.DependsOn(deps))
	return eksInfo{
		endpoint:   c.Endpoint(),
		caData:     c.CertificateAuthorities().Index(pulumi.Int(0)).Data(),
		oidcIssuer: c.Identities().Index(pulumi.Int(0)).Oidcs().Index(pulumi.Int(0)).Issuer(),
		clusterSG:  c.VpcConfig().ClusterSecurityGroupId(),
		ready:      deps,
	}
}

// install wires a Karpenter installed by this stack: node role and access entry, controller role with its
// identity, and the Helm release. The release and the identities it runs with are retained on delete: taking a
// cluster off the bus never uninstalls Karpenter from a live cluster (README, "Removing a cluster").
func (d *declarer) install(queue *sqs.Queue, queueARN string) error {
	cl, env := d.args.Cluster, d.args.Env
	var ready []pulumi.Resource
	if cl.Mode == config.ModeCreate {
		created, err := d.createCluster()
		if err != nil {
			return err
		}
		ready = created
	}
	info := d.lookupCluster(ready)
	if cl.Mode == config.ModeCreate {
		if err := d.tagClusterSecurityGroup(info); err != nil {
			return err
		}
	}
	retain := pulumi.RetainOnDelete(true)

	nodeRoleName := queuename.Shorten("KarpenterNode-"+cl.Name, maxRoleName)
	nodeRole, err := iam.NewRole(d.ctx, d.name("node-role"), &iam.RoleArgs{
		Name:             pulumi.String(nodeRoleName),
		Description:      pulumi.String("Nodes Karpenter launches for cluster " + cl.Name),
		AssumeRolePolicy: pulumi.String(policy.AssumableBy(env.Principal("ec2"), nil).JSON()),
		Tags:             d.tags,
	}, d.parent(), retain)
	if err != nil {
		return fmt.Errorf("declaring the node role of %s: %w", cl.Name, err)
	}
	for _, p := range nodePolicies {
		if _, err := iam.NewRolePolicyAttachment(d.ctx, d.name("node-"+p), &iam.RolePolicyAttachmentArgs{
			Role: nodeRole.Name, PolicyArn: pulumi.String("arn:" + env.Partition + ":iam::aws:policy/" + p),
		}, d.parent(), retain); err != nil {
			return fmt.Errorf("attaching %s to the node role of %s: %w", p, cl.Name, err)
		}
	}
	access, err := eks.NewAccessEntry(d.ctx, d.name("node-access"), &eks.AccessEntryArgs{
		ClusterName: pulumi.String(cl.Name), PrincipalArn: nodeRole.Arn, Type: pulumi.String("EC2_LINUX"), Tags: d.tags,
	}, d.parent(), retain, pulumi.DependsOn(ready))
	if err != nil {
		return fmt.Errorf("declaring the node access entry of %s: %w", cl.Name, err)
	}

	trust := d.controllerTrust(info)
	controllerRole, err := iam.NewRole(d.ctx, d.name("controller-role"), &iam.RoleArgs{
		Name:             pulumi.String(queuename.Shorten("KarpenterController-"+cl.Name, maxRoleName)),
		Description:      pulumi.String("Karpenter's controller on cluster " + cl.Name),
		AssumeRolePolicy: trust,
		Tags:             d.tags,
	}, d.parent(), retain)
	if err != nil {
		return fmt.Errorf("declaring the controller role of %s: %w", cl.Name, err)
	}
	controllerPolicy, err := iam.NewRolePolicy(d.ctx, d.name("controller-policy"), &iam.RolePolicyArgs{
		Name: pulumi.String("karpenter-controller"),
		Role: controllerRole.Name,
		Policy: nodeRole.Arn.ApplyT(func(nodeARN string) string {
			return ControllerPolicy(env, cl.Name, nodeARN, queueARN).JSON()
		}).(pulumi.StringOutput),
	}, d.parent(), retain)
	if err != nil {
		return fmt.Errorf("declaring the controller policy of %s: %w", cl.Name, err)
	}
	deps := []pulumi.Resource{controllerPolicy, access}
	if cl.Identity == config.IdentityPodIdentity {
		assoc, err := eks.NewPodIdentityAssociation(d.ctx, d.name("pod-identity"), &eks.PodIdentityAssociationArgs{
			ClusterName: pulumi.String(cl.Name), Namespace: pulumi.String(cl.Karpenter.Namespace),
			ServiceAccount: pulumi.String(cl.Karpenter.ServiceAccount), RoleArn: controllerRole.Arn, Tags: d.tags,
		}, d.parent(), retain, pulumi.DependsOn(ready))
		if err != nil {
			return fmt.Errorf("declaring the pod identity association of %s: %w", cl.Name, err)
		}
		deps = append(deps, assoc)
	}

	k8s, err := kubernetes.NewProvider(d.ctx, d.name("k8s"), &kubernetes.ProviderArgs{
		Kubeconfig: Kubeconfig(cl.Name, env.Region, info.endpoint, info.caData),
	}, d.parent(), pulumi.DependsOn(ready))
	if err != nil {
		return fmt.Errorf("declaring the Kubernetes provider of %s: %w", cl.Name, err)
	}
	if _, err := helmv3.NewRelease(d.ctx, d.name("karpenter"), &helmv3.ReleaseArgs{
		Name:      pulumi.String("karpenter"),
		Chart:     pulumi.String(Chart),
		Version:   pulumi.String(cl.Karpenter.Version),
		Namespace: pulumi.String(cl.Karpenter.Namespace),
		Values:    Values(cl, queue.Name, controllerRole.Arn),
	}, d.parent(), pulumi.Provider(k8s), retain, pulumi.DependsOn(deps)); err != nil {
		return fmt.Errorf("declaring the Karpenter release of %s: %w", cl.Name, err)
	}
	d.comp.ControllerRoleARN = controllerRole.Arn
	d.comp.NodeRoleName = nodeRole.Name
	return nil
}

// controllerTrust lets only Karpenter's service account take the controller role: through EKS Pod Identity, or
// through the cluster's OIDC provider (IRSA).
func (d *declarer) controllerTrust(info eksInfo) pulumi.StringOutput {
	cl, env := d.args.Cluster, d.args.Env
	if cl.Identity == config.IdentityPodIdentity {
		return pulumi.String(policy.AssumableBy(env.Principal("pods.eks"),
			map[string]map[string]any{"StringEquals": {"aws:SourceAccount": env.Account}},
			"sts:AssumeRole", "sts:TagSession").JSON()).ToStringOutput()
	}
	irsa := func(providerARN, issuer string) string {
		host := strings.TrimPrefix(issuer, "https://")
		return policy.New(policy.Statement{
			Effect: "Allow", Principal: map[string]string{"Federated": providerARN}, Action: []string{"sts:AssumeRoleWithWebIdentity"},
			Condition: map[string]map[string]any{"StringEquals": {
				host + ":sub": "system:serviceaccount:" + cl.Karpenter.Namespace + ":" + cl.Karpenter.ServiceAccount,
				host + ":aud": "sts.amazonaws.com",
			}},
		}).JSON()
	}
	if cl.Mode == config.ModeCreate {
		// pulumi-eks made the provider: its ARN follows from the issuer.
		return info.oidcIssuer.ApplyT(func(issuer string) string {
			arn := fmt.Sprintf("arn:%s:iam::%s:oidc-provider/%s", env.Partition, env.Account, strings.TrimPrefix(issuer, "https://"))
			return irsa(arn, issuer)
		}).(pulumi.StringOutput)
	}
	return info.oidcIssuer.ApplyT(func(issuer string) string { return irsa(cl.OIDCProviderARN, issuer) }).(pulumi.StringOutput)
}

// Values are the chart values: the configured extras, then what the bus sets (which they may not override):
// the cluster, its queue, the service account and, for IRSA, its role annotation.
func Values(cl config.Cluster, queueName, controllerRoleARN pulumi.StringInput) pulumi.MapOutput {
	return pulumi.All(queueName, controllerRoleARN).ApplyT(func(v []any) map[string]any {
		out := deepCopy(cl.Karpenter.Values)
		settings, _ := out["settings"].(map[string]any)
		if settings == nil {
			settings = map[string]any{}
		}
		settings["clusterName"] = cl.Name
		settings["interruptionQueue"] = v[0].(string)
		out["settings"] = settings
		sa, _ := out["serviceAccount"].(map[string]any)
		if sa == nil {
			sa = map[string]any{}
		}
		sa["create"] = true
		sa["name"] = cl.Karpenter.ServiceAccount
		if cl.Identity == config.IdentityIRSA {
			ann, _ := sa["annotations"].(map[string]any)
			if ann == nil {
				ann = map[string]any{}
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
