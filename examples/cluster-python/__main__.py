"""A cluster team joins its cluster to the platform's bus from its own stack, in its own account.

It needs only what the hub's stack exports (busName, account, heartbeatRate), and nothing of the hub's deploy
role: the hub admits the organization's accounts by their organization, so it changes nothing for this cluster.
Add the package first (docs/package.md):
    pulumi package add github.com/karpenter-interruption-bus/karpenter-interruption-bus.git/provider@<tag>
"""

import pulumi
import karpenter_interruption_bus as kib

config = pulumi.Config()

# The hub's stack, deployed first (<organization>/<project>/<stack>): its outputs are this program's inputs, never
# copied by hand.
hub = pulumi.StackReference(config.require("hubStack"))

payments = kib.ClusterInterruption(
    "payments",
    bus_name=hub.require_output("busName"),
    hub_account_id=hub.require_output("account"),
    cluster_name="payments",
    mode=kib.Mode.INSTALL,
    identity=kib.Identity.POD_IDENTITY,
    karpenter=kib.KarpenterArgs(version="1.15.1", namespace="karpenter"),
    heartbeat_rate=hub.require_output("heartbeatRate"),
    heartbeat_alarm_actions=[config.require("alarmTopicArn")],
    # The account is outside the hub's StackSet's units: declare its member baseline here, once per account.
    member_baseline=config.get_bool("memberBaseline") or False,
    ensure_spot_service_linked_role=True,
)

pulumi.export("queueName", payments.queue_name)
pulumi.export("nodeRoleName", payments.node_role_name)
pulumi.export("heartbeatAlarmArn", payments.heartbeat_alarm_arn)
