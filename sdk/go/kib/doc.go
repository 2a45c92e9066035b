// One EC2 interruption bus per region for a fleet of EKS clusters running Karpenter: shared EventBridge rules, a central queue and a router Lambda forwarding each event to the queue of the cluster that owns the instance.
package kib
