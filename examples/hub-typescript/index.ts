// A hub declared from a platform team's TypeScript program: the Bus for the organization, and the clusters of the
// hub's own account joined to it. Add the package first (docs/package.md):
//   pulumi package add github.com/karpenter-interruption-bus/karpenter-interruption-bus.git/provider@<tag>
import * as pulumi from "@pulumi/pulumi";
import * as kib from "@karpenter-interruption-bus/pulumi";

const config = new pulumi.Config();

// The bus's name and heartbeat rate: every cluster joins by them, here (or take them as the Bus's outputs,
// bus.busName and bus.heartbeatRate) and in other stacks (through a StackReference to this one).
export const busName = "kib-prod";
export const heartbeatRate = "5m";

const bus = new kib.Bus("hub", {
    namePrefix: busName,
    // Every account of the organization may join; the units' accounts get the member baseline from a StackSet.
    organization: {
        id: config.require("organizationId"),
        memberOUs: config.requireObject<string[]>("memberOUs"),
        callAs: kib.CallAs.DelegatedAdmin,
    },
    router: { maximumConcurrency: 10, logLevel: "info" },
    alarms: { topicArn: config.get("alarmTopicArn") },
    heartbeat: { enabled: true, rate: heartbeatRate },
    // Who may read the quarantine and send refused messages back (make requeue); without it, nobody may.
    redrive: { principals: config.requireObject<string[]>("redrivePrincipals") },
    dashboard: true,
    clusterNames: ["blue", "green"],
    tags: { team: "platform" },
});

// A cluster of the hub's account on which the component installs Karpenter, reading its own queue.
const blue = new kib.ClusterInterruption("blue", {
    busName,
    clusterName: "blue",
    mode: kib.Mode.Install,
    identity: kib.Identity.PodIdentity,
    karpenter: { version: "1.15.1", namespace: "karpenter", values: { replicas: 2 } },
    heartbeatRate,
    ensureSpotServiceLinkedRole: true, // once per account
}, { dependsOn: [bus] }); // its heartbeat needs the Bus's shared part

// A cluster whose Karpenter another team manages: the component attaches the interruption policy to its role,
// and chartValue says what that team's chart must be given.
const green = new kib.ClusterInterruption("green", {
    busName,
    clusterName: "green",
    mode: kib.Mode.ExistingRole,
    controllerRoleName: "KarpenterController-green",
    heartbeatRate,
}, { dependsOn: [bus] });

// What cluster teams in other accounts join with, read through a StackReference to this stack
// (examples/cluster-typescript, examples/cluster-python, examples/cluster-yaml).
export const account = bus.account;
export const region = bus.region;
export const routerRoleArn = bus.routerRoleArn;
export const blueQueue = blue.queueName;
export const blueNodeRole = blue.nodeRoleName;
export const greenChartValue = green.chartValue;
