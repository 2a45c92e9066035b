// A cluster team joins its cluster to the platform's bus from its own stack, in its own account.
//
// It needs only what the hub's stack exports (busName, account, heartbeatRate), and nothing of the hub's deploy
// role: the hub admits the organization's accounts by their organization, so it changes nothing for this cluster.
// In a copy of this directory, `pulumi install` installs the package of Pulumi.yaml's packages entry (what
// `pulumi package add` writes there, docs/package.md), then `pulumi stack init`, `pulumi config set` and `pulumi up`.
import * as pulumi from "@pulumi/pulumi";
import * as kib from "@karpenter-interruption-bus/pulumi";

const config = new pulumi.Config();

const payments = new kib.ClusterInterruption("payments", {
    busName: config.require("busName"),
    hubAccountId: config.require("hubAccountId"),
    clusterName: "payments",
    mode: kib.Mode.Install,
    identity: kib.Identity.PodIdentity,
    karpenter: { version: "1.15.1", namespace: "karpenter" },
    heartbeatRate: config.get("heartbeatRate") ?? "5m",
    heartbeatAlarmActions: [config.require("alarmTopicArn")],
    // The account is outside the hub's StackSet's units: declare its member baseline here, once per account.
    memberBaseline: config.getBoolean("memberBaseline") ?? false,
    ensureSpotServiceLinkedRole: true,
});

export const queueName = payments.queueName;
export const nodeRoleName = payments.nodeRoleName;
export const heartbeatAlarmArn = payments.heartbeatAlarmArn;
