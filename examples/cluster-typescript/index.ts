// A cluster team creates its EKS cluster and joins it to the platform's bus in one `pulumi up`, from its own stack,
// in its own account.
//
// Every value the component needs from elsewhere is an output, never copied by hand: the hub's bus name and account
// through a StackReference to the hub's stack (examples/hub-typescript), the cluster's name from pulumi-eks, the
// alarm topic's ARN from the topic this program creates. The component's checks of the cluster (ACTIVE, a Kubernetes
// version Karpenter runs on) wait for the update, where the cluster exists: the preview says so, once
// (docs/package.md, "Outputs as arguments"). Nothing of the hub's deploy role is needed: the hub admits the
// organization's accounts by their organization.
// In a copy of this directory, `pulumi install` installs the package of Pulumi.yaml's packages entry (what
// `pulumi package add` writes there, docs/package.md), then `pulumi stack init`, `pulumi config set` and `pulumi up`.
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";
import * as eks from "@pulumi/eks";
import * as kib from "@karpenter-interruption-bus/pulumi";

const config = new pulumi.Config();

// The hub's stack, deployed first: <organization>/<project>/<stack>.
const hub = new pulumi.StackReference(config.require("hubStack"));

const cluster = new eks.Cluster("payments-eks", {
    name: "payments",
    vpcId: config.require("vpcId"),
    privateSubnetIds: config.requireObject<string[]>("privateSubnetIds"),
    authenticationMode: eks.AuthenticationMode.Api,
    version: "1.33",
});

const ops = new aws.sns.Topic("ops");

const payments = new kib.ClusterInterruption("payments", {
    busName: hub.requireOutput("busName"),
    hubAccountId: hub.requireOutput("account"),
    clusterName: cluster.eksCluster.name,
    mode: kib.Mode.Install,
    identity: kib.Identity.PodIdentity,
    karpenter: { version: "1.15.1", namespace: "karpenter" },
    heartbeatRate: hub.requireOutput("heartbeatRate"),
    heartbeatAlarmActions: [ops.arn],
    // The account is outside the hub's StackSet's units: declare its member baseline here, once per account.
    memberBaseline: config.getBoolean("memberBaseline") ?? false,
    ensureSpotServiceLinkedRole: true,
});

export const clusterName = cluster.eksCluster.name;
export const queueName = payments.queueName;
export const nodeRoleName = payments.nodeRoleName;
export const heartbeatAlarmArn = payments.heartbeatAlarmArn;
